// RandomRotation(degrees, interpolation, expand, center, fill): torchvision's, as its tensor
// implementation rotates (RotationSpec); expand and center are refused. RandomApply may wrap it.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "data/transform/auto_augment.h"
#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "data/transform/stage_image.h"
#include "data/transform/warp.h"
#include "draws.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace random_rotation_op {

constexpr std::string_view kParams[] = {"degrees", "interpolation", "expand", "center", "fill"};
constexpr OpName kNames[] = {
    {"RandomRotation", kParams, "RandomRotation((-5, 15), interpolation=bilinear, fill=(1, 2, 3))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's, on the crop, as its tensor implementation rotates (`F.rotate`): an angle drawn from `degrees` (a "
    "number d for (−d, d), or a range), `interpolation` nearest, bilinear or bicubic (`grid_sample`'s, clamped to [0, "
    "255]), `fill` per channel. `expand` and "
    "`center` are refused.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(fmt::format("RandomRotation needs degrees, e.g. RandomRotation(15) (got '{}')", call.text));
  }
  RotationSpec& r = state.spec.rotation;
  r = RotationSpec{};
  std::tie(r.min_degrees, r.max_degrees) = std::tuple_cat(chain::symmetric_range(call, "degrees", *args[0]));
  if (args[1]) r.interpolation = chain::to_interpolation(call, *args[1], /*bicubic=*/true);
  if (args[2] && chain::to_bool(call, "expand", *args[2])) {
    throw UsageError(
        "RandomRotation expand=True changes the image's size; stoker's samples have one size, so "
        "give expand=False (the default)");
  }
  if (args[3] && !chain::is_none(*args[3])) {
    throw UsageError(fmt::format("RandomRotation center must be None, the image's centre (got '{}')", args[3]->text));
  }
  if (args[4] && !chain::is_none(*args[4])) r.fill = chain::to_channels(call, "fill", *args[4]);
}

constexpr Step kStepOf[] = {Step::kRotation};

std::string text(const TransformSpec& spec, Step step) {
  const RotationSpec& r = spec.rotation;
  if (step != Step::kRotation || !r.enabled()) return "";
  std::string s = "RandomRotation(" + spec::range_text(r.min_degrees, r.max_degrees);
  if (r.interpolation == Interpolation::kBilinear) s += ", interpolation=bilinear";
  if (r.interpolation == Interpolation::kBicubic) s += ", interpolation=bicubic";
  if (r.fill != std::array<float, 3>{0, 0, 0}) s += ", fill=" + spec::triple_text(r.fill);
  return s + ")";
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  spec::push_step(parts, spec, Step::kRotation, text(spec, Step::kRotation), spec.rotation.apply_p);
}

void validate(const TransformSpec& spec) {
  const RotationSpec& r = spec.rotation;
  if (!(std::isfinite(r.min_degrees) && std::isfinite(r.max_degrees) && r.min_degrees <= r.max_degrees)) {
    throw UsageError(fmt::format("RandomRotation degrees must satisfy min <= max, both finite (got ({}, {}))",
                                 r.min_degrees, r.max_degrees));
  }
  spec::check_fill("RandomRotation", r.fill);
  spec::check_apply_p("RandomRotation", r.apply_p);
}

double* apply_p(TransformSpec* spec, std::string_view) { return &spec->rotation.apply_p; }

// One uniform in [min, max] degrees, only when enabled (and applied, and chosen).
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  const RotationSpec& r = spec.rotation;
  if (!r.enabled() || !chosen(spec, *params, Step::kRotation) || !applied(r.apply_p, rng)) return;
  params->rotate = true;
  params->angle = static_cast<float>(rng.uniform(r.min_degrees, r.max_degrees));
}

// F.rotate passes -angle to the matrix its warp samples through.
PointMap point_map(const TransformSpec& spec, const SampleParams& params) {
  if (!params.rotate) return {};
  return sampled_through(inverse_affine(0, 0, -params.angle, 0, 0, 0, 0, 1), spec.out_width, spec.out_height);
}

// F.rotate on the uint8 planes.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (!params.rotate) return;
  apply_augment_op(AugmentOp::kRotate, params.angle, filled_warp(spec.rotation.interpolation, spec.rotation.fill),
                   image.planes(), image.spare_planes(1), image.width(), image.height(), image.channels());
}

}  // namespace random_rotation_op

extern const TransformOp kRandomRotationOp;
const TransformOp kRandomRotationOp{.names = random_rotation_op::kNames,
                                    .build = random_rotation_op::build,
                                    .describe = random_rotation_op::describe,
                                    .validate = random_rotation_op::validate,
                                    .draw = random_rotation_op::draw,
                                    .point_map = random_rotation_op::point_map,
                                    .run = random_rotation_op::run,
                                    .wrap = Wrap::kApplyP,
                                    .wrapped_p = random_rotation_op::apply_p,
                                    .steps = random_rotation_op::kStepOf,
                                    .step_text = random_rotation_op::text,
                                    .for_eval = off_in_eval<&TransformSpec::rotation>,
                                    .doc = random_rotation_op::kDoc};

}  // namespace stoker::data::ops
