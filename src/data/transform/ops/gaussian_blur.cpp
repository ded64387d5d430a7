// GaussianBlur(kernel_size, sigma=(0.1, 2.0)): torchvision's, odd kernel sides, sigma drawn per
// sample (GaussianBlurSpec). RandomApply may wrap it.
#include "data/transform/gaussian_blur.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "data/transform/stage_image.h"
#include "draws.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace gaussian_blur_op {

using chain::Value;

constexpr std::string_view kParams[] = {"kernel_size", "sigma"};
constexpr OpName kNames[] = {{"GaussianBlur", kParams, "GaussianBlur((3, 5), sigma=(0.5, 1.5))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's: a kernel of odd sides `kernel_size` (one number or (x, y)), its sigma drawn per sample from "
    "`sigma` (a number, or a range; default (0.1, 2.0)).";

// kernel_size: an int or torchvision's (x, y); sigma: a number or (min, max).
void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(fmt::format("GaussianBlur needs a kernel_size, e.g. GaussianBlur(23) (got '{}')", call.text));
  }
  GaussianBlurSpec& b = state.spec.blur;
  b = GaussianBlurSpec{};
  if (args[0]->kind == Value::Kind::kTuple && args[0]->items.size() == 2) {
    b.kernel_w = chain::to_int(call, "kernel_size", args[0]->items[0], 1, spec::kMaxSize);
    b.kernel_h = chain::to_int(call, "kernel_size", args[0]->items[1], 1, spec::kMaxSize);
  } else {
    b.kernel_w = b.kernel_h = chain::to_size_pair(call, "kernel_size", *args[0])[0];
  }
  if (args[1] && args[1]->kind == Value::Kind::kTuple) {
    const auto [lo, hi] = chain::to_range(call, "sigma", *args[1]);
    b.sigma_min = lo;
    b.sigma_max = hi;
  } else if (args[1]) {
    b.sigma_min = b.sigma_max = chain::to_number(call, "sigma", *args[1]);
  }
}

constexpr Step kStepOf[] = {Step::kGaussianBlur};

std::string text(const TransformSpec& spec, Step step) {
  const GaussianBlurSpec& b = spec.blur;
  if (step != Step::kGaussianBlur || !b.enabled()) return "";
  const std::string k =
      b.kernel_w == b.kernel_h ? fmt::format("{}", b.kernel_w) : fmt::format("({}, {})", b.kernel_w, b.kernel_h);
  const std::string sigma =
      b.sigma_min == b.sigma_max ? fmt::format("{}", b.sigma_min) : fmt::format("({}, {})", b.sigma_min, b.sigma_max);
  return fmt::format("GaussianBlur({}, sigma={})", k, sigma);
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  spec::push_step(parts, spec, Step::kGaussianBlur, text(spec, Step::kGaussianBlur), spec.blur.apply_p);
}

void validate(const TransformSpec& spec) {
  const GaussianBlurSpec& b = spec.blur;
  if (b.kernel_w != 0 || b.kernel_h != 0) {
    for (const int k : {b.kernel_w, b.kernel_h}) {
      if (k < 1 || k > spec::kMaxSize || k % 2 == 0) {
        throw UsageError(
            fmt::format("GaussianBlur kernel_size must be odd and positive, as torchvision's (got {})", k));
      }
    }
    if (!(b.sigma_min > 0 && b.sigma_min <= b.sigma_max && std::isfinite(b.sigma_max))) {
      throw UsageError(
          fmt::format("GaussianBlur sigma must satisfy 0 < min <= max (got ({}, {}))", b.sigma_min, b.sigma_max));
    }
  }
  spec::check_apply_p("GaussianBlur", b.apply_p);
}

double* apply_p(TransformSpec* spec, std::string_view) { return &spec->blur.apply_p; }

// The sigma, one uniform in [sigma_min, sigma_max], only when enabled (and applied, and
// chosen).
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  const GaussianBlurSpec& blur = spec.blur;
  if (!blur.enabled() || !chosen(spec, *params, Step::kGaussianBlur) || !applied(blur.apply_p, rng)) return;
  params->blur_sigma = static_cast<float>(rng.uniform(blur.sigma_min, blur.sigma_max));
}

// On the float image, with the drawn sigma.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (params.blur_sigma <= 0) return;
  gaussian_blur(image.floats(), image.width(), image.height(), image.channels(), image.planar(), spec.blur.kernel_w,
                spec.blur.kernel_h, params.blur_sigma, image.scratch());
}

}  // namespace gaussian_blur_op

extern const TransformOp kGaussianBlurOp;
const TransformOp kGaussianBlurOp{.names = gaussian_blur_op::kNames,
                                  .build = gaussian_blur_op::build,
                                  .describe = gaussian_blur_op::describe,
                                  .validate = gaussian_blur_op::validate,
                                  .draw = gaussian_blur_op::draw,
                                  .run = gaussian_blur_op::run,
                                  .wrap = Wrap::kApplyP,
                                  .wrapped_p = gaussian_blur_op::apply_p,
                                  .steps = gaussian_blur_op::kStepOf,
                                  .step_text = gaussian_blur_op::text,
                                  .for_eval = off_in_eval<&TransformSpec::blur>,
                                  .doc = gaussian_blur_op::kDoc};

}  // namespace stoker::data::ops
