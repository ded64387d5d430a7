// RandomVerticalFlip(p=0.5): torchvision's, an upside-down mirror of a share p of the samples.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"

namespace stoker::data::ops {

namespace vertical_flip_op {

constexpr std::string_view kParams[] = {"p"};
constexpr OpName kNames[] = {{"RandomVerticalFlip", kParams, "RandomVerticalFlip(p=0.75)"}};

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  state.spec.vflip.p = args[0] ? chain::to_number(call, "p", *args[0]) : 0.5;
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  if (spec.vflip.enabled()) parts->push_back(fmt::format("RandomVerticalFlip({})", spec.vflip.p));
}

void validate(const TransformSpec& spec) { spec::check_probability("RandomVerticalFlip", spec.vflip.p); }

}  // namespace vertical_flip_op

extern const TransformOp kVerticalFlipOp;
const TransformOp kVerticalFlipOp{.names = vertical_flip_op::kNames,
                                  .build = vertical_flip_op::build,
                                  .describe = vertical_flip_op::describe,
                                  .validate = vertical_flip_op::validate,
                                  .wrap_hint = "RandomVerticalFlip has a p of its own"};

}  // namespace stoker::data::ops
