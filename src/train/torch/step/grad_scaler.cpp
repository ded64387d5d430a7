#include "train/torch/step/grad_scaler.h"

#include <map>

namespace stoker::train {

namespace {

// Multiplies every gradient by `inverse`; true when all of them are finite afterwards.
bool unscale_and_check(const std::vector<torch::Tensor>& grads, double inverse) {
  if (grads.empty()) return true;
  const torch::Device device = grads.front().device();
  if (device.is_cuda()) {
    // PyTorch's GradScaler's own fused kernel (CUDA only in 1.13): a multi-tensor unscale and
    // check per dtype, writing one flag on the device.
    const auto options = torch::TensorOptions().dtype(torch::kFloat).device(device);
    torch::Tensor found_inf = torch::zeros({1}, options);
    const torch::Tensor inverse_scale = torch::full({1}, inverse, options);
    std::map<at::ScalarType, std::vector<torch::Tensor>> by_dtype;
    for (const auto& g : grads) by_dtype[g.scalar_type()].push_back(g);
    for (auto& [dtype, list] : by_dtype) at::_amp_foreach_non_finite_check_and_unscale_(list, found_inf, inverse_scale);
    return found_inf.item<float>() == 0;
  }
  std::vector<torch::Tensor> finite;
  finite.reserve(grads.size());
  for (const auto& g : grads) {
    g.mul_(inverse);
    finite.push_back(torch::isfinite(g).all());
  }
  return torch::stack(finite).all().item<bool>();  // the one sync
}

}  // namespace

GradScaler::GradScaler(double init_scale, double growth_factor, double backoff_factor, int64_t growth_interval)
    : growth_factor_(growth_factor), backoff_factor_(backoff_factor), growth_interval_(growth_interval) {
  state_.scale = init_scale;
}

bool GradScaler::unscale(torch::optim::Optimizer& optimizer) {
  if (unscaled_finite_) return *unscaled_finite_;
  std::vector<torch::Tensor> grads;
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) {
      if (p.grad().defined()) grads.push_back(p.mutable_grad());
    }
  }
  unscaled_finite_ = unscale_and_check(grads, 1.0 / state_.scale);
  return *unscaled_finite_;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  const bool finite = unscale(optimizer);
  unscaled_finite_.reset();
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
