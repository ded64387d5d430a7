// data/transform/grey.h — L, the weights of PIL's convert("L") (which torchvision uses), for
// the sample transformer: an RGB decode with a grey spec, Grayscale(num_output_channels=3) and
// RandomGrayscale.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <algorithm>
#include <cstddef>

#include "data/transform/simd.h"

namespace stoker::data {

// RGB planes -> L.
inline void to_grey(float* __restrict grey, const float* __restrict r, const float* __restrict g,
                    const float* __restrict b, size_t n) {
  simd::for_each_blocked(n, [&](size_t i) { grey[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i]; });
}

// L in all three channels of `data`, planes or interleaved; `scratch` holds `pixels` floats.
inline void grey_in_rgb(float* data, float* scratch, size_t pixels, bool planar) {
  if (planar) {
    to_grey(scratch, data, data + pixels, data + 2 * pixels, pixels);
    for (int c = 0; c < 3; ++c) std::copy_n(scratch, pixels, data + c * pixels);
    return;
  }
  for (size_t i = 0; i < pixels; ++i) {
    float* px = data + 3 * i;
    px[0] = px[1] = px[2] = 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
  }
}

}  // namespace stoker::data
