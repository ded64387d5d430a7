// Private: the arithmetic shared by the JPEG and PNG decoders for decoding only the part of
// an image that the transform stage will read.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/image.h"

namespace stoker::data {

// Resolves a requested crop against a width x height image: width or height 0 means the
// whole image. A crop that pokes out of the image by float noise is clamped; one that is
// really outside is a failure (the transform stage always draws crops inside the image).
inline Status resolve_crop(const CropRect& requested, int width, int height, CropRect* crop) {
  if (requested.width == 0 || requested.height == 0) {
    *crop = CropRect{0, 0, static_cast<double>(width), static_cast<double>(height)};
    return Status::ok_status();
  }
  constexpr double kSlack = 1e-6;
  const CropRect& r = requested;
  if (!(r.width > 0 && r.height > 0 && r.x >= -kSlack && r.y >= -kSlack && r.x + r.width <= width + kSlack &&
        r.y + r.height <= height + kSlack)) {
    return Status::failure(fmt::format("crop (x={:g}, y={:g}, w={:g}, h={:g}) is not inside the {}x{} image", r.x, r.y,
                                       r.width, r.height, width, height));
  }
  crop->x = std::clamp(r.x, 0.0, static_cast<double>(width));
  crop->y = std::clamp(r.y, 0.0, static_cast<double>(height));
  crop->width = std::min(r.width, width - crop->x);
  crop->height = std::min(r.height, height - crop->y);
  return Status::ok_status();
}

// Smallest JPEG DCT scale M (output is M/8 of full size) at which the crop still covers the
// target size, so the resampler only ever shrinks (or leaves alone) and never enlarges.
// Without a target (0) there is nothing to aim for: full resolution.
// Only M = 1, 2, 4 have SIMD inverse DCTs in libjpeg-turbo (besides 8); the odd scales run
// plain C and measured slower than a full-size decode, so they are not used.
inline int choose_dct_scale(const CropRect& crop, int target_width, int target_height) {
  if (target_width <= 0 || target_height <= 0) return 8;
  for (int m : {1, 2, 4}) {
    if (crop.width * m / 8 >= target_width && crop.height * m / 8 >= target_height) return m;
  }
  return 8;
}

// Pixels beyond a crop edge that the resampler may read. Pillow-style antialiased resampling
// widens its kernel (support 1 bilinear, 2 bicubic) by the reduction factor and reads outside
// the box; decoding those pixels too keeps the result equal to resampling a full decode. +1
// covers the kernel's rounding to whole pixels. Without a target, assume no reduction.
inline int filter_margin(double extent, int target, double support) {
  const double reduction = target > 0 ? extent / target : 1.0;
  return static_cast<int>(std::ceil(support * std::max(1.0, reduction))) + 1;
}

// Whole pixels [begin, end) covering [lo, hi) plus `margin` on both sides, within [0, size).
struct PixelRange {
  int begin = 0;
  int end = 0;
};
inline PixelRange covering_range(double lo, double hi, int margin, int size) {
  PixelRange r;
  r.begin = std::clamp(static_cast<int>(std::floor(lo)) - margin, 0, size);
  r.end = std::clamp(static_cast<int>(std::ceil(hi)) + margin, r.begin, size);
  return r;
}

// What a decode of `crop` (resolved, full-resolution pixels) of a width x height JPEG covers:
// the DCT scale M/8 (choose_dct_scale, when DecodeOptions::dct_scaling), the scaled image
// size and the window in scaled pixels, widened by the resampler's margin. The CPU decoder
// and the GPU decode plan both take it from here, so they decode the same pixels.
struct DecodeWindow {
  int scale_num = 8;
  int full_width = 0;  // the scaled image: ceil(size * M / 8), as libjpeg computes it
  int full_height = 0;
  PixelRange cols;  // wanted window in scaled pixels
  PixelRange rows;
};

// The crop in scaled coordinates: an M/8 IDCT maps full-size pixel edge x to x * M / 8.
inline CropRect scaled_crop(const CropRect& crop, int scale_num) {
  const double scale = scale_num / 8.0;
  return CropRect{crop.x * scale, crop.y * scale, crop.width * scale, crop.height * scale};
}

inline DecodeWindow plan_window(const CropRect& crop, int width, int height, const DecodeRequest& request,
                                const DecodeOptions& options) {
  DecodeWindow w;
  w.scale_num = options.dct_scaling ? choose_dct_scale(crop, request.target_width, request.target_height) : 8;
  // libjpeg's scaled size: ceil(size * M / 8) (jdiv_round_up in jpeg_calc_output_dimensions).
  w.full_width = static_cast<int>((static_cast<int64_t>(width) * w.scale_num + 7) / 8);
  w.full_height = static_cast<int>((static_cast<int64_t>(height) * w.scale_num + 7) / 8);
  const CropRect scaled = scaled_crop(crop, w.scale_num);
  if (options.crop_window) {
    const double support = request.filter_support;
    w.cols = covering_range(scaled.x, scaled.x + scaled.width,
                            filter_margin(scaled.width, request.target_width, support), w.full_width);
    w.rows = covering_range(scaled.y, scaled.y + scaled.height,
                            filter_margin(scaled.height, request.target_height, support), w.full_height);
  } else {
    w.cols = PixelRange{0, w.full_width};
    w.rows = PixelRange{0, w.full_height};
  }
  return w;
}

}  // namespace stoker::data
