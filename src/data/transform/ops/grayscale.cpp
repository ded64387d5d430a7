// Grayscale(num_output_channels=1): one output channel (L). Normalize then uses the first
// mean / std element; channels are checked for every spec (transform_validate.cpp).
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

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (args[0] && chain::to_number(call, "num_output_channels", *args[0]) != 1) {
    throw UsageError(fmt::format(
        "Grayscale num_output_channels must be 1 (got {}); stoker's Grayscale gives one channel", args[0]->text));
  }
  state.spec.channels = 1;
}

// Feature vectors have one "channel" too, without a Grayscale.
void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.channels == 1 && !spec.features.enabled()) parts->emplace_back("Grayscale");
}

}  // namespace grayscale_op

extern const TransformOp kGrayscaleOp;
const TransformOp kGrayscaleOp{.names = grayscale_op::kNames,
                               .build = grayscale_op::build,
                               .describe = grayscale_op::describe,
                               .wrap_hint = "use RandomGrayscale(p)",
                               .on_features = true};

}  // namespace stoker::data::ops
