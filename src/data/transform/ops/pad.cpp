// Pad(padding, fill=0, padding_mode='constant'): torchvision's, on the image the geometry
// starts from (PadSpec): alone, the output is the image padded; before a RandomCrop without
// padding of its own it is that crop's padding (the chain builder settles which). The padding
// is index arithmetic, as RandomCrop's (pad_crop.h): nothing is padded in memory.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "geometry.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace pad_op {

constexpr std::string_view kParams[] = {"padding", "fill", "padding_mode"};
constexpr OpName kNames[] = {{"Pad", kParams, "Pad((2, 1, 3, 4), fill=(1, 2, 3), padding_mode=symmetric)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's padding, with RandomCrop's `padding`, `fill` and `padding_mode`: alone, where every image has one "
    "size (IDX files: MNIST's `Pad(2)` makes 32 × 32), or before a `RandomCrop` without padding of its own, where "
    "`Pad(4), RandomCrop(32)` is `RandomCrop(32, padding=4)`. Before a resize or another crop, or written after a "
    "crop, where torchvision would pad the crop, it is refused.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0] || chain::is_none(*args[0])) {
    throw UsageError(fmt::format("Pad needs a padding, e.g. Pad(4) or Pad((4, 2)) (got '{}')", call.text));
  }
  // Written after a crop or a Resize, torchvision pads their output, which is then larger than
  // the crop; stoker pads only before the geometry, so that order is refused rather than read
  // as the other.
  const std::string& after = !state.resize_by.empty()      ? state.resize_by
                             : state.geometry_by != "none" ? state.geometry_by
                                                           : std::string();
  if (!after.empty()) {
    throw UsageError(fmt::format(
        "{} after {} pads its output, which stoker does not do: stoker pads the image before a RandomCrop or with "
        "no crop at all, so write Pad first (Pad(4), RandomCrop(32) is RandomCrop(32, padding=4)), or leave it out",
        call.text, after));
  }
  state.pad = PadSpec{};
  set_padding(call, args[0], args[1], args[2], &state.pad);
  state.pad_by = call.text;
}

// Only Pad alone shows as Pad: before a RandomCrop it is the crop's padding, which RandomCrop
// writes.
void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.geometry != Geometry::kNone || !spec.pad.pads()) return;
  std::string args = padding_text(spec.pad);  // ", padding=..., fill=..."
  const std::string head = ", padding=";
  args.replace(0, head.size(), "");
  parts->push_back("Pad(" + args + ")");
}

void validate(const TransformSpec& spec) {
  if (spec.geometry == Geometry::kNone) check_padding("Pad", spec.pad);
}

}  // namespace pad_op

extern const TransformOp kPadOp;
const TransformOp kPadOp{.names = pad_op::kNames,
                         .build = pad_op::build,
                         .describe = pad_op::describe,
                         .validate = pad_op::validate,
                         .doc = pad_op::kDoc};

}  // namespace stoker::data::ops
