#include "support/codec_bytes.h"

#include <zlib.h>

#include <stdexcept>

namespace stoker::testing {
namespace {

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

}  // namespace

ptrdiff_t find_jpeg_segment(std::span<const uint8_t> jpeg, uint8_t marker) {
  size_t i = 2;  // after SOI
  while (i + 4 <= jpeg.size() && jpeg[i] == 0xFF) {
    const uint8_t m = jpeg[i + 1];
    if (m == marker) return static_cast<ptrdiff_t>(i);
    if (m == 0xDA) break;  // SOS: entropy-coded data follows
    i += 2 + ((jpeg[i + 2] << 8) | jpeg[i + 3]);
  }
  return -1;
}

void patch_jpeg_size(std::vector<uint8_t>* jpeg, uint16_t width, uint16_t height) {
  ptrdiff_t sof = find_jpeg_segment(*jpeg, 0xC0);
  if (sof < 0) sof = find_jpeg_segment(*jpeg, 0xC2);
  if (sof < 0) throw std::invalid_argument("patch_jpeg_size: no SOF0/SOF2 segment");
  uint8_t* p = jpeg->data() + sof + 5;  // FF Cx, length (2), precision (1), height, width
  p[0] = static_cast<uint8_t>(height >> 8);
  p[1] = static_cast<uint8_t>(height);
  p[2] = static_cast<uint8_t>(width >> 8);
  p[3] = static_cast<uint8_t>(width);
}

void append_png_chunk(std::vector<uint8_t>* png, std::string_view type, std::span<const uint8_t> data) {
  uint8_t length[4];
  put_be32(length, static_cast<uint32_t>(data.size()));
  png->insert(png->end(), length, length + 4);
  const size_t type_at = png->size();
  png->insert(png->end(), type.begin(), type.end());
  png->insert(png->end(), data.begin(), data.end());
  const uLong crc = crc32(0, png->data() + type_at, static_cast<uInt>(png->size() - type_at));
  uint8_t crc_bytes[4];
  put_be32(crc_bytes, static_cast<uint32_t>(crc));
  png->insert(png->end(), crc_bytes, crc_bytes + 4);
}

std::vector<uint8_t> make_raw_png(int width, int height, int bit_depth, int color_type,
                                  std::span<const uint8_t> packed_rows) {
  const size_t row_bytes = packed_rows.size() / height;
  std::vector<uint8_t> filtered;  // filter type 0 (None) before each row
  for (int y = 0; y < height; ++y) {
    filtered.push_back(0);
    const uint8_t* row = packed_rows.data() + y * row_bytes;
    filtered.insert(filtered.end(), row, row + row_bytes);
  }
  uLongf compressed_size = compressBound(static_cast<uLong>(filtered.size()));
  std::vector<uint8_t> compressed(compressed_size);
  if (compress(compressed.data(), &compressed_size, filtered.data(), static_cast<uLong>(filtered.size())) != Z_OK) {
    throw std::runtime_error("make_raw_png: zlib compress failed");
  }
  compressed.resize(compressed_size);

  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  uint8_t ihdr[13] = {};
  put_be32(ihdr, static_cast<uint32_t>(width));
  put_be32(ihdr + 4, static_cast<uint32_t>(height));
  ihdr[8] = static_cast<uint8_t>(bit_depth);
  ihdr[9] = static_cast<uint8_t>(color_type);
  append_png_chunk(&png, "IHDR", ihdr);
  append_png_chunk(&png, "IDAT", compressed);
  append_png_chunk(&png, "IEND", {});
  return png;
}

void patch_png_size(std::vector<uint8_t>* png, uint32_t width, uint32_t height) {
  // Signature (8), IHDR length (4), "IHDR" (4), then width, height; the CRC covers type+data.
  if (png->size() < 33) throw std::invalid_argument("patch_png_size: too short for an IHDR");
  uint8_t* p = png->data();
  put_be32(p + 16, width);
  put_be32(p + 20, height);
  const uLong crc = crc32(0, p + 12, 17);
  put_be32(p + 29, static_cast<uint32_t>(crc));
}

}  // namespace stoker::testing
