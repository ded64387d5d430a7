// RandomErasing: the draws of torchvision 0.14's RandomErasing.get_params and the write.
#include "data/transform/random_erasing.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>

#include "data/transform/half.h"
#include "data/transform/random_box.h"
#include "stoker/core/distributions.h"

namespace stoker::data {
namespace {

constexpr uint64_t kNoiseStream = 0x45524153u;  // "ERAS"

// The value (in output units) as the output's type: uint8 goes back to pixels through
// Normalize's inverse, since the consumer applies (x / 255 - mean) / std.
template <typename T>
T as_output(double value, const TransformSpec& spec, int channel);
template <>
float as_output<float>(double value, const TransformSpec&, int) {
  return static_cast<float>(value);
}
template <>
uint16_t as_output<uint16_t>(double value, const TransformSpec&, int) {
  return float_to_half(static_cast<float>(value));
}
template <>
uint8_t as_output<uint8_t>(double value, const TransformSpec& spec, int channel) {
  const auto k = static_cast<size_t>(spec.channels == 1 ? 0 : channel);
  const double unit = spec.normalize.enabled() ? value * spec.normalize.std[k] + spec.normalize.mean[k] : value;
  return static_cast<uint8_t>(std::clamp(std::nearbyint(255.0 * unit), 0.0, 255.0));
}

template <typename T>
void erase_as(T* out, const TransformSpec& spec, const SampleParams& params) {
  const RandomErasingSpec& erasing = spec.erasing;
  const size_t width = static_cast<size_t>(spec.out_width);
  const size_t plane = width * static_cast<size_t>(spec.out_height);
  const int channels = spec.channels;
  SampleRng noise(params.erase_noise_seed, kNoiseStream, 0);
  // torchvision's noise tensor is [C, h, w]: drawn channel by channel, row by row.
  for (int c = 0; c < channels; ++c) {
    const T fixed = as_output<T>(erasing.value[static_cast<size_t>(c)], spec, c);
    for (int y = params.erase_top; y < params.erase_top + params.erase_height; ++y) {
      for (int x = params.erase_left; x < params.erase_left + params.erase_width; ++x) {
        const size_t pixel = static_cast<size_t>(y) * width + static_cast<size_t>(x);
        const size_t at = spec.layout == Layout::kNCHW ? static_cast<size_t>(c) * plane + pixel
                                                       : pixel * static_cast<size_t>(channels) + static_cast<size_t>(c);
        out[at] = erasing.random_value ? as_output<T>(standard_normal(noise), spec, c) : fixed;
      }
    }
  }
}

}  // namespace

void draw_random_erasing(const RandomErasingSpec& spec, int out_w, int out_h, SampleRng& rng, SampleParams* params) {
  params->erase = false;
  if (!(spec.p > 0)) return;
  if (!(rng.uniform() < spec.p)) return;
  const double area = static_cast<double>(out_w) * out_h;
  const double log_ratio_min = std::log(spec.ratio_min);
  const double log_ratio_max = std::log(spec.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const auto [h, w] = draw_box_sides(rng, area, spec.scale_min, spec.scale_max, log_ratio_min, log_ratio_max);
    if (!(h < out_h && w < out_w)) continue;
    if (spec.random_value) params->erase_noise_seed = rng.next_u64();
    params->erase_top = static_cast<int>(rng.below(static_cast<uint64_t>(out_h - h + 1)));
    params->erase_left = static_cast<int>(rng.below(static_cast<uint64_t>(out_w - w + 1)));
    params->erase_height = h;
    params->erase_width = w;
    params->erase = h > 0 && w > 0;
    return;
  }
}

void erase_output(void* out, const TransformSpec& spec, const SampleParams& params) {
  if (!params.erase) return;
  switch (spec.dtype) {
    case DType::kFloat32:
      erase_as(static_cast<float*>(out), spec, params);
      break;
    case DType::kFloat16:
      erase_as(static_cast<uint16_t*>(out), spec, params);
      break;
    case DType::kUint8:
      erase_as(static_cast<uint8_t*>(out), spec, params);
      break;
  }
}

}  // namespace stoker::data
