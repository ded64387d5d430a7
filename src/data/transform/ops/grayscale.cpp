// Grayscale(num_output_channels=1): one output channel (L). Normalize then uses the first
// mean / std element; channels are checked for every spec (transform_validate.cpp).
// Grayscale(num_output_channels=3): L in all three channels (TransformSpec::grayscale_rgb), as
// torchvision stacks it; an image transform, unlike the one-channel form.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace grayscale_op {

constexpr std::string_view kParams[] = {"num_output_channels"};
constexpr OpName kNames[] = {{"Grayscale", kParams, "Grayscale(num_output_channels=1)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's: `num_output_channels=1` gives one channel, L (`Normalize` then uses the first mean and std), "
    "`num_output_channels=3` L in each of three channels.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  const double n = args[0] ? chain::to_number(call, "num_output_channels", *args[0]) : 1;
  if (n != 1 && n != 3) {
    throw UsageError(
        fmt::format("Grayscale num_output_channels must be 1 or 3, as torchvision's (got {})", args[0]->text));
  }
  if (n == 3) {
    state.spec.grayscale_rgb = true;
  } else {
    state.spec.channels = 1;
  }
}

// Feature vectors have one "channel" too, without a Grayscale.
void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.channels == 1 && !spec.features.enabled()) parts->emplace_back("Grayscale");
  if (spec.grayscale_rgb && spec.channels == 3) parts->emplace_back("Grayscale(num_output_channels=3)");
}

}  // namespace grayscale_op

extern const TransformOp kGrayscaleOp;
const TransformOp kGrayscaleOp{.names = grayscale_op::kNames,
                               .build = grayscale_op::build,
                               .describe = grayscale_op::describe,
                               .wrap_hint = "use RandomGrayscale(p)",
                               .on_features = true,
                               .doc = grayscale_op::kDoc};

}  // namespace stoker::data::ops
