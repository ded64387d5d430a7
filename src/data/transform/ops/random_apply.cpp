// RandomApply(transforms, p=0.5): torchvision's, around one transform, which then runs on a
// share p of the samples at its own place in the chain. What it may wrap is each entry's Wrap
// (registry.h): a transform without a p of its own gets p as its apply_p; a colour operation,
// which has one, gets the product of the two. It describes nothing of its own: each wrapped
// transform writes itself inside RandomApply (spec::applied_text), and checks its apply_p.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace random_apply_op {

using chain::Value;

constexpr std::string_view kParams[] = {"transforms", "p"};
constexpr OpName kNames[] = {{"RandomApply", kParams, "RandomApply([GaussianBlur(3)], p=0.25)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's, around one transform, which then runs on a share `p` of the samples at its own place in the "
    "chain. It takes the transforms marked so in the table above; a transform with a `p` of its own takes the product "
    "of the two. SimCLR's `RandomApply([ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8)`; BYOL's second view "
    "`RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), RandomGrayscale(0.2), RandomApply([GaussianBlur(23)], "
    "p=0.1), RandomSolarize(128, p=0.2)`.";

constexpr std::string_view kTakes = kWrappable;

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0] || args[0]->kind != Value::Kind::kTuple || args[0]->items.empty()) {
    throw UsageError(fmt::format(
        "RandomApply needs a list of one transform ({}), e.g. RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], "
        "p=0.8) (got '{}')",
        kTakes, call.text));
  }
  const std::vector<Value>& items = args[0]->items;
  if (items.size() > 1) {
    throw UsageError(fmt::format(
        "RandomApply takes one transform in stoker (got {}: {}); write one RandomApply per transform, knowing "
        "that each then draws its own chance where torchvision's one RandomApply draws one for all",
        items.size(), args[0]->text));
  }
  const Value& inner = items[0];
  const chain::Call applied =
      inner.kind == Value::Kind::kCall ? *inner.call : chain::Call{chain::transform_name(inner.text), inner.text, {}};
  const std::string& name = applied.name;
  const double p = args[1] ? chain::to_number(call, "p", *args[1]) : 0.5;
  const FoundOp found = find_op(name);
  const Wrap wrap = found.op != nullptr ? found.op->wrap : Wrap::kNo;
  if (wrap == Wrap::kNo) {
    const std::string hint =
        found.op != nullptr && !found.op->wrap_hint.empty() ? fmt::format("; {}", found.op->wrap_hint) : "";
    throw UsageError(fmt::format("RandomApply takes {} (got '{}'){}", kTakes, inner.text, hint));
  }
  chain::apply_call(state, applied);
  double* wrapped = found.op->wrapped_p(&state.spec, name);
  if (wrap == Wrap::kScaleP) {
    // Its own coin and RandomApply's, both drawn per sample: one coin of the product, so
    // RandomApply's p is checked here; validate() sees only the product.
    spec::check_apply_p(name.c_str(), p);
    *wrapped *= p;
  } else {
    *wrapped = p;  // kept as given: validate() says when it is outside [0, 1]
  }
}

}  // namespace random_apply_op

extern const TransformOp kRandomApplyOp;
const TransformOp kRandomApplyOp{
    .names = random_apply_op::kNames, .build = random_apply_op::build, .doc = random_apply_op::kDoc};

}  // namespace stoker::data::ops
