// data/transform/color_jitter.h — torchvision's ColorJitter on a float image in [0, 255].
#pragma once

#include <cstddef>

#include "stoker/data/transform.h"

namespace stoker::data {

// Applies params' brightness, contrast, saturation and hue in params.jitter_order, in place,
// to an image of `pixels` pixels of `channels` floats: planar (CHW, plane c at
// data + c * pixels) or interleaved (HWC). The semantics are torchvision's on PIL images:
//   brightness: x * f
//   contrast:   blend with the mean grey level, m + f * (x - m); m is the mean of
//               L = 0.299 R + 0.587 G + 0.114 B over the image, rounded to an integer as
//               PIL's ImageEnhance.Contrast does
//   saturation: blend with the pixel's own grey level L
//   hue:        shift H in HSV by `hue` turns (mod 1)
// and a clamp to [0, 255] after each, which is what PIL's uint8 blends amount to (PIL also
// rounds to integers between operations; we keep the fractions). A factor of 1 (hue 0) is
// skipped. Grey (1-channel) images: saturation and hue are no-ops, as in torchvision.
void apply_color_jitter(float* data, size_t pixels, int channels, bool planar, const SampleParams& params);

}  // namespace stoker::data
