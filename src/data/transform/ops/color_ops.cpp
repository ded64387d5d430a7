// torchvision's six single-operation colour transforms, one row each: RandomInvert(p=0.5),
// RandomPosterize(bits, p=0.5), RandomSolarize(threshold, p=0.5),
// RandomAdjustSharpness(sharpness_factor, p=0.5), RandomAutocontrast(p=0.5), RandomEqualize(p=0.5)
// (ColorOpSpec, indexed by ColorOp). One entry for the six: they share the spec's color_ops and
// are described and checked together. Each has a p of its own; inside RandomApply the two
// multiply.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "data/transform/auto_augment.h"
#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "data/transform/stage_image.h"
#include "draws.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace color_ops_op {

constexpr std::string_view kP[] = {"p"};
constexpr std::string_view kPosterizeParams[] = {"bits", "p"};
constexpr std::string_view kSolarizeParams[] = {"threshold", "p"};
constexpr std::string_view kSharpnessParams[] = {"sharpness_factor", "p"};
// In ColorOp's order; the names are to_string(ColorOp)'s (the test checks).
constexpr OpName kNames[] = {{"RandomInvert", kP, "RandomInvert(0.25)"},
                             {"RandomPosterize", kPosterizeParams, "RandomPosterize(4, p=0.25)"},
                             {"RandomSolarize", kSolarizeParams, "RandomSolarize(128, p=0.2)"},
                             {"RandomAdjustSharpness", kSharpnessParams, "RandomAdjustSharpness(2, p=0.5)"},
                             {"RandomAutocontrast", kP, "RandomAutocontrast(p=0.75)"},
                             {"RandomEqualize", kP, "RandomEqualize()"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's single-operation colour transforms, each with its own `p`, after `GaussianBlur`, tested equal to "
    "torchvision's classes. `RandomPosterize` keeps `bits` (0 to 8) bits; `RandomSolarize` inverts the pixels at or "
    "above `threshold`, a pixel value in [0, 255] as on a PIL image (a threshold in (0, 1), written for a float "
    "image, is refused with the value to write); `RandomAdjustSharpness` takes `sharpness_factor` ≥ 0 (0 blurs, 1 is "
    "the image, 2 sharpens). Inside `RandomApply` the two probabilities multiply.";
static_assert(std::size(kNames) == kColorOps);

// What a call that forgets the value is shown, e.g. RandomSolarize(128, p=0.2); null for none.
constexpr const char* kExamples[] = {nullptr, "4, p=0.5", "128, p=0.2", "2, p=0.5", nullptr, nullptr};

size_t index_of(std::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i) {
    if (kNames[i].name == name) return i;
  }
  return 0;  // not reached: the registry calls with one of kNames
}

// The value argument's name (bits, threshold, sharpness_factor); empty for the p-only ones.
std::string_view value_name(size_t i) { return kNames[i].params.size() > 1 ? *kNames[i].params.begin() : ""; }

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  const size_t i = index_of(call.name);
  ColorOpSpec& c = state.spec.color_ops[i];
  const std::string_view value = value_name(i);
  if (value.empty()) {
    c.p = args[0] ? chain::to_number(call, "p", *args[0]) : 0.5;
    return;
  }
  if (!args[0]) {
    throw UsageError(
        fmt::format("{} needs its {}, e.g. {}({}) (got '{}')", call.name, value, call.name, kExamples[i], call.text));
  }
  c.value = static_cast<ColorOp>(i) == ColorOp::kPosterize ? chain::to_int(call, value, *args[0], 0, 8)
                                                           : chain::to_number(call, value, *args[0]);
  c.p = args[1] ? chain::to_number(call, "p", *args[1]) : 0.5;
}

// Each name's step, in kNames' order.
constexpr Step kStepOf[] = {Step::kInvert,          Step::kPosterize,    Step::kSolarize,
                            Step::kAdjustSharpness, Step::kAutocontrast, Step::kEqualize};
static_assert(std::size(kStepOf) == kColorOps);

std::string text(const TransformSpec& spec, Step step) {
  const auto first = static_cast<int>(Step::kInvert);
  const int i = static_cast<int>(step) - first;
  if (i < 0 || i >= kColorOps) return "";
  const ColorOpSpec& c = spec.color_ops[static_cast<size_t>(i)];
  if (!c.enabled()) return "";
  const char* name = to_string(static_cast<ColorOp>(i));
  return !value_name(static_cast<size_t>(i)).empty() ? fmt::format("{}({}, p={})", name, c.value, c.p)
                                                     : fmt::format("{}(p={})", name, c.p);
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  for (const Step step : kStepOf) spec::push_step(parts, spec, step, text(spec, step));
}

void validate(const TransformSpec& spec) {
  for (size_t i = 0; i < spec.color_ops.size(); ++i) {
    spec::check_probability(to_string(static_cast<ColorOp>(i)), spec.color_ops[i].p);
  }
  const double bits = spec.color_ops[static_cast<size_t>(ColorOp::kPosterize)].value;
  if (!(bits >= 0 && bits <= 8 && std::floor(bits) == bits)) {
    throw UsageError(fmt::format("RandomPosterize bits must be a whole number in 0..8 (got {})", bits));
  }
  const double threshold = spec.color_ops[static_cast<size_t>(ColorOp::kSolarize)].value;
  if (threshold > 0 && threshold < 1) {
    // torchvision takes it in the image's units: a float tensor's 0.5 is a uint8 image's 128.
    throw UsageError(fmt::format(
        "RandomSolarize threshold is a pixel value in [0, 255], as for a PIL or uint8 image (got {}); a threshold "
        "written for a float image in [0, 1] is 255 times it here, e.g. RandomSolarize({:g}) for {}",
        threshold, std::round(255 * threshold), threshold));
  }
  if (!(threshold >= 0 && threshold <= 255)) {
    throw UsageError(fmt::format("RandomSolarize threshold must be a pixel value in [0, 255] (got {})", threshold));
  }
  const double factor = spec.color_ops[static_cast<size_t>(ColorOp::kAdjustSharpness)].value;
  if (!(factor >= 0 && std::isfinite(factor))) {
    throw UsageError(fmt::format(
        "RandomAdjustSharpness sharpness_factor must be a number >= 0 (got {}); 0 blurs, 1 is the image, 2 sharpens",
        factor));
  }
}

double* own_p(TransformSpec* spec, std::string_view name) { return &spec->color_ops[index_of(name)].p; }

// One bernoulli(p) per colour operation that is on (and chosen), in ColorOp's order.
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  for (size_t i = 0; i < spec.color_ops.size(); ++i) {
    const ColorOpSpec& op = spec.color_ops[i];
    if (op.enabled() && chosen(spec, *params, color_step(static_cast<ColorOp>(i))) && rng.bernoulli(op.p)) {
      params->color_ops = static_cast<uint8_t>(params->color_ops | (1u << i));
    }
  }
}

// `step`'s operation on the uint8 planes, when drawn for the sample.
void run(const TransformSpec& spec, const SampleParams& params, const Step* step, StageImage& image) {
  const int op = static_cast<int>(*step) - static_cast<int>(Step::kInvert);
  if ((params.color_ops >> op & 1u) == 0) return;
  apply_color_op(static_cast<ColorOp>(op), spec.color_ops[static_cast<size_t>(op)].value, image.planes(),
                 image.spare_planes(1), image.width(), image.height(), image.channels());
}

}  // namespace color_ops_op

extern const TransformOp kColorOpsOp;
const TransformOp kColorOpsOp{.names = color_ops_op::kNames,
                              .build = color_ops_op::build,
                              .describe = color_ops_op::describe,
                              .validate = color_ops_op::validate,
                              .draw = color_ops_op::draw,
                              .run = color_ops_op::run,
                              .wrap = Wrap::kScaleP,
                              .wrapped_p = color_ops_op::own_p,
                              .steps = color_ops_op::kStepOf,
                              .step_text = color_ops_op::text,
                              .for_eval = off_in_eval<&TransformSpec::color_ops>,
                              .doc = color_ops_op::kDoc};

}  // namespace stoker::data::ops
