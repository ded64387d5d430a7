#include "train/torch/step/batch_mix.h"

#include <algorithm>
#include <cmath>

#include "stoker/core/distributions.h"
#include "stoker/core/rng.h"

namespace stoker::train {

namespace {

// Tags the draws' stream apart from the pipeline's (seed, epoch, sample) streams.
constexpr uint64_t kMixStream = 0x6d69785f62617463ULL;  // "mix_batc"

}  // namespace

BatchMix::BatchMix(double mixup_alpha, double cutmix_alpha, int64_t classes, uint64_t seed, int rank)
    : mixup_alpha_(mixup_alpha), cutmix_alpha_(cutmix_alpha), classes_(classes), seed_(seed), rank_(rank) {}

BatchMix::Draw BatchMix::draw(int64_t index, int64_t height, int64_t width) const {
  Draw d;
  if (!active()) return d;
  SampleRng rng(seed_, kMixStream ^ static_cast<uint64_t>(rank_), static_cast<uint64_t>(index));
  const bool cutmix = cutmix_alpha_ > 0 && (mixup_alpha_ == 0 || rng.bernoulli(0.5));
  d.kind = cutmix ? Kind::kCutMix : Kind::kMixUp;
  d.lambda = beta_draw(rng, cutmix ? cutmix_alpha_ : mixup_alpha_);
  if (!cutmix) return d;
  // torchvision's CutMix._get_params: a centre anywhere, half-sides r·W and r·H with
  // r = ½·√(1 − λ), clipped at the border; λ is then the share the box left uncovered.
  const int64_t cx = static_cast<int64_t>(rng.below(static_cast<uint64_t>(width)));
  const int64_t cy = static_cast<int64_t>(rng.below(static_cast<uint64_t>(height)));
  const double r = 0.5 * std::sqrt(1 - d.lambda);
  const auto half_w = static_cast<int64_t>(r * static_cast<double>(width));
  const auto half_h = static_cast<int64_t>(r * static_cast<double>(height));
  d.x0 = std::max<int64_t>(cx - half_w, 0);
  d.y0 = std::max<int64_t>(cy - half_h, 0);
  d.x1 = std::min(cx + half_w, width);
  d.y1 = std::min(cy + half_h, height);
  d.lambda = 1 - static_cast<double>((d.x1 - d.x0) * (d.y1 - d.y0)) / static_cast<double>(width * height);
  return d;
}

std::pair<torch::Tensor, torch::Tensor> BatchMix::mix(const torch::Tensor& x, const torch::Tensor& y,
                                                      int64_t index) const {
  if (!active()) return {x, y};
  const bool images = x.dim() == 4;
  const Draw d = draw(index, images ? x.size(2) : 1, images ? x.size(3) : 1);
  const torch::Tensor other = x.roll(1, 0);
  torch::Tensor mixed;
  if (d.kind == Kind::kCutMix) {
    TORCH_CHECK(images, "CutMix needs images (N, C, H, W)");
    mixed = x.clone();
    mixed.narrow(2, d.y0, d.y1 - d.y0)
        .narrow(3, d.x0, d.x1 - d.x0)
        .copy_(other.narrow(2, d.y0, d.y1 - d.y0).narrow(3, d.x0, d.x1 - d.x0));
  } else {
    mixed = x.mul(d.lambda).add_(other, 1 - d.lambda);
  }
  const torch::Tensor one_hot = torch::one_hot(y, classes_).to(torch::kFloat32);
  torch::Tensor targets = one_hot.mul(d.lambda).add_(one_hot.roll(1, 0), 1 - d.lambda);
  return {mixed, targets};
}

}  // namespace stoker::train
