// RandomPerspective(distortion_scale=0.5, p=0.5, interpolation=bilinear, fill=0): torchvision's,
// as its tensor implementation warps (PerspectiveSpec). It has a p of its own: inside
// RandomApply the two multiply.
#include <fmt/format.h>

#include <array>
#include <string>
#include <vector>

#include "data/transform/auto_augment.h"
#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "data/transform/stage_image.h"
#include "data/transform/warp.h"
#include "draws.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace random_perspective_op {

constexpr std::string_view kParams[] = {"distortion_scale", "p", "interpolation", "fill"};
constexpr OpName kNames[] = {
    {"RandomPerspective", kParams, "RandomPerspective(0.3, p=0.75, interpolation=nearest, fill=(1, 2, 3))"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's: its corners, drawn from `distortion_scale`, and its tensor `F.perspective`, on a share `p` of the "
    "samples. Inside `RandomApply` the two probabilities multiply.";
constexpr Step kStepOf[] = {Step::kPerspective};

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  PerspectiveSpec& s = state.spec.perspective;
  s = PerspectiveSpec{};
  s.p = 0.5;
  if (args[0]) s.distortion_scale = chain::to_number(call, "distortion_scale", *args[0]);
  if (args[1]) s.p = chain::to_number(call, "p", *args[1]);
  if (args[2]) s.interpolation = chain::to_interpolation(call, *args[2]);
  if (args[3] && !chain::is_none(*args[3])) s.fill = chain::to_channels(call, "fill", *args[3]);
}

std::string text(const TransformSpec& spec, Step step) {
  const PerspectiveSpec& s = spec.perspective;
  if (step != Step::kPerspective || !s.enabled()) return "";
  std::string t = fmt::format("RandomPerspective({}, p={}", s.distortion_scale, s.p);
  if (s.interpolation == Interpolation::kNearest) t += ", interpolation=nearest";
  if (s.fill != std::array<float, 3>{0, 0, 0}) t += ", fill=" + spec::triple_text(s.fill);
  return t + ")";
}

void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  spec::push_step(parts, spec, Step::kPerspective, text(spec, Step::kPerspective));
}

void validate(const TransformSpec& spec) {
  const PerspectiveSpec& s = spec.perspective;
  spec::check_probability("RandomPerspective", s.p);
  if (!(s.distortion_scale >= 0 && s.distortion_scale <= 1)) {
    throw UsageError(fmt::format("RandomPerspective distortion_scale must be in [0, 1] (got {})", s.distortion_scale));
  }
  spec::check_fill("RandomPerspective", s.fill);
}

double* own_p(TransformSpec* spec, std::string_view) { return &spec->perspective.p; }

// Only when enabled (and chosen): one bernoulli(p), and when it says yes the corners as
// RandomPerspective.get_params(width, height, distortion_scale) draws them in the output's
// size, each one bounded int (randint(lo, hi) is lo + below(hi - lo)): top-left x, y,
// top-right x, y, bottom-right x, y, bottom-left x, y.
void draw(const TransformSpec& spec, const DrawContext& /*context*/, SampleRng& rng, SampleParams* params) {
  const PerspectiveSpec& p = spec.perspective;
  if (!p.enabled() || !chosen(spec, *params, Step::kPerspective) || !rng.bernoulli(p.p)) return;
  const int width = spec.out_width, height = spec.out_height;
  const auto dx = static_cast<int>(p.distortion_scale * (width / 2));
  const auto dy = static_cast<int>(p.distortion_scale * (height / 2));
  const auto randint = [&rng](int lo, int hi) {
    return lo + static_cast<int>(rng.below(static_cast<uint64_t>(hi - lo)));
  };
  std::array<int, 8>& c = params->corners;
  c[0] = randint(0, dx + 1);  // top-left
  c[1] = randint(0, dy + 1);
  c[2] = randint(width - dx - 1, width);  // top-right
  c[3] = randint(0, dy + 1);
  c[4] = randint(width - dx - 1, width);  // bottom-right
  c[5] = randint(height - dy - 1, height);
  c[6] = randint(0, dx + 1);  // bottom-left
  c[7] = randint(height - dy - 1, height);
  params->perspective = true;
}

// Back: the homography its grid samples through (a point after to the point before);
// forward: its inverse, by the adjugate.
PointMap point_map(const TransformSpec& spec, const SampleParams& params) {
  if (!params.perspective) return {};
  const std::array<float, 8> c = perspective_coeffs(params.corners, spec.out_width, spec.out_height);
  const std::array<double, 9> h = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], 1.0};
  const std::array<double, 9> inv = {h[4] * h[8] - h[5] * h[7], h[2] * h[7] - h[1] * h[8], h[1] * h[5] - h[2] * h[4],
                                     h[5] * h[6] - h[3] * h[8], h[0] * h[8] - h[2] * h[6], h[2] * h[3] - h[0] * h[5],
                                     h[3] * h[7] - h[4] * h[6], h[1] * h[6] - h[0] * h[7], h[0] * h[4] - h[1] * h[3]};
  return PointMap::projective(inv, h);
}

// F.perspective on the uint8 planes: its grid, then the sampling.
void run(const TransformSpec& spec, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (!params.perspective) return;
  perspective_grid(perspective_coeffs(params.corners, image.width(), image.height()), image.width(), image.height(),
                   image.grid(0), image.grid(1));
  image.warp_planes(filled_warp(spec.perspective.interpolation, spec.perspective.fill));
}

}  // namespace random_perspective_op

extern const TransformOp kRandomPerspectiveOp;
const TransformOp kRandomPerspectiveOp{.names = random_perspective_op::kNames,
                                       .build = random_perspective_op::build,
                                       .describe = random_perspective_op::describe,
                                       .validate = random_perspective_op::validate,
                                       .draw = random_perspective_op::draw,
                                       .point_map = random_perspective_op::point_map,
                                       .run = random_perspective_op::run,
                                       .wrap = Wrap::kScaleP,
                                       .wrapped_p = random_perspective_op::own_p,
                                       .steps = random_perspective_op::kStepOf,
                                       .step_text = random_perspective_op::text,
                                       .for_eval = off_in_eval<&TransformSpec::perspective>,
                                       .doc = random_perspective_op::kDoc};

}  // namespace stoker::data::ops
