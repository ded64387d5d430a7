// ColorJitter(brightness, contrast, saturation, hue): torchvision's, each a number or a range
// (min, max) as its constructor takes them. RandomApply may wrap it.
#include "data/transform/color_jitter.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "data/transform/stage_image.h"
#include "draws.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace color_jitter_op {

using chain::Value;

constexpr std::string_view kParams[] = {"brightness", "contrast", "saturation", "hue"};
constexpr OpName kNames[] = {{"ColorJitter", kParams, "ColorJitter(0.4, (0.5, 1.5), hue=(-0.1, 0.2))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's: each of brightness, contrast, saturation and hue a number or a `(min, max)` range, as its "
    "constructor takes them, drawn per sample, and applied in a random order. The image stays in floating point "
    "between them, as torchvision's tensors do (within a grey level of them); on a PIL image torchvision rounds to "
    "8 bits after each, so with two or more factors its pixels may differ from stoker's by 2-3 grey levels. Hue "
    "is torchvision's tensor `adjust_hue`; on a PIL image torchvision shifts it in Pillow's 8-bit HSV, up to 9 grey "
    "levels from its own tensor result and from stoker's.";

// A range equal to the component's centre (1, 1) or (0, 0) is off, as torchvision's
// _check_input makes it None.
void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  ColorJitterSpec j;
  double* const numbers[] = {&j.brightness, &j.contrast, &j.saturation, &j.hue};
  for (size_t i = 0; i < std::size(kParams); ++i) {
    if (!args[i] || chain::is_none(*args[i])) continue;
    if (args[i]->kind == Value::Kind::kTuple) {
      const std::array<double, 2> range = chain::to_range(call, kParams[i], *args[i]);
      const double centre = i == 3 ? 0 : 1;
      if (range[0] == centre && range[1] == centre) continue;
      j.ranged[i] = true;
      j.range[i] = range;
    } else {
      *numbers[i] = chain::to_number(call, kParams[i], *args[i]);
    }
  }
  state.spec.jitter = j;
}

constexpr Step kStepOf[] = {Step::kColorJitter};

std::string text(const TransformSpec& spec, Step step) {
  const ColorJitterSpec& j = spec.jitter;
  if (step != Step::kColorJitter || !j.enabled()) return "";
  std::string args;
  for (int i = 0; i < 4; ++i) {
    if (!j.on(i)) continue;
    const std::string value = j.ranged[static_cast<size_t>(i)] ? fmt::format("({}, {})", j.bounds(i)[0], j.bounds(i)[1])
                                                               : fmt::format("{}", j.number(i));
    args += fmt::format("{}{}={}", args.empty() ? "" : ", ", kParams[static_cast<size_t>(i)], value);
  }
  return "ColorJitter(" + args + ")";
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  spec::push_step(parts, spec, Step::kColorJitter, text(spec, Step::kColorJitter), spec.jitter.apply_p);
}

void validate(const TransformSpec& spec) {
  const ColorJitterSpec& j = spec.jitter;
  spec::check_apply_p("ColorJitter", j.apply_p);
  for (int i = 0; i < 3; ++i) {
    const std::string_view name = kParams[static_cast<size_t>(i)];
    const auto [lo, hi] = j.bounds(i);
    if (j.ranged[static_cast<size_t>(i)] && !(lo >= 0 && lo <= hi && std::isfinite(hi))) {
      throw UsageError(fmt::format("ColorJitter {} must satisfy 0 <= min <= max (got ({}, {}))", name, lo, hi));
    }
    const double value = j.number(i);
    if (!(value >= 0 && std::isfinite(value))) {
      throw UsageError(fmt::format("ColorJitter {} must be >= 0 (got {})", name, value));
    }
  }
  if (j.ranged[3] && !(j.range[3][0] >= -0.5 && j.range[3][0] <= j.range[3][1] && j.range[3][1] <= 0.5)) {
    throw UsageError(fmt::format("ColorJitter hue must satisfy -0.5 <= min <= max <= 0.5 (got ({}, {}))", j.range[3][0],
                                 j.range[3][1]));
  }
  if (!(j.hue >= 0 && j.hue <= 0.5)) {
    throw UsageError(fmt::format("ColorJitter hue must be in [0, 0.5] (got {})", j.hue));
  }
}

double* apply_p(TransformSpec* spec, std::string_view) { return &spec->jitter.apply_p; }

// Only when enabled (and applied, and chosen; else jitter_skipped): a permutation of the four
// operations (Fisher-Yates: for i = 3..1, swap(order[i], order[below(i + 1)])), then one
// uniform per enabled component in the order brightness, contrast, saturation, hue, as
// torchvision's ColorJitter.get_params (factors drawn in fixed order, applied permuted).
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  const ColorJitterSpec& jitter = spec.jitter;
  if (!jitter.enabled()) return;
  if (!chosen(spec, *params, Step::kColorJitter) || !applied(jitter.apply_p, rng)) {
    params->jitter_skipped = true;
    return;
  }
  for (int i = 3; i > 0; --i) {
    const auto j = static_cast<int>(rng.below(static_cast<uint64_t>(i + 1)));
    std::swap(params->jitter_order[i], params->jitter_order[j]);
  }
  double* const drawn[] = {&params->brightness, &params->contrast, &params->saturation, &params->hue};
  for (int i = 0; i < 4; ++i) {
    if (!jitter.on(i)) continue;
    const auto [lo, hi] = jitter.bounds(i);
    *drawn[i] = rng.uniform(lo, hi);
  }
}

// On the float image, in the drawn order.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (!spec.jitter.enabled() || params.jitter_skipped) return;
  apply_color_jitter(image.floats(), image.pixels(), image.channels(), image.planar(), params);
}

}  // namespace color_jitter_op

extern const TransformOp kColorJitterOp;
const TransformOp kColorJitterOp{.names = color_jitter_op::kNames,
                                 .build = color_jitter_op::build,
                                 .describe = color_jitter_op::describe,
                                 .validate = color_jitter_op::validate,
                                 .draw = color_jitter_op::draw,
                                 .run = color_jitter_op::run,
                                 .wrap = Wrap::kApplyP,
                                 .wrapped_p = color_jitter_op::apply_p,
                                 .steps = color_jitter_op::kStepOf,
                                 .step_text = color_jitter_op::text,
                                 .for_eval = off_in_eval<&TransformSpec::jitter>,
                                 .doc = color_jitter_op::kDoc};

}  // namespace stoker::data::ops
