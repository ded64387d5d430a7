#include "train/torch/step/step.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "stoker/core/clock.h"
#include "train/torch/step/foreach_optimizers.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace {

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

// SGD's or RMSprop's momentum, or AdamW's beta1, as OneCycleLR sets group["momentum"] or
// group["betas"][0].
void set_momentum(torch::optim::Optimizer& optimizer, OptimizerKind kind, double momentum) {
  for (auto& group : optimizer.param_groups()) {
    switch (kind) {
      case OptimizerKind::kSgd:
        static_cast<torch::optim::SGDOptions&>(group.options()).momentum(momentum);
        break;
      case OptimizerKind::kRmsprop:
        static_cast<torch::optim::RMSpropOptions&>(group.options()).momentum(momentum);
        break;
      case OptimizerKind::kAdamW: {
        auto& options = static_cast<torch::optim::AdamWOptions&>(group.options());
        options.betas(std::make_tuple(momentum, std::get<1>(options.betas())));
        break;
      }
    }
  }
}

// OneCycleLR.get_lr at step_num `step` of `total`: the phase the step falls in, and how far
// through it (PyTorch raises past the last step; here the last point holds).
struct CyclePoint {
  double lr = 0;
  double momentum = 0;
};
CyclePoint one_cycle_at(const TrainConfig& cfg, int64_t step, int64_t total) {
  const double max_lr = cfg.lr;
  const double initial_lr = max_lr / cfg.div_factor;
  const double min_lr = initial_lr / cfg.final_div_factor;
  const double n = static_cast<double>(total);
  struct Phase {
    double end_step, start_lr, end_lr, start_momentum, end_momentum;
  };
  const double lo = cfg.base_momentum, hi = cfg.max_momentum;
  std::vector<Phase> phases;
  if (cfg.three_phase) {
    phases = {{cfg.pct_start * n - 1, initial_lr, max_lr, hi, lo},
              {2 * cfg.pct_start * n - 2, max_lr, initial_lr, lo, hi},
              {n - 1, initial_lr, min_lr, hi, hi}};
  } else {
    phases = {{cfg.pct_start * n - 1, initial_lr, max_lr, hi, lo}, {n - 1, max_lr, min_lr, lo, hi}};
  }
  const auto anneal = [&](double start, double end, double pct) {
    if (cfg.anneal_strategy == "linear") return (end - start) * pct + start;
    return end + (start - end) / 2.0 * (std::cos(M_PI * pct) + 1);
  };
  const double at = static_cast<double>(step);
  double start_step = 0;
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& phase = phases[i];
    if (at <= phase.end_step || i + 1 == phases.size()) {
      const double span = phase.end_step - start_step;
      const double pct = span > 0 ? std::min(1.0, (at - start_step) / span) : 1.0;
      return {anneal(phase.start_lr, phase.end_lr, pct), anneal(phase.start_momentum, phase.end_momentum, pct)};
    }
    start_step = phase.end_step;
  }
  return {min_lr, hi};  // not reached: the last phase takes every step
}

}  // namespace

std::optional<double> momentum_at(const TrainConfig& cfg, int64_t step, int64_t total) {
  if (cfg.schedule != ScheduleKind::kOneCycle || !cfg.cycle_momentum) return std::nullopt;
  return one_cycle_at(cfg, step, total).momentum;
}

double lr_at(const TrainConfig& cfg, int64_t step, int64_t total, int64_t steps_per_epoch) {
  if (cfg.schedule == ScheduleKind::kOneCycle) return one_cycle_at(cfg, step, total).lr;  // its own warmup
  const int64_t warmup = warmup_steps_of(cfg, steps_per_epoch);
  if (warmup > 0 && step < warmup) {
    const double d = cfg.warmup_decay;
    if (cfg.warmup_method == "constant") return cfg.lr * d;
    return cfg.lr * (d + (1 - d) * static_cast<double>(step) / static_cast<double>(warmup));
  }
  // How far through the steps after the warmup, in [0, 1]: cosine's and polynomial's t / T.
  const auto done = [&] {
    const double span = static_cast<double>(std::max<int64_t>(1, total - warmup));
    return std::min(1.0, static_cast<double>(step - warmup) / span);
  };
  switch (cfg.schedule) {
    case ScheduleKind::kCosine:
      return cfg.lr_min + 0.5 * (cfg.lr - cfg.lr_min) * (1 + std::cos(M_PI * done()));
    // Epochs after the warmup, as torchvision's SequentialLR starts its main scheduler there.
    case ScheduleKind::kStep: {
      const int64_t epoch = steps_per_epoch > 0 ? (step - warmup) / steps_per_epoch : 0;
      return cfg.lr * std::pow(cfg.step_gamma, static_cast<double>(epoch / cfg.step_every_epochs));
    }
    case ScheduleKind::kExponential: {
      const int64_t epoch = steps_per_epoch > 0 ? (step - warmup) / steps_per_epoch : 0;
      return cfg.lr * std::pow(cfg.step_gamma, static_cast<double>(epoch));
    }
    // MultiStepLR: one factor of gamma for each milestone reached.
    case ScheduleKind::kMultiStep: {
      const int64_t epoch = steps_per_epoch > 0 ? (step - warmup) / steps_per_epoch : 0;
      const std::vector<int> milestones = lr_milestones_of(cfg);
      const auto reached = std::count_if(milestones.begin(), milestones.end(), [&](int m) { return m <= epoch; });
      return cfg.lr * std::pow(cfg.step_gamma, static_cast<double>(reached));
    }
    // PolynomialLR(total_iters = the steps after the warmup, power), stepped once per step; 0 from
    // the last step on.
    case ScheduleKind::kPolynomial:
      return cfg.lr * std::pow(1.0 - done(), cfg.poly_power);
    // CosineAnnealingWarmRestarts.step(epoch) at the fractional epoch after the warmup, its
    // operations in its order.
    case ScheduleKind::kCosineRestarts: {
      const double epoch =
          steps_per_epoch > 0 ? static_cast<double>(step - warmup) / static_cast<double>(steps_per_epoch) : 0;
      const double t0 = cfg.restart_epochs, mult = cfg.restart_mult;
      double t_i = t0, t_cur = epoch;
      if (epoch >= t0) {
        if (cfg.restart_mult == 1) {
          t_cur = std::fmod(epoch, t0);
        } else {
          const double n = std::trunc(std::log(epoch / t0 * (mult - 1) + 1) / std::log(mult));
          t_cur = epoch - t0 * (std::pow(mult, n) - 1) / (mult - 1);
          t_i = t0 * std::pow(mult, n);
        }
      }
      return cfg.lr_min + (cfg.lr - cfg.lr_min) * (1 + std::cos(M_PI * t_cur / t_i)) / 2;
    }
    case ScheduleKind::kConstant:
    case ScheduleKind::kOneCycle:
    case ScheduleKind::kPlateau:  // the Stepper's cap lowers it (Plateau)
      break;
  }
  return cfg.lr;
}

at::ScalarType amp_dtype(AmpMode amp) {
  switch (amp) {
    case AmpMode::kBf16:
      return at::kBFloat16;
    case AmpMode::kFp16:
      return at::kHalf;
    case AmpMode::kOff:
      break;
  }
  return at::kFloat;
}

Stepper::Stepper(const TrainConfig& cfg, Network& model, torch::optim::Optimizer& optimizer, Objective objective,
                 torch::Device device, int64_t total_steps, int64_t steps_per_epoch, int64_t global_step)
    : cfg_(cfg),
      model_(model),
      optimizer_(optimizer),
      objective_(std::move(objective)),
      device_(device),
      total_steps_(total_steps),
      steps_per_epoch_(steps_per_epoch),
      global_step_(global_step),
      accumulation_(cfg.accumulation_steps) {
  if (cfg.amp == AmpMode::kFp16) scaler_ = std::make_unique<GradScaler>();
  if (objective_.classification()) mix_ = BatchMix::from_config(cfg, objective_.outputs);
}

Stepper::Result Stepper::step(const torch::Tensor& images, const torch::Tensor& targets) {
  Result r;
  Stopwatch watch;
  torch::Tensor x = images, y = targets;
  if (x.device() != device_) x = x.to(device_);
  if (y.device() != device_) y = y.to(device_);
  r.copy_s = ns_to_seconds(watch.lap());
  // Numbered by micro-batch over the run (checkpoints fall on window boundaries), so a resumed
  // run draws what the uninterrupted one did.
  if (mix_.active()) std::tie(x, y) = mix_.mix(x, y, global_step_ * accumulation_ + micro_ % accumulation_);

  torch::Tensor loss;
  torch::Tensor correct;
  {
    // fp16 autocast exists on CUDA only; on the CPU fp16 means the scaler on fp32 math.
    const at::ScalarType dtype = cfg_.amp == AmpMode::kFp16 && device_.is_cpu() ? at::kFloat : amp_dtype(cfg_.amp);
    compat::AutocastScope autocast(device_.type(), dtype);
    const torch::Tensor output = model_.forward(x);
    loss = objective_.loss_of(output, y);
    if (objective_.classification()) {
      torch::NoGradGuard no_grad;
      const torch::Tensor label = y.dim() == 2 ? y.argmax(1) : y;  // soft (mixed) targets: their main class
      correct = output.argmax(1).eq(label).sum();
    }
  }
  const torch::Tensor window_loss = loss / static_cast<double>(accumulation_);
  if (group_ != nullptr && (micro_ + 1) % accumulation_ == 0) group_->arm();  // this backward ends a window
  (scaler_ ? scaler_->scale(window_loss) : window_loss).backward();
  r.loss = loss.item<double>();  // waits for the backward; the count below is ready by then
  if (correct.defined()) {
    r.correct = correct.item<int64_t>();
    r.counted = x.size(0);
  }
  ++micro_;
  if (micro_ % accumulation_ == 0) optimizer_step(&r);
  r.compute_s = ns_to_seconds(watch.lap());
  return r;
}

void Stepper::average_gradients_over(DataParallel* group) {
  group_ = group;
  if (group_ != nullptr) group_->attach(model_);
  if (objective_.classification())
    mix_ = BatchMix::from_config(cfg_, objective_.outputs, group_ ? group_->place().rank : 0);
}

void Stepper::optimizer_step(Result* r) {
  if (group_ != nullptr) {
    // Before the scaler looks: an overflow in any process's gradients reaches every process's
    // mean, so all of them skip the same steps.
    Stopwatch watch;
    group_->average_gradients(model_);
    r->sync_s += ns_to_seconds(watch.lap());
  }
  const double lr = lr_at(cfg_, global_step_, total_steps_, steps_per_epoch_);
  lr_ = lr_cap_ ? std::min(lr, *lr_cap_) : lr;
  set_lr(optimizer_, lr_);
  if (const auto momentum = momentum_at(cfg_, global_step_, total_steps_)) {
    set_momentum(optimizer_, cfg_.optimizer, *momentum);
  }
  // Clipping reads true gradients: with fp16 they are unscaled first (PyTorch's
  // scaler.unscale_(); clip_grad_norm_(); scaler.step()), and a window with inf/NaN is
  // skipped without clipping.
  const bool finite = scaler_ ? scaler_->unscale(optimizer_) : true;
  if (cfg_.clip_grad_norm > 0 && finite) {
    r->grad_norm = clip_grad_norm(model_.parameters(), cfg_.clip_grad_norm);
    r->clipped = r->grad_norm > cfg_.clip_grad_norm;
  }
  r->stepped = true;
  if (scaler_) {
    r->skipped = !scaler_->step(optimizer_);
  } else {
    optimizer_.step();
  }
  compat::zero_grad_set_to_none(optimizer_);
  if (ema_ != nullptr && !r->skipped) ema_->after_step(model_, global_step_);
  // A skipped fp16 step still counts: the schedule and checkpoints follow windows, as
  // PyTorch's scheduler.step() after scaler.step() does.
  ++global_step_;
}

Stepper::Result Stepper::finish_window() {
  Result r;
  const int64_t open = micro_ % accumulation_;
  if (open == 0) return r;
  const double scale = static_cast<double>(accumulation_) / static_cast<double>(open);
  const std::vector<torch::Tensor> grads = gradients_of(model_.parameters());
  if (!grads.empty()) torch::_foreach_mul_(grads, scale);
  optimizer_step(&r);
  micro_ = 0;
  return r;
}

}  // namespace stoker::train
