// RandomCrop(size, padding, pad_if_needed, fill, padding_mode): torchvision's RandomCrop, a
// random 1:1 window of the image padded as its padding_mode says.
#include <fmt/format.h>

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

namespace random_crop_op {

constexpr std::string_view kParams[] = {"size", "padding", "pad_if_needed", "fill", "padding_mode"};
constexpr OpName kNames[] = {
    {"RandomCrop", kParams, "RandomCrop(32, padding=(4, 2), fill=(1, 2, 3), padding_mode=reflect)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's: a random 1:1 window of `size` of the image padded by `padding` (an int for every side, "
    "(left/right, top/bottom) or (left, top, right, bottom)) and, with `pad_if_needed`, to the crop's size. "
    "`padding_mode` is constant (with `fill`), edge, reflect or symmetric, pixel for pixel as torchvision pads a PIL "
    "image (tested against it). After a `Resize` it crops the resized image: `Resize(256), RandomCrop(224)`.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(fmt::format("RandomCrop needs a size, e.g. RandomCrop(32, padding=4) (got '{}')", call.text));
  }
  const auto [h, w] = chain::to_size_pair(call, "size", *args[0]);
  TransformSpec& spec = state.spec;
  spec.geometry = Geometry::kRandomCrop;
  spec.out_height = h;
  spec.out_width = w;
  PadSpec& pad = spec.pad;
  pad = PadSpec{};
  set_padding(call, args[1], args[3], args[4], &pad);
  if (args[2]) pad.if_needed = chain::to_bool(call, "pad_if_needed", *args[2]);
}

// Evaluation takes torchvision's CenterCrop: 1:1, no padding; after a Resize, Resize then
// CenterCrop, the pair evaluation recipes write.
void for_eval(const TransformSpec& train, TransformSpec* eval) {
  if (train.geometry != Geometry::kRandomCrop) return;
  eval->geometry = train.resize.enabled() ? Geometry::kResizeCenterCrop : Geometry::kCenterCrop;
  eval->pad = PadSpec{};
}

// "RandomCrop(32, padding=4)": the arguments that differ from torchvision's defaults.
void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.geometry != Geometry::kRandomCrop) return;
  parts->push_back("RandomCrop(" + spec::size_text(spec.out_height, spec.out_width) + padding_text(spec.pad) + ")");
}

void validate(const TransformSpec& spec) {
  if (spec.geometry == Geometry::kRandomCrop) check_padding("RandomCrop", spec.pad);
}

// torchvision's RandomCrop.forward in the width x height image (draw_window): padding, then
// pad_if_needed's shortfall on both sides, then get_params's top and left (2 bounded ints),
// not drawn when the padded image is the crop's size.
void window(const TransformSpec& spec, int width, int height, SampleRng& rng, SampleParams* params) {
  const int th = spec.out_height;
  const int tw = spec.out_width;
  const PadSpec& pad = spec.pad;
  int padded_w = width + pad.left + pad.right;
  int padded_h = height + pad.top + pad.bottom;
  if (pad.if_needed && padded_w < tw) {  // padding=[size - width, 0]: both sides
    params->pad_x = tw - padded_w;
    padded_w += 2 * params->pad_x;
  }
  if (pad.if_needed && padded_h < th) {
    params->pad_y = th - padded_h;
    padded_h += 2 * params->pad_y;
  }
  if (padded_w < tw || padded_h < th) {
    params->crop = {0, 0, 0, 0};
    return;
  }
  int top = 0;
  int left = 0;
  if (padded_w != tw || padded_h != th) {  // get_params returns (0, 0, h, w) without a draw
    top = static_cast<int>(rng.below(static_cast<uint64_t>(padded_h - th + 1)));
    left = static_cast<int>(rng.below(static_cast<uint64_t>(padded_w - tw + 1)));
  }
  params->crop = {static_cast<double>(left), static_cast<double>(top), static_cast<double>(tw),
                  static_cast<double>(th)};
}

void draw(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params) {
  if (draws_geometry(spec, context, Geometry::kRandomCrop)) draw_window(spec, context, rng, params, window);
}

}  // namespace random_crop_op

extern const TransformOp kRandomCropOp;
const TransformOp kRandomCropOp{.names = random_crop_op::kNames,
                                .claim = claim_geometry,
                                .build = random_crop_op::build,
                                .describe = random_crop_op::describe,
                                .validate = random_crop_op::validate,
                                .draw = random_crop_op::draw,
                                .for_eval = random_crop_op::for_eval,
                                .on_gpu = true,
                                .doc = random_crop_op::kDoc};

}  // namespace stoker::data::ops
