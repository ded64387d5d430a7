// MixUp and CutMix (torchvision's --mixup-alpha / --cutmix-alpha, transforms.v2.MixUp and
// CutMix): each training batch is blended with itself rolled by one sample, and its class
// ids become soft targets mixed in the same proportion.
//   MixUp:  x ← λ·x + (1 − λ)·x.roll(1),  λ ~ Beta(α, α)
//   CutMix: a box of x.roll(1) is pasted into x: centre uniform over the image, sides
//           √(1 − λ) of the image's (clipped at the border), and λ ← 1 − box area / image area
//   targets ← λ·one_hot(y) + (1 − λ)·one_hot(y.roll(1))
// With both alphas > 0 each batch takes one of the two, with even odds (torchvision's
// RandomChoice). The draws come from a generator seeded by (seed, rank, batch index), not
// from torch's: a resumed run mixes its batches as the uninterrupted one did, and turning
// mixing on leaves every other random number of the run as it was.
// Classification only; CutMix needs images (N, C, H, W).
// Thread safety: a value; draw() and mix() are const and keep no state, so any thread may
// call them (the Stepper calls them on the training loop's thread).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <utility>

#include "stoker/train/config.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

class BatchMix {
 public:
  enum class Kind { kNone, kMixUp, kCutMix };

  // What one batch gets: the kind, λ (the weight of the batch's own samples) and, for
  // CutMix, the pasted box [x0, x1) × [y0, y1) in pixels.
  struct Draw {
    Kind kind = Kind::kNone;
    double lambda = 1;
    int64_t x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  };

  BatchMix() = default;
  // `classes`: the classifier's outputs; `seed` and `rank` pick the stream of draws.
  BatchMix(double mixup_alpha, double cutmix_alpha, int64_t classes, uint64_t seed, int rank = 0);
  static BatchMix from_config(const TrainConfig& cfg, int64_t classes, int rank = 0) {
    return BatchMix(cfg.mixup_alpha, cfg.cutmix_alpha, classes, cfg.seed, rank);
  }

  bool active() const { return mixup_alpha_ > 0 || cutmix_alpha_ > 0; }

  // The draw for batch number `index` (counted over the run, so it survives a resume) of
  // images `height` × `width`. Deterministic in (seed, rank, index).
  Draw draw(int64_t index, int64_t height, int64_t width) const;

  // Mixes `x` (float, (N, F) or (N, C, H, W); not modified) and its class ids `y` ((N)
  // int64, same device) per draw(index): returns the mixed batch and (N, classes) float32
  // soft targets. Inactive: returns x and y as they are.
  std::pair<torch::Tensor, torch::Tensor> mix(const torch::Tensor& x, const torch::Tensor& y, int64_t index) const;

 private:
  double mixup_alpha_ = 0, cutmix_alpha_ = 0;
  int64_t classes_ = 0;
  uint64_t seed_ = 0;
  int rank_ = 0;
};

}  // namespace stoker::train
