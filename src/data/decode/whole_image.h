// Private: the formats decoded whole, without a crop window (BMP, PNM, TIFF, WebP, GIF).
//
// Each reads only what it needs for read_*_info (ImageInfo: format, size, stored channels) and
// decodes the first image of the file into 8-bit RGB, as Pillow's Image.open(f).convert("RGB")
// gives it: alpha dropped (not composited), palettes looked up, 16-bit samples scaled to 8 bits.
// ImageDecoder (image_decoder.cpp) turns RGB into gray when asked and places the crop.
// Sizes are checked with check_image_size (decode_rules.h) before anything is allocated for
// pixels. Damaged and truncated files fail with a short reason; nothing reads past `bytes`.
// The functions keep no state: they are thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/image.h"

namespace stoker::data {

Status read_bmp_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
Status decode_bmp(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb);

Status read_pnm_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
Status decode_pnm(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb);

Status read_tiff_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
Status decode_tiff(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb);

Status read_gif_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
Status decode_gif(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb);

Status read_webp_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
Status decode_webp(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb);

}  // namespace stoker::data
