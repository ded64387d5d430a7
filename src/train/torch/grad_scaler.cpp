#include "grad_scaler.h"

namespace stoker::train {

GradScaler::GradScaler(double init_scale, double growth_factor, double backoff_factor, int64_t growth_interval)
    : growth_factor_(growth_factor), backoff_factor_(backoff_factor), growth_interval_(growth_interval) {
  state_.scale = init_scale;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  const double inverse = 1.0 / state_.scale;
  bool finite = true;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      p.mutable_grad().mul_(inverse);
      // One device sync per tensor; fine for the few dozen parameter tensors of a model.
      if (finite && !torch::isfinite(p.grad()).all().item<bool>()) finite = false;
    }
  }
  if (!finite) {
    ++state_.skipped;
    state_.scale *= backoff_factor_;
    state_.growth_tracker = 0;
    return false;
  }
  optimizer.step();
  if (++state_.growth_tracker >= growth_interval_) {
    state_.scale *= growth_factor_;
    state_.growth_tracker = 0;
  }
  return true;
}

}  // namespace stoker::train
