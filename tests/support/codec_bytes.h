// Byte-level helpers for codec tests: find JPEG marker segments, build and patch PNG chunks
// (for files our encoders do not write, such as 2-bit gray or lying headers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace stoker::testing {

// Offset of the first marker segment FF <marker> before the image data (SOS), or -1.
// The segment's length field follows at offset + 2.
ptrdiff_t find_jpeg_segment(std::span<const uint8_t> jpeg, uint8_t marker);

// Sets the image size in a JPEG's SOF0/SOF2 header (no checksum to fix in JPEG).
void patch_jpeg_size(std::vector<uint8_t>* jpeg, uint16_t width, uint16_t height);

// Appends a PNG chunk (length, type, data, CRC) to `png`.
void append_png_chunk(std::vector<uint8_t>* png, std::string_view type, std::span<const uint8_t> data);

// A complete non-interlaced PNG from already packed scanlines (without filter bytes).
std::vector<uint8_t> make_raw_png(int width, int height, int bit_depth, int color_type,
                                  std::span<const uint8_t> packed_rows);

// Sets the width and height in a PNG's IHDR and fixes its CRC.
void patch_png_size(std::vector<uint8_t>* png, uint32_t width, uint32_t height);

}  // namespace stoker::testing
