// Normalize(mean, std, inplace), Normalize(imagenet) or a bare Normalize (ImageNet's): (x/255 - mean) /
// std for float output; uint8 output keeps mean and std for the consumer to apply.
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

namespace normalize_op {

using chain::Value;

// inplace: whether torchvision writes into its input tensor; stoker writes the output it
// makes, so either value means the same.
constexpr std::string_view kParams[] = {"mean", "std", "inplace"};
constexpr OpName kNames[] = {{"Normalize", kParams, "Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's after `ToTensor`: (x / 255 − mean) / std per channel; a bare `Normalize` (or "
    "`Normalize(imagenet)`) takes ImageNet's mean and std. With uint8 output the mean and std are kept for the "
    "consumer to apply (`stoker train` and `device=\"cuda\"` normalise on the GPU). After `PILToTensor`, `ToImage` "
    "or a uint8 `ConvertImageDtype` without a float conversion it is refused, as torchvision's Normalize raises on a "
    "uint8 tensor.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  NormalizeSpec& normalize = state.spec.normalize;
  normalize.on = true;
  if (args[2]) chain::to_bool(call, "inplace", *args[2]);
  normalize.mean = spec::kImagenetMean;
  normalize.std = spec::kImagenetStd;
  if (!args[0] && !args[1]) return;
  if (args[0] && args[0]->kind == Value::Kind::kWord && !args[1]) {
    if (args[0]->text != "imagenet") {
      throw UsageError(fmt::format("Normalize preset must be 'imagenet' (got '{}')", args[0]->text));
    }
    return;
  }
  if (!args[0] || !args[1]) {
    throw UsageError(fmt::format("Normalize needs both mean and std, or 'imagenet' (got '{}')", call.text));
  }
  normalize.mean = chain::to_channels(call, "mean", *args[0]);
  normalize.std = chain::to_channels(call, "std", *args[1]);
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const NormalizeSpec& normalize = spec.normalize;
  if (!normalize.enabled()) return;
  if (normalize.mean == spec::kImagenetMean && normalize.std == spec::kImagenetStd) {
    parts->emplace_back("Normalize");
  } else {
    parts->push_back(
        fmt::format("Normalize(mean={}, std={})", spec::triple_text(normalize.mean), spec::triple_text(normalize.std)));
  }
}

// The channels the output has: Grayscale's one uses the first element.
void validate(const TransformSpec& spec) {
  const NormalizeSpec& normalize = spec.normalize;
  if (!normalize.enabled()) return;
  for (int c = 0; c < spec.channels; ++c) {
    if (!std::isfinite(normalize.mean[c])) {
      throw UsageError(fmt::format("Normalize mean must be finite (got mean[{}] = {})", c, normalize.mean[c]));
    }
    if (!(std::isfinite(normalize.std[c]) && normalize.std[c] != 0)) {
      throw UsageError(
          fmt::format("Normalize std must be non-zero and finite (got std[{}] = {})", c, normalize.std[c]));
    }
  }
}

}  // namespace normalize_op

extern const TransformOp kNormalizeOp;
const TransformOp kNormalizeOp{.names = normalize_op::kNames,
                               .build = normalize_op::build,
                               .describe = normalize_op::describe,
                               .validate = normalize_op::validate,
                               .on_gpu = true,
                               .doc = normalize_op::kDoc};

}  // namespace stoker::data::ops
