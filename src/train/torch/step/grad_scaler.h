// Dynamic loss scaling for fp16 training, with PyTorch GradScaler's rules: the loss is
// multiplied by `scale` (initially 2^16) before backward; before the optimiser step the
// gradients are divided by it and checked. Any inf/NaN: the step is skipped (counted) and
// the scale halves. After `growth_interval` (2000) clean steps in a row the scale doubles.
// Powers of two keep scaling and unscaling exact. Not thread-safe; one per training loop.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <vector>

namespace stoker::train {

class GradScaler {
 public:
  struct State {
    double scale = 65536.0;
    int64_t growth_tracker = 0;  // clean steps since the last change
    int64_t skipped = 0;         // steps skipped for inf/NaN gradients
  };

  explicit GradScaler(double init_scale = 65536.0, double growth_factor = 2.0, double backoff_factor = 0.5,
                      int64_t growth_interval = 2000);

  torch::Tensor scale(const torch::Tensor& loss) const { return loss * state_.scale; }

  // Divides the gradients of `optimizer`'s parameters by the scale and checks them for inf
  // and NaN, as PyTorch's unscale_(): call it before anything reads the gradients (clipping).
  // Once per step; step() calls it when it was not. True when every gradient is finite.
  // On CUDA one fused kernel per dtype and one device sync; on the CPU one sync as well.
  bool unscale(torch::optim::Optimizer& optimizer);

  // Unscales (unless unscale() already did), then steps `optimizer` unless a gradient held an
  // inf or NaN; then updates the scale. True when the optimiser stepped.
  bool step(torch::optim::Optimizer& optimizer);

  const State& state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

 private:
  State state_;
  double growth_factor_, backoff_factor_;
  int64_t growth_interval_;
  std::optional<bool> unscaled_finite_;  // set by unscale(), cleared by step()
};

}  // namespace stoker::train
