// RandomChoice(transforms, p=None) and RandomOrder(transforms): torchvision's, over the
// transforms RandomApply takes (each entry's steps, registry.h). Like RandomApply they are not
// nodes of their own: each member is applied to the spec as if written alone, and the group
// is the set of steps it holds (StepGroupSpec), which the draws and the run consult. They
// describe their members in Step order, which is the order they are kept in.
#include <fmt/format.h>

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

namespace step_groups_op {

using chain::Value;

constexpr std::string_view kChoiceParams[] = {"transforms", "p"};
constexpr std::string_view kOrderParams[] = {"transforms"};
constexpr OpName kChoiceNames[] = {
    {"RandomChoice", kChoiceParams, "RandomChoice([GaussianBlur(3), RandomInvert(1.0)], p=[0.25, 0.75])"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kChoiceDoc =
    "Torchvision's: one of its transforms per sample, by the weights `p` (equal when not given). Its members are "
    "transforms `RandomApply` takes, each at most once, and run one after another at the place of the first.";
constexpr OpName kOrderNames[] = {{"RandomOrder", kOrderParams, "RandomOrder([ColorJitter(0.4), RandomInvert(0.5)])"}};
constexpr std::string_view kOrderDoc =
    "Torchvision's: all of its transforms, in an order drawn per sample. Its members are transforms `RandomApply` "
    "takes, each at most once, and run one after another at the place of the first.";

StepGroupSpec& group_of(TransformSpec& spec, const chain::Call& call) {
  return call.name == "RandomChoice" ? spec.choice : spec.order;
}

// The step's text as its entry writes it alone.
std::string member_text(const TransformSpec& spec, Step step) {
  for (const TransformOp* op : registry()) {
    if (op->step_text == nullptr) continue;
    std::string text = op->step_text(spec, step);
    if (!text.empty()) return text;
  }
  return "";
}

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  const bool choice = call.name == "RandomChoice";
  if (!args[0] || args[0]->kind != Value::Kind::kTuple || args[0]->items.empty()) {
    throw UsageError(
        fmt::format("{} needs a list of transforms ({}), e.g. {}([GaussianBlur(3), RandomInvert(1.0)]) "
                    "(got '{}')",
                    call.name, kWrappable, call.name, call.text));
  }
  const std::vector<Value>& items = args[0]->items;
  std::vector<double> weights(items.size(), 1.0);
  if (choice && args[1] && !chain::is_none(*args[1])) {
    const Value& p = *args[1];
    if (p.kind != Value::Kind::kTuple || p.items.size() != items.size()) {
      throw UsageError(fmt::format("RandomChoice p must be a list of one weight per transform ({} here) (got '{}')",
                                   items.size(), p.text));
    }
    for (size_t i = 0; i < items.size(); ++i) weights[i] = chain::to_number(call, "p", p.items[i]);
  }
  StepGroupSpec& group = group_of(state.spec, call);
  group = StepGroupSpec{};
  for (size_t i = 0; i < items.size(); ++i) {
    const Value& inner = items[i];
    const chain::Call member =
        inner.kind == Value::Kind::kCall ? *inner.call : chain::Call{chain::transform_name(inner.text), inner.text, {}};
    const FoundOp found = find_op(member.name);
    Step step{};
    if (!step_of(found, &step)) {
      throw UsageError(
          fmt::format("{} takes {} (got '{}'); apply the others outside it, or on the batch in the training loop",
                      call.name, kWrappable, inner.text));
    }
    const StepGroupSpec& other = choice ? state.spec.order : state.spec.choice;
    if (other.has(step)) {
      throw UsageError(fmt::format("{} is in both RandomChoice and RandomOrder; give it to one", member.name));
    }
    chain::apply_call(state, member);  // refuses a transform given twice, here or elsewhere
    if (member_text(state.spec, step).empty()) {
      throw UsageError(
          fmt::format("{} changes nothing as written ('{}'); leave it out of {}", member.name, inner.text, call.name));
    }
    group.members = static_cast<uint16_t>(group.members | (1u << static_cast<int>(step)));
    group.weight[static_cast<size_t>(step)] = weights[i];
  }
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts, const StepGroupSpec& group,
              const char* name) {
  if (!group.enabled()) return;
  std::string members, weights;
  bool equal = true;
  double first = -1;
  for (int s = 0; s < kSteps; ++s) {
    const auto step = static_cast<Step>(s);
    if (!group.has(step)) continue;
    const double w = group.weight[static_cast<size_t>(s)];
    if (first < 0) first = w;
    equal = equal && w == first;
    members += (members.empty() ? "" : ", ") + member_text(spec, step);
    weights += fmt::format("{}{}", weights.empty() ? "" : ", ", w);
  }
  std::string text = fmt::format("{}([{}]", name, members);
  if (&group == &spec.choice && !equal) text += ", p=[" + weights + "]";
  parts->push_back(text + ")");
}

void describe_choice(const TransformSpec& spec, std::vector<std::string>* parts) {
  describe(spec, parts, spec.choice, "RandomChoice");
}
void describe_order(const TransformSpec& spec, std::vector<std::string>* parts) {
  describe(spec, parts, spec.order, "RandomOrder");
}

void validate_choice(const TransformSpec& spec) {
  const StepGroupSpec& group = spec.choice;
  if (!group.enabled()) return;
  double total = 0;
  for (int s = 0; s < kSteps; ++s) {
    if (!group.has(static_cast<Step>(s))) continue;
    const double w = group.weight[static_cast<size_t>(s)];
    if (!(w >= 0 && std::isfinite(w))) {
      throw UsageError(
          fmt::format("RandomChoice p must be weights >= 0 (got {} for {})", w, to_string(static_cast<Step>(s))));
    }
    total += w;
  }
  if (!(total > 0 && std::isfinite(total))) {
    throw UsageError(fmt::format("RandomChoice p must have a positive, finite sum (got {})", total));
  }
}

// RandomChoice's member, one uniform, only with a RandomChoice: the member whose cumulative
// weight, in Step order, first exceeds uniform * total, as random.choices picks.
void draw_choice(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  if (!spec.choice.enabled()) return;
  double total = 0;
  int last = 0;
  for (int s = 0; s < kSteps; ++s) {
    if (spec.choice.has(static_cast<Step>(s))) total += spec.choice.weight[static_cast<size_t>(s)];
  }
  const double x = rng.uniform() * total;
  double cumulative = 0;
  params->chosen = kSteps;
  for (int s = 0; s < kSteps && params->chosen == kSteps; ++s) {
    if (!spec.choice.has(static_cast<Step>(s))) continue;
    last = s;
    cumulative += spec.choice.weight[static_cast<size_t>(s)];
    if (x < cumulative) params->chosen = static_cast<uint8_t>(s);
  }
  if (params->chosen == kSteps) params->chosen = static_cast<uint8_t>(last);  // rounding at the top end
}

// RandomOrder's order, only with a RandomOrder: Fisher-Yates over its members in Step order
// (for i = n-1..1, swap(order[i], order[below(i + 1)])).
void draw_order(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  if (!spec.order.enabled()) return;
  int n = 0;
  for (int s = 0; s < kSteps; ++s) {
    if (spec.order.has(static_cast<Step>(s))) params->order[static_cast<size_t>(n++)] = static_cast<uint8_t>(s);
  }
  for (int i = n - 1; i > 0; --i) {
    const auto j = static_cast<int>(rng.below(static_cast<uint64_t>(i + 1)));
    std::swap(params->order[static_cast<size_t>(i)], params->order[static_cast<size_t>(j)]);
  }
  params->order_size = n;
}

}  // namespace step_groups_op

extern const TransformOp kRandomChoiceOp;
const TransformOp kRandomChoiceOp{.names = step_groups_op::kChoiceNames,
                                  .build = step_groups_op::build,
                                  .describe = step_groups_op::describe_choice,
                                  .validate = step_groups_op::validate_choice,
                                  .draw = step_groups_op::draw_choice,
                                  .for_eval = off_in_eval<&TransformSpec::choice>,
                                  .doc = step_groups_op::kChoiceDoc};
extern const TransformOp kRandomOrderOp;
const TransformOp kRandomOrderOp{.names = step_groups_op::kOrderNames,
                                 .build = step_groups_op::build,
                                 .describe = step_groups_op::describe_order,
                                 .draw = step_groups_op::draw_order,
                                 .for_eval = off_in_eval<&TransformSpec::order>,
                                 .doc = step_groups_op::kOrderDoc};

}  // namespace stoker::data::ops
