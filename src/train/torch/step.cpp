#include "step.h"

#include <cmath>

#include "stoker/core/clock.h"
#include "torch_compat.h"

namespace stoker::train {

namespace {

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace

double lr_at(const TrainConfig& cfg, int64_t step, int64_t total, int64_t steps_per_epoch) {
  if (cfg.warmup_steps > 0 && step < cfg.warmup_steps) {
    return cfg.lr * static_cast<double>(step + 1) / static_cast<double>(cfg.warmup_steps);
  }
  switch (cfg.schedule) {
    case ScheduleKind::kCosine: {
      const double span = std::max<int64_t>(1, total - cfg.warmup_steps);
      const double t = std::min(1.0, static_cast<double>(step - cfg.warmup_steps) / span);
      return 0.5 * cfg.lr * (1 + std::cos(M_PI * t));
    }
    case ScheduleKind::kStep: {
      const int64_t epoch = steps_per_epoch > 0 ? step / steps_per_epoch : 0;
      return cfg.lr * std::pow(cfg.step_gamma, static_cast<double>(epoch / cfg.step_every_epochs));
    }
    case ScheduleKind::kConstant:
      break;
  }
  return cfg.lr;
}

Stepper::Stepper(const TrainConfig& cfg, Network& model, torch::optim::Optimizer& optimizer, torch::Device device,
                 int64_t total_steps, int64_t steps_per_epoch, int64_t global_step)
    : cfg_(cfg), model_(model), optimizer_(optimizer), device_(device), total_steps_(total_steps),
      steps_per_epoch_(steps_per_epoch), global_step_(global_step), accumulation_(cfg.accumulation_steps) {}

Stepper::Result Stepper::step(const torch::Tensor& images, const torch::Tensor& labels) {
  Result r;
  Stopwatch watch;
  torch::Tensor x = images, y = labels;
  if (!device_.is_cpu()) {
    x = x.to(device_);
    y = y.to(device_);
  }
  r.copy_s = ns_to_seconds(watch.lap());

  torch::Tensor loss;
  {
    const bool bf16 = cfg_.amp == AmpMode::kBf16 && device_.is_cpu();
    if (bf16) compat::enable_cpu_autocast(torch::kBFloat16);
    const auto logits = model_.forward(x);
    loss = torch::nn::functional::cross_entropy(
        logits.to(torch::kFloat32), y,
        torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(cfg_.label_smoothing));
    if (bf16) compat::disable_cpu_autocast();
  }
  (loss / static_cast<double>(accumulation_)).backward();
  r.loss = loss.item<double>();
  ++micro_;
  if (micro_ % accumulation_ == 0) {
    set_lr(optimizer_, lr_at(cfg_, global_step_, total_steps_, steps_per_epoch_));
    optimizer_.step();
    compat::zero_grad_set_to_none(optimizer_);
    ++global_step_;
    r.stepped = true;
  }
  r.compute_s = ns_to_seconds(watch.lap());
  return r;
}

void Stepper::finish_window() {
  const int64_t open = micro_ % accumulation_;
  if (open == 0) return;
  const double scale = static_cast<double>(accumulation_) / static_cast<double>(open);
  for (auto& p : model_.parameters()) {
    if (p.grad().defined()) p.mutable_grad().mul_(scale);
  }
  set_lr(optimizer_, lr_at(cfg_, global_step_, total_steps_, steps_per_epoch_));
  optimizer_.step();
  compat::zero_grad_set_to_none(optimizer_);
  ++global_step_;
  micro_ = 0;
}

}  // namespace stoker::train
