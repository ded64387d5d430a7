// The automatic augmentations, torchvision's TrivialAugmentWide, RandAugment, AutoAugment and
// AugMix (AutoAugmentSpec): one entry for the four, since a chain takes one of them and they
// share the spec's auto_augment, its interpolation and fill.
#include "data/transform/auto_augment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "data/transform/stage_image.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace auto_augment_op {

constexpr std::string_view kTrivialParams[] = {"num_magnitude_bins", "interpolation", "fill"};
constexpr std::string_view kRandParams[] = {"num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill"};
constexpr std::string_view kAutoParams[] = {"policy", "interpolation", "fill"};
constexpr std::string_view kAugMixParams[] = {"severity", "mixture_width", "chain_depth", "alpha",
                                              "all_ops",  "interpolation", "fill"};
constexpr OpName kNames[] = {
    {"TrivialAugmentWide", kTrivialParams, "TrivialAugmentWide(num_magnitude_bins=21, fill=(1, 2, 3))"},
    {"RandAugment", kRandParams, "RandAugment(num_ops=3, magnitude=5)"},
    {"AutoAugment", kAutoParams, "AutoAugment(policy=cifar10)"},
    {"AugMix", kAugMixParams, "AugMix(severity=4, chain_depth=2, all_ops=False)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's automatic augmentations, one per chain, run after the warps and before `ColorJitter`: "
    "TrivialAugmentWide, RandAugment, AutoAugment (`policy` imagenet, cifar10 or svhn) and AugMix, with their "
    "operations, magnitudes and `fill` as torchvision draws them. Their rotations and shears sample as torchvision's "
    "tensor transforms do: `interpolation` nearest or bilinear, or bicubic (torchvision's references pass it with "
    "`--interpolation bicubic`) as `grid_sample`'s bicubic, its values clamped to [0, 255]. "
    "Keypoints, boxes and masks cannot follow them: a chain with targets that move is refused.";

// One automatic augmentation per chain.
void claim(chain::ChainState& state, const chain::Call& call) {
  if (!state.auto_augment_by.empty()) {
    throw UsageError(fmt::format(
        "{} conflicts with {}: give one automatic augmentation (TrivialAugmentWide, RandAugment, AutoAugment or "
        "AugMix)",
        call.name, state.auto_augment_by));
  }
  state.auto_augment_by = call.name;
}

void build(chain::ChainState& state, const chain::Call& call, const Args& all) {
  AutoAugmentSpec& a = state.spec.auto_augment;
  Args args;  // num_magnitude_bins, interpolation, fill: null where the call does not take or give it
  if (call.name == "TrivialAugmentWide") {
    a.kind = AutoAugmentKind::kTrivialAugmentWide;
    args = all;
  } else if (call.name == "RandAugment") {
    a.kind = AutoAugmentKind::kRandAugment;
    if (all[0]) a.num_ops = chain::to_int(call, "num_ops", *all[0], 0, AutoAugmentSpec::kMaxOps);
    if (all[1]) a.magnitude = chain::to_int(call, "magnitude", *all[1], 0, 999);
    args = {all[2], all[3], all[4]};
  } else if (call.name == "AugMix") {
    a.kind = AutoAugmentKind::kAugMix;
    a.interpolation = Interpolation::kBilinear;  // AugMix's default
    if (all[0]) a.severity = chain::to_int(call, "severity", *all[0], 1, 10);
    if (all[1]) a.mixture_width = chain::to_int(call, "mixture_width", *all[1], 1, AutoAugmentSpec::kMaxChains);
    if (all[2]) {
      a.chain_depth = chain::to_int(call, "chain_depth", *all[2], -1, AutoAugmentSpec::kMaxDepth);  // 0: validate()
    }
    if (all[3]) a.alpha = chain::to_number(call, "alpha", *all[3]);
    if (all[4]) a.all_ops = chain::to_bool(call, "all_ops", *all[4]);
    args = {nullptr, all[5], all[6]};
  } else {
    a.kind = AutoAugmentKind::kAutoAugment;
    if (all[0]) {
      const std::string policy = chain::to_word(call, "policy", *all[0], {"imagenet", "cifar10", "svhn"});
      a.policy = policy == "cifar10" ? AutoAugmentPolicy::kCifar10
                 : policy == "svhn"  ? AutoAugmentPolicy::kSvhn
                                     : AutoAugmentPolicy::kImageNet;
    }
    args = {nullptr, all[1], all[2]};
  }
  if (args[0]) a.num_magnitude_bins = chain::to_int(call, "num_magnitude_bins", *args[0], 2, 1000);
  if (args[1]) a.interpolation = chain::to_interpolation(call, *args[1], /*bicubic=*/true);
  if (args[2] && !chain::is_none(*args[2])) {
    a.has_fill = true;
    a.fill = chain::to_channels(call, "fill", *args[2]);
  }
}

const char* policy_name(AutoAugmentPolicy policy) {
  switch (policy) {
    case AutoAugmentPolicy::kCifar10:
      return "cifar10";
    case AutoAugmentPolicy::kSvhn:
      return "svhn";
    case AutoAugmentPolicy::kImageNet:
      break;
  }
  return "imagenet";
}

// The arguments that differ from torchvision's defaults, e.g. "RandAugment(magnitude=5)".
void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const AutoAugmentSpec& a = spec.auto_augment;
  if (!a.enabled()) return;
  const AutoAugmentSpec defaults;
  std::vector<std::string> args;
  if (a.kind == AutoAugmentKind::kAutoAugment && a.policy != defaults.policy) {
    args.push_back(fmt::format("policy={}", policy_name(a.policy)));
  }
  if (a.kind == AutoAugmentKind::kRandAugment) {
    if (a.num_ops != defaults.num_ops) args.push_back(fmt::format("num_ops={}", a.num_ops));
    if (a.magnitude != defaults.magnitude) args.push_back(fmt::format("magnitude={}", a.magnitude));
  }
  const bool mix = a.kind == AutoAugmentKind::kAugMix;
  if (mix) {
    if (a.severity != defaults.severity) args.push_back(fmt::format("severity={}", a.severity));
    if (a.mixture_width != defaults.mixture_width) args.push_back(fmt::format("mixture_width={}", a.mixture_width));
    if (a.chain_depth != defaults.chain_depth) args.push_back(fmt::format("chain_depth={}", a.chain_depth));
    if (a.alpha != defaults.alpha) args.push_back(fmt::format("alpha={}", a.alpha));
    if (!a.all_ops) args.emplace_back("all_ops=False");
  }
  if (a.kind != AutoAugmentKind::kAutoAugment && !mix && a.num_magnitude_bins != defaults.num_magnitude_bins) {
    args.push_back(fmt::format("num_magnitude_bins={}", a.num_magnitude_bins));
  }
  // Each one's default: bilinear for AugMix, nearest for the others.
  if (a.interpolation == Interpolation::kBicubic) {
    args.emplace_back("interpolation=bicubic");
  } else if ((a.interpolation == Interpolation::kBilinear) != mix) {
    args.push_back(fmt::format("interpolation={}", mix ? "nearest" : "bilinear"));
  }
  if (a.has_fill) args.push_back(fmt::format("fill=({}, {}, {})", a.fill[0], a.fill[1], a.fill[2]));
  parts->push_back(fmt::format("{}({})", to_string(a.kind), fmt::join(args, ", ")));
}

void validate(const TransformSpec& spec) {
  const AutoAugmentSpec& a = spec.auto_augment;
  if (!a.enabled()) return;
  const char* name = to_string(a.kind);
  if (a.num_ops < 0 || a.num_ops > AutoAugmentSpec::kMaxOps) {
    throw UsageError(fmt::format("{} num_ops must be in 0..{} (got {})", name, AutoAugmentSpec::kMaxOps, a.num_ops));
  }
  if (a.num_magnitude_bins < 2 || a.num_magnitude_bins > 1000) {
    throw UsageError(fmt::format("{} num_magnitude_bins must be in 2..1000 (got {})", name, a.num_magnitude_bins));
  }
  if (a.kind == AutoAugmentKind::kAugMix) {
    if (a.severity < 1 || a.severity > 10) {
      throw UsageError(fmt::format("AugMix severity must be in 1..10 (got {})", a.severity));
    }
    if (a.mixture_width < 1 || a.mixture_width > AutoAugmentSpec::kMaxChains) {
      throw UsageError(
          fmt::format("AugMix mixture_width must be in 1..{} (got {})", AutoAugmentSpec::kMaxChains, a.mixture_width));
    }
    if (a.chain_depth != -1 && (a.chain_depth < 1 || a.chain_depth > AutoAugmentSpec::kMaxDepth)) {
      throw UsageError(fmt::format("AugMix chain_depth must be -1 (1 to 3 at random) or 1..{} (got {})",
                                   AutoAugmentSpec::kMaxDepth, a.chain_depth));
    }
    if (!(a.alpha > 0 && std::isfinite(a.alpha))) {
      throw UsageError(fmt::format("AugMix alpha must be a number > 0 (got {})", a.alpha));
    }
  }
  if (a.kind == AutoAugmentKind::kRandAugment && !(a.magnitude >= 0 && a.magnitude < a.num_magnitude_bins)) {
    throw UsageError(fmt::format("RandAugment magnitude must be in 0..{} (num_magnitude_bins - 1) (got {})",
                                 a.num_magnitude_bins - 1, a.magnitude));
  }
  spec::check_fill(name, a.fill);
}

// Only when one is set: auto_augment.h lists its draws.
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  draw_auto_augment(spec.auto_augment, spec.out_width, spec.out_height, rng, params);
}

// The drawn operations one after another on the uint8 planes; AugMix's chains mixed.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (params.augment_steps <= 0) return;
  std::vector<uint8_t>* planes = image.planes();
  if (params.chains > 0) {
    apply_aug_mix(params, spec.auto_augment, planes, image.spare_planes(2), image.spare_planes(1), image.mix(),
                  image.width(), image.height(), image.channels());
    return;
  }
  for (int s = 0; s < params.augment_steps; ++s) {
    const SampleParams::AugmentStep& step = params.augment[static_cast<size_t>(s)];
    apply_augment_op(static_cast<AugmentOp>(step.op), step.magnitude, spec.auto_augment, planes, image.spare_planes(1),
                     image.width(), image.height(), image.channels());
  }
}

// Its operations are drawn per sample and some are not geometric maps: points do not follow.
const char* refuses_targets(const TransformSpec& spec) {
  return spec.auto_augment.kind != AutoAugmentKind::kNone ? "the automatic augmentation" : nullptr;
}

}  // namespace auto_augment_op

extern const TransformOp kAutoAugmentOp;
const TransformOp kAutoAugmentOp{.names = auto_augment_op::kNames,
                                 .claim = auto_augment_op::claim,
                                 .build = auto_augment_op::build,
                                 .describe = auto_augment_op::describe,
                                 .validate = auto_augment_op::validate,
                                 .draw = auto_augment_op::draw,
                                 .run = auto_augment_op::run,
                                 .refuses_targets = auto_augment_op::refuses_targets,
                                 .for_eval = off_in_eval<&TransformSpec::auto_augment>,
                                 .doc = auto_augment_op::kDoc};

}  // namespace stoker::data::ops
