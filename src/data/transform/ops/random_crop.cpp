// RandomCrop(size, padding, pad_if_needed, fill, padding_mode): torchvision's RandomCrop, a
// random 1:1 window of the image padded as its padding_mode says.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
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

}  // namespace random_crop_op

extern const TransformOp kRandomCropOp;
const TransformOp kRandomCropOp{.names = random_crop_op::kNames,
                                .claim = claim_geometry,
                                .build = random_crop_op::build,
                                .describe = random_crop_op::describe,
                                .validate = random_crop_op::validate,
                                .for_eval = random_crop_op::for_eval,
                                .doc = random_crop_op::kDoc};

}  // namespace stoker::data::ops
