// none: no geometry; the output is the source's size (its images must all be that size, which
// the Loader checks).
#include <string>
#include <vector>

#include "data/transform/chain/chain_builder.h"
#include "geometry.h"
#include "registry.h"

namespace stoker::data::ops {

namespace no_geometry_op {

constexpr OpName kNames[] = {{"none", {}, "none"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "No geometry: the output is the source's size, and its images must all have that size. On feature vectors, no "
    "transform at all (the default there is `Standardize`).";

void build(chain::ChainState& state, const chain::Call& call, const Args&) {
  state.claim_geometry(call);
  state.spec.geometry = Geometry::kNone;
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.geometry == Geometry::kNone) parts->emplace_back("none");
}

// The image as it is, or padded by Pad: the crop is then the padded image, as for RandomCrop,
// and the output its size. Draws nothing.
void draw(const TransformSpec& spec, const DrawContext& context, SampleRng& /*rng*/, SampleParams* params) {
  if (!draws_geometry(spec, context, Geometry::kNone)) return;
  const PadSpec& pad = spec.pad;
  params->crop = {0, 0, static_cast<double>(context.width + pad.left + pad.right),
                  static_cast<double>(context.height + pad.top + pad.bottom)};
  params->copy = true;
}

}  // namespace no_geometry_op

extern const TransformOp kNoGeometryOp;
const TransformOp kNoGeometryOp{.names = no_geometry_op::kNames,
                                .build = no_geometry_op::build,
                                .describe = no_geometry_op::describe,
                                .draw = no_geometry_op::draw,
                                .on_features = true,
                                .doc = no_geometry_op::kDoc};

}  // namespace stoker::data::ops
