// RandomErasing(p=0.5, scale, ratio, value, inplace): torchvision's, on the output after Normalize
// (RandomErasingSpec); value is a number, one per channel, or random.
#include "data/transform/random_erasing.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace random_erasing_op {

using chain::Value;

// inplace: whether torchvision writes into its input tensor; stoker writes the output it
// makes, so either value means the same.
constexpr std::string_view kParams[] = {"p", "scale", "ratio", "value", "inplace"};
constexpr OpName kNames[] = {{"RandomErasing", kParams, "RandomErasing(p=0.25, scale=(0.1, 0.2), value=random)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's, on the output after `Normalize`: a share `p` of the samples get a rectangle of an area fraction "
    "in `scale` and an aspect ratio in `ratio` set to `value` (a number, one per channel, or `random`). After "
    "`PILToTensor` (uint8, no float conversion) the value is a pixel value, truncated, as torchvision erases a uint8 "
    "tensor; `random` is refused there.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  RandomErasingSpec& e = state.spec.erasing;
  e = RandomErasingSpec{};
  e.p = args[0] ? chain::to_number(call, "p", *args[0]) : 0.5;
  if (args[1]) {
    const auto [lo, hi] = chain::to_range(call, "scale", *args[1]);
    e.scale_min = lo;
    e.scale_max = hi;
  }
  if (args[2]) {
    const auto [lo, hi] = chain::to_range(call, "ratio", *args[2]);
    e.ratio_min = lo;
    e.ratio_max = hi;
  }
  if (args[3] && args[3]->kind == Value::Kind::kWord) {
    if (args[3]->text != "random") {
      throw UsageError(fmt::format(
          "RandomErasing value must be a number, one per channel (r, g, b), or random (got '{}')", args[3]->text));
    }
    e.random_value = true;
  } else if (args[3]) {
    e.value = chain::to_channels(call, "value", *args[3]);
  }
  if (args[4]) chain::to_bool(call, "inplace", *args[4]);
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const RandomErasingSpec& e = spec.erasing;
  if (!e.enabled()) return;
  const RandomErasingSpec defaults;
  std::string s = fmt::format("RandomErasing(p={}", e.p);
  if (e.scale_min != defaults.scale_min || e.scale_max != defaults.scale_max) {
    s += fmt::format(", scale=({}, {})", e.scale_min, e.scale_max);
  }
  if (e.ratio_min != defaults.ratio_min || e.ratio_max != defaults.ratio_max) {
    s += fmt::format(", ratio=({}, {})", e.ratio_min, e.ratio_max);
  }
  if (e.random_value) {
    s += ", value=random";
  } else if (e.value != defaults.value) {
    s += fmt::format(", value={}", e.value[0] == e.value[1] && e.value[1] == e.value[2] ? fmt::format("{}", e.value[0])
                                                                                        : spec::triple_text(e.value));
  }
  parts->push_back(s + ")");
}

void validate(const TransformSpec& spec) {
  const RandomErasingSpec& e = spec.erasing;
  spec::check_probability("RandomErasing", e.p);
  if (!(e.scale_min >= 0 && e.scale_min <= e.scale_max && e.scale_max <= 1)) {
    throw UsageError(
        fmt::format("RandomErasing scale must satisfy 0 <= min <= max <= 1 (got ({}, {}))", e.scale_min, e.scale_max));
  }
  if (!(e.ratio_min > 0 && e.ratio_min <= e.ratio_max && std::isfinite(e.ratio_max))) {
    throw UsageError(
        fmt::format("RandomErasing ratio must satisfy 0 < min <= max (got ({}, {}))", e.ratio_min, e.ratio_max));
  }
  for (const float v : e.value) {
    if (!std::isfinite(v)) throw UsageError(fmt::format("RandomErasing value must be finite (got {})", v));
  }
}

// Only when p > 0: random_erasing.h lists its draws.
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  draw_random_erasing(spec.erasing, spec.out_width, spec.out_height, rng, params);
}

}  // namespace random_erasing_op

extern const TransformOp kRandomErasingOp;
const TransformOp kRandomErasingOp{.names = random_erasing_op::kNames,
                                   .build = random_erasing_op::build,
                                   .describe = random_erasing_op::describe,
                                   .validate = random_erasing_op::validate,
                                   .draw = random_erasing_op::draw,
                                   .wrap_hint = "RandomErasing has a p of its own",
                                   .for_eval = off_in_eval<&TransformSpec::erasing>,
                                   .doc = random_erasing_op::kDoc};

}  // namespace stoker::data::ops
