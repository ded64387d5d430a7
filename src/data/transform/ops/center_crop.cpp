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
    "After `Resize(n)` the two agree: `Resize(256), CenterCrop(224)` is torchvision's evaluation pair, and a crop "
    "larger than the resized image pads it with zeros, as torchvision's.";

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

// The 1:1 CenterCrop in the width x height image (draw_window: the source, or the source as
// Resize makes it), as functional.center_crop: pad with zeros to the crop's size where the image
// is smaller ((crop - size) // 2 before), then round((size - crop) / 2). After a Resize, a crop
// inside the resized image is the box of the source it covers, resampled in one pass; one
// larger than the resized image is that image resized first, then padded, as torchvision pads.
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

// Draws nothing from the generator: the centre is where it is. After a Resize, a crop that fits
// in the resized image is always the box of the source it covers (one resample, also where the
// Resize keeps the size, so that nvJPEG may decode it); a larger one is padded (draw_window).
void draw(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params) {
  if (draws_geometry(spec, context, Geometry::kResizeCenterCrop)) {
    const auto [resized_w, resized_h] = resized_size(spec.resize, context.width, context.height);
    if (spec.out_width > resized_w || spec.out_height > resized_h) {
      draw_window(spec, context, rng, params, window);
      return;
    }
    window(spec, resized_w, resized_h, rng, params);
    params->crop = to_source(params->crop, context.width, context.height, resized_w, resized_h);
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
