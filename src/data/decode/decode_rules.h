// Private: the rules every decoder of src/data/decode shares, each stated once.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>

#include "stoker/core/error.h"
#include "stoker/data/decode.h"

namespace stoker::data {

// The decompression-bomb bound (DecodeOptions::max_pixels), applied to a header's size before
// any pixel is decoded. Non-positive sizes are refused too: no format stores one.
inline Status check_image_size(int64_t width, int64_t height, const DecodeOptions& options) {
  if (width <= 0 || height <= 0) return Status::failure(fmt::format("image has no pixels: {}x{}", width, height));
  if (width > options.max_pixels || height > options.max_pixels || width * height > options.max_pixels) {
    // The product in double: a header's sizes may multiply past int64.
    return Status::failure(fmt::format("image too large: {}x{} = {:.0f} pixels, over {}", width, height,
                                       static_cast<double>(width) * static_cast<double>(height),
                                       fmt::format(fmt::runtime(options.max_pixels_named), options.max_pixels)));
  }
  return Status::ok_status();
}

// Pillow's "L" conversion (ITU-R 601-2 luma in 16-bit fixed point, rounded).
inline void rgb_to_gray_row(const uint8_t* rgb, uint8_t* gray, size_t width) {
  for (size_t i = 0; i < width; ++i, rgb += 3) {
    gray[i] = static_cast<uint8_t>((rgb[0] * 19595 + rgb[1] * 38470 + rgb[2] * 7471 + 0x8000) >> 16);
  }
}

// Pillow's 16-bit gray (mode I; I;16 from Pillow 10) to L or RGB: each value clipped at 255,
// not scaled, so a 16-bit scan is white wherever it is 255 or more (what ImageFolder's default
// loader, convert("RGB"), gives in Pillow 9.4).
inline uint8_t clip_gray16(uint32_t value) { return value > 255 ? 255 : static_cast<uint8_t>(value); }

// clip_gray16 of a row: `gray16` holds `width` big-endian samples; `channels` 1 or 3.
inline void clip_gray16_row(const uint8_t* gray16, uint8_t* out, size_t width, int channels) {
  for (size_t i = 0; i < width; ++i, gray16 += 2, out += channels) {
    const uint8_t value = clip_gray16(static_cast<uint32_t>(gray16[0]) << 8 | gray16[1]);
    for (int c = 0; c < channels; ++c) out[c] = value;
  }
}

}  // namespace stoker::data
