// RandomHorizontalFlip(p=0.5): torchvision's, a left-right mirror of a share p of the samples.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"

namespace stoker::data::ops {

namespace horizontal_flip_op {

constexpr std::string_view kParams[] = {"p"};
constexpr OpName kNames[] = {{"RandomHorizontalFlip", kParams, "RandomHorizontalFlip(0.25)"}};

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  state.spec.hflip.p = args[0] ? chain::to_number(call, "p", *args[0]) : 0.5;
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.hflip.enabled()) parts->push_back(fmt::format("RandomHorizontalFlip({})", spec.hflip.p));
}

void validate(const TransformSpec& spec) { spec::check_probability("RandomHorizontalFlip", spec.hflip.p); }

}  // namespace horizontal_flip_op

extern const TransformOp kHorizontalFlipOp;
const TransformOp kHorizontalFlipOp{.names = horizontal_flip_op::kNames,
                                    .build = horizontal_flip_op::build,
                                    .describe = horizontal_flip_op::describe,
                                    .validate = horizontal_flip_op::validate,
                                    .wrap_hint = "RandomHorizontalFlip has a p of its own"};

}  // namespace stoker::data::ops
