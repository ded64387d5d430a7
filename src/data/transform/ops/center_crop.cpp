// CenterCrop(size): torchvision's centre crop, a 1:1 crop padded with zeros where the image is
// smaller. CenterCrop(size, resize=True) is stoker's, which resizes the shorter side to the crop
// first when no Resize precedes it (every image then gives the whole of its centre). What it
// makes with a Resize is settled by the chain builder's finish.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "draws.h"
#include "geometry.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace center_crop_op {

constexpr std::string_view kParams[] = {"size", "resize"};
constexpr OpName kNames[] = {{"CenterCrop", kParams, "CenterCrop((32, 48))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's CenterCrop: the centre of the image as it is, 1:1, padded with zeros where the image is smaller "
    "than the crop. `resize=True` is stoker's: `CenterCrop(m, resize=True)` with no Resize before it resizes the "
    "shorter side to `m` first (`Resize(m), CenterCrop(m)`), so that every image gives the whole of its centre. "
    "After `Resize(n)` the two agree: `Resize(256), CenterCrop(224)` is torchvision's evaluation pair.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(fmt::format("CenterCrop needs a size, e.g. CenterCrop(224) (got '{}')", call.text));
  }
  state.crop = chain::to_size_pair(call, "size", *args[0]);
  if (args[1]) state.crop_resizes = chain::to_bool(call, "resize", *args[1]);
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const std::string size = spec::size_text(spec.out_height, spec.out_width);
  if (spec.geometry == Geometry::kCenterCrop) {
    parts->push_back(fmt::format("CenterCrop({})", size));
  } else if (spec.geometry == Geometry::kResizeCenterCrop) {
    // Resize((h, w)) alone crops all of it.
    const ResizeSpec& r = spec.resize;
    const bool whole_resized = r.shorter == 0 && r.width == spec.out_width && r.height == spec.out_height;
    if (!whole_resized) parts->push_back(fmt::format("CenterCrop({})", size));
  }
}

// Resize then CenterCrop(out_height, out_width), as a rectangle of the source: the crop in
// resized coordinates scaled back by source/resized per axis.
CropRect resize_center_crop(const TransformSpec& spec, int width, int height) {
  const auto [resized_w, resized_h] = resized_size(spec.resize, width, height);
  // torchvision pads a crop larger than the image; we clamp it to the image instead, so the
  // output then shows the whole resized axis stretched to the output size.
  const int crop_w = std::min(spec.out_width, resized_w);
  const int crop_h = std::min(spec.out_height, resized_h);
  const int left = round_half_even((resized_w - crop_w) / 2.0);
  const int top = round_half_even((resized_h - crop_h) / 2.0);
  return to_source(
      {static_cast<double>(left), static_cast<double>(top), static_cast<double>(crop_w), static_cast<double>(crop_h)},
      width, height, resized_w, resized_h);
}

// The 1:1 CenterCrop in the width x height image (draw_window), as functional.center_crop: pad
// with zeros to the crop's size where the image is smaller ((crop - size) // 2 before), then
// round((size - crop) / 2).
void window(const TransformSpec& spec, int width, int height, SampleRng& /*rng*/, SampleParams* params) {
  const int th = spec.out_height;
  const int tw = spec.out_width;
  if (tw > width) params->pad_x = (tw - width) / 2;
  if (th > height) params->pad_y = (th - height) / 2;
  const int left = tw > width ? 0 : round_half_even((width - tw) / 2.0);
  const int top = th > height ? 0 : round_half_even((height - th) / 2.0);
  params->crop = {static_cast<double>(left), static_cast<double>(top), static_cast<double>(tw),
                  static_cast<double>(th)};
}

// Draws nothing from the generator: the centre is where it is.
void draw(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params) {
  if (draws_geometry(spec, context, Geometry::kResizeCenterCrop)) {
    params->crop = resize_center_crop(spec, context.width, context.height);
  } else if (draws_geometry(spec, context, Geometry::kCenterCrop)) {
    draw_window(spec, context, rng, params, window);
  }
}

}  // namespace center_crop_op

extern const TransformOp kCenterCropOp;
const TransformOp kCenterCropOp{.names = center_crop_op::kNames,
                                .claim = claim_geometry,
                                .build = center_crop_op::build,
                                .describe = center_crop_op::describe,
                                .draw = center_crop_op::draw,
                                .on_gpu = true,
                                .doc = center_crop_op::kDoc};

}  // namespace stoker::data::ops
