// Private: the arithmetic shared by the JPEG and PNG decoders for decoding only the part of
// an image that the transform stage will read.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stoker/core/error.h"
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

}  // namespace stoker::data
