// RandomAffine(degrees, translate, scale, shear, interpolation, fill, center): torchvision's,
// as its tensor implementation warps (AffineSpec); center is refused. RandomApply may wrap it.
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

namespace random_affine_op {

using chain::Value;

constexpr std::string_view kParams[] = {"degrees", "translate", "scale", "shear", "interpolation", "fill", "center"};
constexpr OpName kNames[] = {
    {"RandomAffine", kParams, "RandomAffine(10, translate=(0.1, 0.2), scale=(0.9, 1.1), shear=(1, 2, 3, 4))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's, on the crop, as its tensor `F.affine` warps: a rotation from `degrees`, a shift from `translate`, "
    "a scale from `scale` and shears from `shear`, each drawn per sample. `center` is refused.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(
        fmt::format("RandomAffine needs degrees, e.g. RandomAffine(10, translate=(0.1, 0.1)) or RandomAffine(0, "
                    "scale=(0.9, 1.1)) (got '{}')",
                    call.text));
  }
  AffineSpec& a = state.spec.affine;
  a = AffineSpec{};
  std::tie(a.min_degrees, a.max_degrees) = std::tuple_cat(chain::symmetric_range(call, "degrees", *args[0]));
  if (args[1] && !chain::is_none(*args[1])) {
    a.translate = true;
    std::tie(a.translate_x, a.translate_y) = std::tuple_cat(chain::to_pair(call, "translate", *args[1], "(tx, ty)"));
  }
  if (args[2] && !chain::is_none(*args[2])) {
    a.scale = true;
    std::tie(a.scale_min, a.scale_max) = std::tuple_cat(chain::to_range(call, "scale", *args[2]));
  }
  if (args[3] && !chain::is_none(*args[3])) {
    a.shear = true;
    const Value& v = *args[3];
    if (v.kind == Value::Kind::kTuple && v.items.size() == 4) {
      a.shear_y = true;
      a.shear_x_min = chain::to_number(call, "shear", v.items[0]);
      a.shear_x_max = chain::to_number(call, "shear", v.items[1]);
      a.shear_y_min = chain::to_number(call, "shear", v.items[2]);
      a.shear_y_max = chain::to_number(call, "shear", v.items[3]);
    } else if (v.kind == Value::Kind::kTuple && v.items.size() != 2) {
      throw UsageError(fmt::format(
          "RandomAffine shear must be a number, (min, max) for x or (x min, x max, y min, y max) (got '{}')", v.text));
    } else {
      std::tie(a.shear_x_min, a.shear_x_max) = std::tuple_cat(chain::symmetric_range(call, "shear", v));
    }
  }
  if (args[4]) a.interpolation = chain::to_interpolation(call, *args[4], /*bicubic=*/true);
  if (args[5] && !chain::is_none(*args[5])) a.fill = chain::to_channels(call, "fill", *args[5]);
  if (args[6] && !chain::is_none(*args[6])) {
    throw UsageError(fmt::format("RandomAffine center must be None, the image's centre (got '{}')", args[6]->text));
  }
}

constexpr Step kStepOf[] = {Step::kAffine};

std::string text(const TransformSpec& spec, Step step) {
  const AffineSpec& a = spec.affine;
  if (step != Step::kAffine || !a.enabled()) return "";
  std::string s = "RandomAffine(" + spec::range_text(a.min_degrees, a.max_degrees);
  if (a.translate) s += fmt::format(", translate=({}, {})", a.translate_x, a.translate_y);
  if (a.scale) s += fmt::format(", scale=({}, {})", a.scale_min, a.scale_max);
  if (a.shear_y) {
    s += fmt::format(", shear=({}, {}, {}, {})", a.shear_x_min, a.shear_x_max, a.shear_y_min, a.shear_y_max);
  } else if (a.shear) {
    s += ", shear=" + spec::range_text(a.shear_x_min, a.shear_x_max);
  }
  if (a.interpolation == Interpolation::kBilinear) s += ", interpolation=bilinear";
  if (a.interpolation == Interpolation::kBicubic) s += ", interpolation=bicubic";
  if (a.fill != std::array<float, 3>{0, 0, 0}) s += fmt::format(", fill=({}, {}, {})", a.fill[0], a.fill[1], a.fill[2]);
  return s + ")";
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  spec::push_step(parts, spec, Step::kAffine, text(spec, Step::kAffine), spec.affine.apply_p);
}

void validate(const TransformSpec& spec) {
  const AffineSpec& a = spec.affine;
  const auto range = [](const char* what, double lo, double hi) {
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
      throw UsageError(
          fmt::format("RandomAffine {} must satisfy min <= max, both finite (got ({}, {}))", what, lo, hi));
    }
  };
  range("degrees", a.min_degrees, a.max_degrees);
  range("shear", a.shear_x_min, a.shear_x_max);
  range("shear (y)", a.shear_y_min, a.shear_y_max);
  for (const double t : {a.translate_x, a.translate_y}) {
    if (!(t >= 0 && t <= 1)) {
      throw UsageError(
          fmt::format("RandomAffine translate must be fractions of the image's size in [0, 1] (got ({}, {}))",
                      a.translate_x, a.translate_y));
    }
  }
  if (!(a.scale_min > 0 && a.scale_min <= a.scale_max && std::isfinite(a.scale_max))) {
    throw UsageError(
        fmt::format("RandomAffine scale must satisfy 0 < min <= max (got ({}, {}))", a.scale_min, a.scale_max));
  }
  for (const double shear : {a.shear_x_min, a.shear_x_max, a.shear_y_min, a.shear_y_max}) {
    // tan(90°) is infinite: the grid would be NaN.
    if (std::abs(shear) >= 90) {
      throw UsageError(fmt::format("RandomAffine shear must be within (-90, 90) degrees (got {})", shear));
    }
  }
  spec::check_fill("RandomAffine", a.fill);
  spec::check_apply_p("RandomAffine", a.apply_p);
}

double* apply_p(TransformSpec* spec, std::string_view) { return &spec->affine.apply_p; }

// As RandomAffine.get_params, only when enabled (and applied, and chosen): the angle (one
// uniform); with translate two uniforms (x then y, each rounded half to even to whole output
// pixels); with scale one uniform; with shear one uniform (x) and a second (y) where four
// values were given.
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  const AffineSpec& a = spec.affine;
  if (!a.enabled() || !chosen(spec, *params, Step::kAffine) || !applied(a.apply_p, rng)) return;
  params->affine = true;
  params->affine_angle = static_cast<float>(rng.uniform(a.min_degrees, a.max_degrees));
  if (a.translate) {
    // int(round(uniform(-max_dx, max_dx))).
    const double max_dx = a.translate_x * spec.out_width, max_dy = a.translate_y * spec.out_height;
    params->translate_x = round_half_even(rng.uniform(-max_dx, max_dx));
    params->translate_y = round_half_even(rng.uniform(-max_dy, max_dy));
  }
  if (a.scale) params->affine_scale = static_cast<float>(rng.uniform(a.scale_min, a.scale_max));
  if (a.shear) params->shear_x = static_cast<float>(rng.uniform(a.shear_x_min, a.shear_x_max));
  if (a.shear_y) params->shear_y = static_cast<float>(rng.uniform(a.shear_y_min, a.shear_y_max));
}

PointMap point_map(const TransformSpec& spec, const SampleParams& params) {
  if (!params.affine) return {};
  return sampled_through(inverse_affine(0, 0, params.affine_angle, params.translate_x, params.translate_y,
                                        params.shear_x, params.shear_y, params.affine_scale),
                         spec.out_width, spec.out_height);
}

// F.affine on the uint8 planes.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (!params.affine) return;
  apply_affine(params, filled_warp(spec.affine.interpolation, spec.affine.fill), image.planes(), image.spare_planes(1),
               image.width(), image.height(), image.channels());
}

}  // namespace random_affine_op

extern const TransformOp kRandomAffineOp;
const TransformOp kRandomAffineOp{.names = random_affine_op::kNames,
                                  .build = random_affine_op::build,
                                  .describe = random_affine_op::describe,
                                  .validate = random_affine_op::validate,
                                  .draw = random_affine_op::draw,
                                  .point_map = random_affine_op::point_map,
                                  .run = random_affine_op::run,
                                  .wrap = Wrap::kApplyP,
                                  .wrapped_p = random_affine_op::apply_p,
                                  .steps = random_affine_op::kStepOf,
                                  .step_text = random_affine_op::text,
                                  .for_eval = off_in_eval<&TransformSpec::affine>,
                                  .doc = random_affine_op::kDoc};

}  // namespace stoker::data::ops
