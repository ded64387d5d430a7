// ColorJitter(brightness, contrast, saturation, hue): torchvision's, each a single number (its
// ranges (min, max) are refused). RandomApply may wrap it.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace color_jitter_op {

using chain::Value;

constexpr std::string_view kParams[] = {"brightness", "contrast", "saturation", "hue"};
constexpr OpName kNames[] = {{"ColorJitter", kParams, "ColorJitter(0.4, 0.3, hue=0.1)"}};

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  std::array<double, 4> values{};
  for (size_t i = 0; i < values.size(); ++i) {
    if (!args[i]) continue;
    if (args[i]->kind == Value::Kind::kTuple) {
      throw UsageError(
          fmt::format("ColorJitter {} must be a single number (got '{}'); ranges (min, max) are not "
                      "supported",
                      kParams[i], args[i]->text));
    }
    values[i] = chain::to_number(call, kParams[i], *args[i]);
  }
  state.spec.jitter = {values[0], values[1], values[2], values[3]};
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const ColorJitterSpec& j = spec.jitter;
  if (!j.enabled()) return;
  std::string args;
  const std::array<std::pair<const char*, double>, 4> components{
      {{"brightness", j.brightness}, {"contrast", j.contrast}, {"saturation", j.saturation}, {"hue", j.hue}}};
  for (const auto& [name, value] : components) {
    if (value == 0) continue;
    args += fmt::format("{}{}={}", args.empty() ? "" : ", ", name, value);
  }
  parts->push_back(spec::applied_text("ColorJitter(" + args + ")", j.apply_p));
}

void validate(const TransformSpec& spec) {
  const ColorJitterSpec& j = spec.jitter;
  spec::check_apply_p("ColorJitter", j.apply_p);
  const std::array<std::pair<const char*, double>, 3> factors{
      {{"brightness", j.brightness}, {"contrast", j.contrast}, {"saturation", j.saturation}}};
  for (const auto& [name, value] : factors) {
    if (!(value >= 0 && std::isfinite(value))) {
      throw UsageError(fmt::format("ColorJitter {} must be >= 0 (got {})", name, value));
    }
  }
  if (!(j.hue >= 0 && j.hue <= 0.5)) {
    throw UsageError(fmt::format("ColorJitter hue must be in [0, 0.5] (got {})", j.hue));
  }
}

double* apply_p(TransformSpec* spec, std::string_view) { return &spec->jitter.apply_p; }

}  // namespace color_jitter_op

extern const TransformOp kColorJitterOp;
const TransformOp kColorJitterOp{.names = color_jitter_op::kNames,
                                 .build = color_jitter_op::build,
                                 .describe = color_jitter_op::describe,
                                 .validate = color_jitter_op::validate,
                                 .wrap = Wrap::kApplyP,
                                 .wrapped_p = color_jitter_op::apply_p,
                                 .for_eval = off_in_eval<&TransformSpec::jitter>};

}  // namespace stoker::data::ops
