// CenterCrop(size, resize=True): stoker's centre crop, which resizes the shorter side to the
// crop first when no Resize precedes it (every image then gives the whole of its centre), and
// with resize=False torchvision's own, a 1:1 crop padded with zeros. What it makes with a
// Resize is settled by the chain builder's finish.
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

namespace center_crop_op {

constexpr std::string_view kParams[] = {"size", "resize"};
constexpr OpName kNames[] = {{"CenterCrop", kParams, "CenterCrop((32, 48), resize=False)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "With `resize=False`, torchvision's 1:1 CenterCrop, padded with zeros where the image is smaller. `resize` is "
    "stoker's: a `CenterCrop(m)` alone (`resize=True`, the default) resizes the shorter side to `m` first, so that "
    "every image gives the whole of its centre. After `Resize(n)` the two agree: `Resize(256), CenterCrop(224)` is "
    "torchvision's evaluation pair.";

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
    parts->push_back(fmt::format("CenterCrop({}, resize=False)", size));
  } else if (spec.geometry == Geometry::kResizeCenterCrop) {
    // Resize((h, w)) alone crops all of it.
    const ResizeSpec& r = spec.resize;
    const bool whole_resized = r.shorter == 0 && r.width == spec.out_width && r.height == spec.out_height;
    if (!whole_resized) parts->push_back(fmt::format("CenterCrop({})", size));
  }
}

}  // namespace center_crop_op

extern const TransformOp kCenterCropOp;
const TransformOp kCenterCropOp{.names = center_crop_op::kNames,
                                .claim = claim_geometry,
                                .build = center_crop_op::build,
                                .describe = center_crop_op::describe,
                                .doc = center_crop_op::kDoc};

}  // namespace stoker::data::ops
