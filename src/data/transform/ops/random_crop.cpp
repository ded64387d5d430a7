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

using chain::Value;

constexpr std::string_view kParams[] = {"size", "padding", "pad_if_needed", "fill", "padding_mode"};
constexpr OpName kNames[] = {
    {"RandomCrop", kParams, "RandomCrop(32, padding=(4, 2), fill=(1, 2, 3), padding_mode=reflect)"}};

// An int for every side, (left/right, top/bottom) or (left, top, right, bottom), as
// torchvision's padding.
void set_padding(const chain::Call& call, const Value& v, PadSpec* pad) {
  const auto side = [&](const Value& x) { return chain::to_int(call, "padding", x, 0, spec::kMaxSize); };
  if (v.kind != Value::Kind::kTuple) {
    pad->left = pad->top = pad->right = pad->bottom = side(v);
  } else if (v.items.size() == 1) {
    pad->left = pad->top = pad->right = pad->bottom = side(v.items[0]);
  } else if (v.items.size() == 2) {
    pad->left = pad->right = side(v.items[0]);
    pad->top = pad->bottom = side(v.items[1]);
  } else if (v.items.size() == 4) {
    pad->left = side(v.items[0]);
    pad->top = side(v.items[1]);
    pad->right = side(v.items[2]);
    pad->bottom = side(v.items[3]);
  } else {
    throw UsageError(fmt::format(
        "RandomCrop padding must be an int, (left/right, top/bottom) or (left, top, right, bottom) (got '{}')",
        v.text));
  }
}

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
  if (args[1] && !chain::is_none(*args[1])) set_padding(call, *args[1], &pad);
  if (args[2]) pad.if_needed = chain::to_bool(call, "pad_if_needed", *args[2]);
  if (args[3]) pad.fill = chain::to_channels(call, "fill", *args[3]);
  if (args[4]) {
    const std::string mode =
        chain::to_word(call, "padding_mode", *args[4], {"constant", "edge", "reflect", "symmetric"});
    pad.mode = mode == "edge"        ? PaddingMode::kEdge
               : mode == "reflect"   ? PaddingMode::kReflect
               : mode == "symmetric" ? PaddingMode::kSymmetric
                                     : PaddingMode::kConstant;
  }
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
  const PadSpec& pad = spec.pad;
  std::string s = "RandomCrop(" + spec::size_text(spec.out_height, spec.out_width);
  if (pad.left == pad.right && pad.top == pad.bottom) {
    if (pad.left == pad.top && pad.left > 0) {
      s += fmt::format(", padding={}", pad.left);
    } else if (pad.left != pad.top) {
      s += fmt::format(", padding=({}, {})", pad.left, pad.top);
    }
  } else {
    s += fmt::format(", padding=({}, {}, {}, {})", pad.left, pad.top, pad.right, pad.bottom);
  }
  if (pad.if_needed) s += ", pad_if_needed=True";
  if (pad.fill != PadSpec{}.fill) {
    s += fmt::format(", fill={}", pad.fill[0] == pad.fill[1] && pad.fill[1] == pad.fill[2]
                                      ? fmt::format("{}", pad.fill[0])
                                      : spec::triple_text(pad.fill));
  }
  if (pad.mode != PaddingMode::kConstant) s += fmt::format(", padding_mode={}", to_string(pad.mode));
  parts->push_back(s + ")");
}

void validate(const TransformSpec& spec) {
  if (spec.geometry != Geometry::kRandomCrop) return;
  const PadSpec& pad = spec.pad;
  for (const int side : {pad.left, pad.top, pad.right, pad.bottom}) {
    if (side < 0 || side > spec::kMaxSize) {
      throw UsageError(
          fmt::format("RandomCrop padding must be in 0..{} pixels per side (got {})", spec::kMaxSize, side));
    }
  }
  spec::check_fill("RandomCrop", pad.fill);
}

}  // namespace random_crop_op

extern const TransformOp kRandomCropOp;
const TransformOp kRandomCropOp{.names = random_crop_op::kNames,
                                .claim = claim_geometry,
                                .build = random_crop_op::build,
                                .describe = random_crop_op::describe,
                                .validate = random_crop_op::validate,
                                .for_eval = random_crop_op::for_eval};

}  // namespace stoker::data::ops
