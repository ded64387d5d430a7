// The transforms whose whole setting is one probability p, torchvision's Transform(p=...):
// RandomHorizontalFlip, RandomVerticalFlip, RandomGrayscale. Each file names its transform with a
// traits struct, and probability_op<Traits>() makes its registry entry (registry.h): p by
// position or keyword (the default when not given), written back as "Name(p)" when > 0, checked
// to lie in [0, 1], off in evaluation, and not wrappable by RandomApply, since p is already its
// own.
//
// Traits: kName (const char*), kExample (a call for the registry's test), kDefaultP, kWrapHint
// (RandomApply's refusal), kPart, the transform's ProbabilitySpec member of TransformSpec,
// kDrawn, the SampleParams member its draw sets (one bernoulli(p), only when p > 0),
// kPointMap and kRun, its TransformOp::point_map and run (null for none), and kDoc, what the
// reference page says of it.
// Thread safety and errors: as registry.h's entries.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "registry.h"

namespace stoker::data::ops {

template <typename Traits>
struct ProbabilityOp {
  static constexpr std::string_view kParams[] = {"p"};
  static constexpr OpName kNames[] = {{Traits::kName, kParams, Traits::kExample}};

  static void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
    (state.spec.*Traits::kPart).p = args[0] ? chain::to_number(call, "p", *args[0]) : Traits::kDefaultP;
  }
  static void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
    const ProbabilitySpec& part = spec.*Traits::kPart;
    if (part.enabled()) parts->push_back(fmt::format("{}({})", Traits::kName, part.p));
  }
  static void validate(const TransformSpec& spec) { spec::check_probability(Traits::kName, (spec.*Traits::kPart).p); }
  static void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
    const ProbabilitySpec& part = spec.*Traits::kPart;
    if (part.enabled()) params->*Traits::kDrawn = rng.bernoulli(part.p);
  }
  static void for_eval(const TransformSpec& /*train*/, TransformSpec* eval) { eval->*Traits::kPart = {}; }
};

template <typename Traits>
constexpr TransformOp probability_op() {
  using Op = ProbabilityOp<Traits>;
  return TransformOp{.names = Op::kNames,
                     .build = Op::build,
                     .describe = Op::describe,
                     .validate = Op::validate,
                     .draw = Op::draw,
                     .point_map = Traits::kPointMap,
                     .run = Traits::kRun,
                     .wrap_hint = Traits::kWrapHint,
                     .for_eval = Op::for_eval,
                     .on_gpu = Traits::kOnGpu,
                     .doc = Traits::kDoc};
}

}  // namespace stoker::data::ops
