// ElasticTransform(alpha=50.0, sigma=5.0, interpolation=bilinear, fill=0): torchvision's
// (ElasticSpec); alpha and sigma are a number or an (x, y) pair, as its constructor takes them.
// RandomApply may wrap it.
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

namespace elastic_transform_op {

using chain::Value;

constexpr std::string_view kParams[] = {"alpha", "sigma", "interpolation", "fill"};
constexpr OpName kNames[] = {
    {"ElasticTransform", kParams, "ElasticTransform(alpha=(20.0, 30.0), sigma=3.0, interpolation=nearest, fill=7)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's blurred random displacement field (`alpha`, its strength, and `sigma`, its smoothness: a number or "
    "an (x, y) pair), its noise drawn from stoker's per-sample generator. Keypoints, boxes and masks cannot follow "
    "it: a chain with targets that move is refused.";
constexpr Step kStepOf[] = {Step::kElastic};

// A number for both axes, or (x, y).
std::array<double, 2> pair(const chain::Call& call, std::string_view param, const Value& v) {
  if (v.kind == Value::Kind::kTuple && v.items.size() == 1) return pair(call, param, v.items[0]);
  if (v.kind == Value::Kind::kTuple) return chain::to_pair(call, param, v, "(x, y)");
  const double x = chain::to_number(call, param, v);
  return {x, x};
}

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  ElasticSpec& e = state.spec.elastic;
  e = ElasticSpec{};
  e.on = true;
  if (args[0]) std::tie(e.alpha_x, e.alpha_y) = std::tuple_cat(pair(call, "alpha", *args[0]));
  if (args[1]) std::tie(e.sigma_x, e.sigma_y) = std::tuple_cat(pair(call, "sigma", *args[1]));
  if (args[2]) e.interpolation = chain::to_interpolation(call, *args[2]);
  if (args[3] && !chain::is_none(*args[3])) e.fill = chain::to_channels(call, "fill", *args[3]);
}

std::string both(double x, double y) { return x == y ? fmt::format("{}", x) : fmt::format("({}, {})", x, y); }

std::string text(const TransformSpec& spec, Step step) {
  const ElasticSpec& e = spec.elastic;
  if (step != Step::kElastic || !e.enabled()) return "";
  std::string t =
      fmt::format("ElasticTransform(alpha={}, sigma={}", both(e.alpha_x, e.alpha_y), both(e.sigma_x, e.sigma_y));
  if (e.interpolation == Interpolation::kNearest) t += ", interpolation=nearest";
  if (e.fill != std::array<float, 3>{0, 0, 0}) {
    t += fmt::format(", fill={}", e.fill[0] == e.fill[1] && e.fill[1] == e.fill[2] ? fmt::format("{}", e.fill[0])
                                                                                   : spec::triple_text(e.fill));
  }
  return t + ")";
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  spec::push_step(parts, spec, Step::kElastic, text(spec, Step::kElastic), spec.elastic.apply_p);
}

void validate(const TransformSpec& spec) {
  const ElasticSpec& e = spec.elastic;
  if (!e.enabled()) return;
  if (!(e.alpha_x >= 0 && e.alpha_y >= 0 && std::isfinite(e.alpha_x) && std::isfinite(e.alpha_y))) {
    throw UsageError(
        fmt::format("ElasticTransform alpha must be >= 0 and finite (got {})", both(e.alpha_x, e.alpha_y)));
  }
  // get_params blurs each axis's noise with both sigmas once the first (second) is > 0, and
  // torchvision's blur refuses a sigma of 0.
  const bool both_positive = e.sigma_x > 0 && e.sigma_y > 0 && e.sigma_x <= 100 && e.sigma_y <= 100;
  if (!(both_positive || (e.sigma_x == 0 && e.sigma_y == 0))) {
    throw UsageError(
        fmt::format("ElasticTransform sigma must be both in (0, 100], or both 0 for unblurred noise (got {})",
                    both(e.sigma_x, e.sigma_y)));
  }
  spec::check_fill("ElasticTransform", e.fill);
  spec::check_apply_p("ElasticTransform", e.apply_p);
}

double* apply_p(TransformSpec* spec, std::string_view) { return &spec->elastic.apply_p; }

// One 64-bit seed for its displacement field's noise, only when enabled (and applied, and
// chosen).
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  const ElasticSpec& e = spec.elastic;
  if (!e.enabled() || !chosen(spec, *params, Step::kElastic) || !applied(e.apply_p, rng)) return;
  params->elastic = true;
  params->elastic_seed = rng.next_u64();
}

// The displacement grid drawn from the sample's seed, then the sampling, on the uint8 planes.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (!params.elastic) return;
  elastic_grid(spec.elastic, params.elastic_seed, image.width(), image.height(), image.grid(0), image.grid(1),
               image.grid(2));
  image.warp_planes(filled_warp(spec.elastic.interpolation, spec.elastic.fill));
}

// Its displacement is drawn per pixel: points do not follow it.
const char* refuses_targets(const TransformSpec& spec) { return spec.elastic.enabled() ? "ElasticTransform" : nullptr; }

}  // namespace elastic_transform_op

extern const TransformOp kElasticTransformOp;
const TransformOp kElasticTransformOp{.names = elastic_transform_op::kNames,
                                      .build = elastic_transform_op::build,
                                      .describe = elastic_transform_op::describe,
                                      .validate = elastic_transform_op::validate,
                                      .draw = elastic_transform_op::draw,
                                      .run = elastic_transform_op::run,
                                      .refuses_targets = elastic_transform_op::refuses_targets,
                                      .wrap = Wrap::kApplyP,
                                      .wrapped_p = elastic_transform_op::apply_p,
                                      .steps = elastic_transform_op::kStepOf,
                                      .step_text = elastic_transform_op::text,
                                      .for_eval = off_in_eval<&TransformSpec::elastic>,
                                      .doc = elastic_transform_op::kDoc};

}  // namespace stoker::data::ops
