// RandomResizedCrop(size, scale, ratio, interpolation, antialias): torchvision's random crop of
// an area fraction in `scale` and an aspect ratio in `ratio`, resampled to `size`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/random_box.h"
#include "data/transform/spec_common.h"
#include "draws.h"
#include "geometry.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace random_resized_crop_op {

constexpr std::string_view kParams[] = {"size", "scale", "ratio", "interpolation", "antialias"};
constexpr OpName kNames[] = {{"RandomResizedCrop", kParams, "RandomResizedCrop(96, scale=(0.25, 1), ratio=(0.5, 2))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's: a random region of an area fraction in `scale` and an aspect ratio in `ratio` of the image, "
    "resampled to `size` with Resize's filters (bilinear, or bicubic with `interpolation`). After a `Resize`, "
    "evaluation takes that Resize and `CenterCrop(size)`. Where no draw fits and the central fallback's side rounds "
    "to 0 pixels (an image thinner than the ratio allows, such as 1x9 with `ratio=(2, 2)`), torchvision on a PIL "
    "image gives a black image; stoker keeps that side 1 pixel.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(fmt::format("RandomResizedCrop needs a size, e.g. RandomResizedCrop(224) (got '{}')", call.text));
  }
  set_resampling(state, call, args[3], args[4]);
  const auto [h, w] = chain::to_size_pair(call, "size", *args[0]);
  TransformSpec& spec = state.spec;
  spec.geometry = Geometry::kRandomResizedCrop;
  spec.out_height = h;
  spec.out_width = w;
  RandomResizedCropSpec& rrc = spec.random_resized_crop;
  rrc = RandomResizedCropSpec{};  // torchvision's scale and ratio unless given
  if (args[1]) {
    const auto [lo, hi] = chain::to_range(call, "scale", *args[1]);
    rrc.scale_min = lo;
    rrc.scale_max = hi;
  }
  if (args[2]) {
    const auto [lo, hi] = chain::to_range(call, "ratio", *args[2]);
    rrc.ratio_min = lo;
    rrc.ratio_max = hi;
  }
}

// Evaluation resizes and takes the centre, 224 of 256 as torchvision's recipes do; after a
// Resize, the training chain's Resize and then the centre.
void for_eval(const TransformSpec& train, TransformSpec* eval) {
  if (train.geometry != Geometry::kRandomResizedCrop) return;
  constexpr double kCropFraction = 0.875;  // 224 of 256
  eval->geometry = Geometry::kResizeCenterCrop;
  if (!train.resize.enabled()) {
    eval->resize.shorter =
        static_cast<int>(std::floor(std::min(train.out_width, train.out_height) / kCropFraction + 1e-9));
  }
  eval->random_resized_crop = RandomResizedCropSpec{};
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.geometry != Geometry::kRandomResizedCrop) return;
  const RandomResizedCropSpec& rrc = spec.random_resized_crop;
  const RandomResizedCropSpec defaults;
  std::string s = "RandomResizedCrop(" + spec::size_text(spec.out_height, spec.out_width);
  if (rrc.scale_min != defaults.scale_min || rrc.scale_max != defaults.scale_max) {
    s += fmt::format(", scale=({}, {})", rrc.scale_min, rrc.scale_max);
  }
  if (rrc.ratio_min != defaults.ratio_min || rrc.ratio_max != defaults.ratio_max) {
    s += fmt::format(", ratio=({}, {})", rrc.ratio_min, rrc.ratio_max);
  }
  // After a Resize, the filter is written on the Resize.
  if (!spec.resize.enabled() && spec.resample == ResampleFilter::kBicubic) s += ", interpolation=bicubic";
  parts->push_back(s + ")");
}

void validate(const TransformSpec& spec) {
  if (spec.geometry != Geometry::kRandomResizedCrop) return;
  const RandomResizedCropSpec& rrc = spec.random_resized_crop;
  if (!(rrc.scale_min > 0 && rrc.scale_min <= rrc.scale_max && rrc.scale_max <= 1)) {
    throw UsageError(fmt::format("RandomResizedCrop scale must satisfy 0 < min <= max <= 1 (got ({}, {}))",
                                 rrc.scale_min, rrc.scale_max));
  }
  if (!(rrc.ratio_min > 0 && rrc.ratio_min <= rrc.ratio_max && std::isfinite(rrc.ratio_max))) {
    throw UsageError(fmt::format("RandomResizedCrop ratio must satisfy 0 < min <= max (got ({}, {}))", rrc.ratio_min,
                                 rrc.ratio_max));
  }
}

// torchvision.transforms.RandomResizedCrop.get_params (0.14). Integer pixel rectangle.
CropRect get_params(const TransformSpec& spec, int width, int height, SampleRng& rng) {
  const RandomResizedCropSpec& rrc = spec.random_resized_crop;
  const double area = static_cast<double>(width) * height;
  const double log_ratio_min = std::log(rrc.ratio_min);
  const double log_ratio_max = std::log(rrc.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const auto [w, h] = draw_box_sides(rng, area, rrc.scale_min, rrc.scale_max, log_ratio_min, log_ratio_max);
    if (0 < w && w <= width && 0 < h && h <= height) {
      const auto top = static_cast<int>(rng.below(static_cast<uint64_t>(height - h + 1)));
      const auto left = static_cast<int>(rng.below(static_cast<uint64_t>(width - w + 1)));
      return {static_cast<double>(left), static_cast<double>(top), static_cast<double>(w), static_cast<double>(h)};
    }
  }
  // Fallback: a central crop with the aspect ratio clamped into [ratio_min, ratio_max].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width;
  int h = height;
  if (in_ratio < rrc.ratio_min) {
    h = round_half_even(w / rrc.ratio_min);
  } else if (in_ratio > rrc.ratio_max) {
    w = round_half_even(h * rrc.ratio_max);
  }
  // Rounding can give 0 for extreme shapes (torchvision would then fail); keep one pixel.
  w = std::clamp(w, 1, width);
  h = std::clamp(h, 1, height);
  return {static_cast<double>((width - w) / 2), static_cast<double>((height - h) / 2), static_cast<double>(w),
          static_cast<double>(h)};
}

// 2 uniforms per attempt (area fraction, log aspect), then 2 bounded ints (top, left) for the
// accepted one; after a Resize, in the resized image's size, as torchvision draws it.
void draw(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params) {
  if (!draws_geometry(spec, context, Geometry::kRandomResizedCrop)) return;
  const auto [resized_w, resized_h] = resized_size(spec.resize, context.width, context.height);
  params->crop =
      to_source(get_params(spec, resized_w, resized_h, rng), context.width, context.height, resized_w, resized_h);
}

}  // namespace random_resized_crop_op

extern const TransformOp kRandomResizedCropOp;
const TransformOp kRandomResizedCropOp{.names = random_resized_crop_op::kNames,
                                       .claim = claim_geometry,
                                       .build = random_resized_crop_op::build,
                                       .describe = random_resized_crop_op::describe,
                                       .validate = random_resized_crop_op::validate,
                                       .draw = random_resized_crop_op::draw,
                                       .for_eval = random_resized_crop_op::for_eval,
                                       .on_gpu = true,
                                       .doc = random_resized_crop_op::kDoc};

}  // namespace stoker::data::ops
