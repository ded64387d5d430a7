// RandomGrayscale(p=0.1): torchvision's, a share p of the samples made grey (L in all three
// channels).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"

namespace stoker::data::ops {

namespace random_grayscale_op {

constexpr std::string_view kParams[] = {"p"};
constexpr OpName kNames[] = {{"RandomGrayscale", kParams, "RandomGrayscale(0.2)"}};

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  state.spec.random_grayscale.p = args[0] ? chain::to_number(call, "p", *args[0]) : 0.1;
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.random_grayscale.enabled()) parts->push_back(fmt::format("RandomGrayscale({})", spec.random_grayscale.p));
}

void validate(const TransformSpec& spec) { spec::check_probability("RandomGrayscale", spec.random_grayscale.p); }

}  // namespace random_grayscale_op

extern const TransformOp kRandomGrayscaleOp;
const TransformOp kRandomGrayscaleOp{.names = random_grayscale_op::kNames,
                                     .build = random_grayscale_op::build,
                                     .describe = random_grayscale_op::describe,
                                     .validate = random_grayscale_op::validate,
                                     .wrap_hint = "RandomGrayscale has a p of its own"};

}  // namespace stoker::data::ops
