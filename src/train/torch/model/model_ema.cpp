#include "train/torch/model/model_ema.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace stoker::train {

namespace {

// The average's tensors paired with the model's, in module order (the same architecture, so
// the same order), split into the floating-point ones (averaged) and the rest (copied).
struct TensorPairs {
  std::vector<torch::Tensor> average_float, model_float, average_other, model_other;
};

TensorPairs pair_up(const Network& average, const Network& model) {
  TensorPairs pairs;
  auto add = [&](const std::vector<torch::Tensor>& mine, const std::vector<torch::Tensor>& theirs) {
    if (mine.size() != theirs.size()) throw std::logic_error("ModelEma: the average and the model differ in shape");
    for (size_t i = 0; i < mine.size(); ++i) {
      if (!mine[i].defined() || !theirs[i].defined()) continue;
      const bool floating = mine[i].is_floating_point();
      (floating ? pairs.average_float : pairs.average_other).push_back(mine[i]);
      (floating ? pairs.model_float : pairs.model_other).push_back(theirs[i].detach());
    }
  };
  add(average.parameters(), model.parameters());
  add(average.buffers(), model.buffers());
  return pairs;
}

void copy_each(std::vector<torch::Tensor>& to, const std::vector<torch::Tensor>& from) {
  for (size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
}

}  // namespace

ModelEma::ModelEma(std::shared_ptr<Network> average, const Network& model, const AveragePlan& plan)
    : average_(std::move(average)), plan_(plan) {
  average_->eval();
  for (auto& p : average_->parameters()) p.set_requires_grad(false);
  restart_from(model);
}

double ModelEma::next_decay() const {
  if (!plan_.ramp) return plan_.decay;
  const double n = static_cast<double>(updates_);
  return std::min(plan_.decay, (1 + n) / (10 + n));
}

void ModelEma::after_step(const Network& model, int64_t step) {
  // By the run's count, so a resumed run updates on the same steps.
  if ((step + 1) % plan_.every_steps != 0) return;
  // torchvision's AveragedModel copies where its n_averaged is 0: at its first update, and at
  // the first after the warmup (its script zeroes n_averaged at each update there).
  const bool no_average_yet = !plan_.ramp && (updates_ == 0 || step - plan_.every_steps < plan_.copy_until_step);
  if (step < plan_.copy_until_step || no_average_yet) {
    copy_weights(model);
    ++updates_;
    return;
  }
  update(model);
}

void ModelEma::update(const Network& model) {
  torch::NoGradGuard no_grad;
  TensorPairs pairs = pair_up(*average_, model);
  const double d = next_decay();
  if (!pairs.average_float.empty()) {
    // Two fused passes over every tensor (one kernel each on CUDA): d·average, + (1 − d)·weight.
    torch::_foreach_mul_(pairs.average_float, d);
    torch::_foreach_add_(pairs.average_float, pairs.model_float, 1 - d);
  }
  copy_each(pairs.average_other, pairs.model_other);
  ++updates_;
}

void ModelEma::restart_from(const Network& model) {
  copy_weights(model);
  updates_ = 0;
}

void ModelEma::copy_weights(const Network& model) {
  torch::NoGradGuard no_grad;
  TensorPairs pairs = pair_up(*average_, model);
  copy_each(pairs.average_float, pairs.model_float);
  copy_each(pairs.average_other, pairs.model_other);
}

}  // namespace stoker::train
