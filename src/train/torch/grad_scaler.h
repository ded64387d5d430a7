// Dynamic loss scaling for fp16 training, with PyTorch GradScaler's rules: the loss is
// multiplied by `scale` (initially 2^16) before backward; before the optimiser step the
// gradients are divided by it and checked. Any inf/NaN: the step is skipped (counted) and
// the scale halves. After `growth_interval` (2000) clean steps in a row the scale doubles.
// Powers of two keep scaling and unscaling exact. Not thread-safe; one per training loop.
#pragma once

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

  // Unscales the gradients of `optimizer`'s parameters and steps it unless one of them holds
  // an inf or NaN; then updates the scale. True when the optimiser stepped.
  bool step(torch::optim::Optimizer& optimizer);

  const State& state() const { return state_; }
  void set_state(const State& state) { state_ = state; }

 private:
  State state_;
  double growth_factor_, backoff_factor_;
  int64_t growth_interval_;
};

}  // namespace stoker::train
