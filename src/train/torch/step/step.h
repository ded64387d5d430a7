// One training step, timed: host→device copy, then MixUp/CutMix (--mixup-alpha,
// --cutmix-alpha), forward (under autocast for --amp), loss,
// backward and — at the end of an accumulation window — the learning-rate schedule, gradient
// clipping (--clip-grad-norm), the optimiser step (through the fp16 loss scaler for --amp
// fp16) and the moving average of the weights (--ema-decay).
// The training loop and `stoker doctor` run the same steps. Not thread-safe.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "stoker/train/config.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/model/models.h"
#include "train/torch/parallel/data_parallel.h"
#include "train/torch/step/batch_mix.h"
#include "train/torch/step/grad_scaler.h"
#include "train/torch/step/objective.h"

namespace stoker::train {

// Learning rate at optimiser step `step` of `total` (warmup, then the schedule; onecycle is
// PyTorch's OneCycleLR at step_num `step` with total_steps `total`).
double lr_at(const TrainConfig& cfg, int64_t step, int64_t total, int64_t steps_per_epoch);
// The momentum (SGD, RMSprop) or beta1 (AdamW) OneCycleLR sets at that step with cycle_momentum;
// nullopt where the schedule leaves it alone.
std::optional<double> momentum_at(const TrainConfig& cfg, int64_t step, int64_t total);

// The reduced-precision type --amp asks for (kFloat for off).
at::ScalarType amp_dtype(AmpMode amp);

class Stepper {
 public:
  // `total_steps` and `steps_per_epoch` count optimiser steps (for the schedule). `cfg`,
  // `model` and `optimizer` must outlive the Stepper. With amp fp16 the Stepper owns a
  // GradScaler (on the CPU, where the trainer refuses fp16, the scaler runs on fp32 math:
  // that is how the tests drive it).
  Stepper(const TrainConfig& cfg, Network& model, torch::optim::Optimizer& optimizer, Objective objective,
          torch::Device device, int64_t total_steps, int64_t steps_per_epoch, int64_t global_step = 0);

  struct Result {
    double loss = 0;  // this batch's loss (unscaled)
    // Classification: the batch's samples whose top-1 class is the target's (with MixUp or
    // CutMix, the class the mixed target weighs most, as torchvision's reference script
    // counts), and how many were counted; 0 and 0 for regression.
    int64_t correct = 0;
    int64_t counted = 0;
    double copy_s = 0;     // host→device
    double compute_s = 0;  // forward, backward, optimiser (and sync_s)
    double sync_s = 0;     // data parallel: averaging the gradients over the processes
    bool stepped = false;  // a window ended (the optimiser stepped, or fp16 skipped the step)
    bool skipped = false;  // fp16: the window's gradients held inf/NaN; the step was skipped
    // clip_grad_norm > 0 and a window ended that was not skipped: the gradients' total L2
    // norm before clipping (averaged over the processes, unscaled); < 0 otherwise.
    double grad_norm = -1;
    bool clipped = false;  // grad_norm exceeded clip_grad_norm, so the gradients were scaled down

    // Moves `stall_s` seconds that the host clock counted as compute, because the device
    // waited there for the batch's copy (DeviceFeed::copy_stall_s), over to copy_s.
    void charge_copy_stall(double stall_s) {
      const double moved = std::min(std::max(stall_s, 0.0), compute_s);
      compute_s -= moved;
      copy_s += moved;
    }
  };
  // `images` (N, C, H, W) and `targets` (Objective::targets_of) on the host (views of a batch
  // are fine) or already on the device.
  Result step(const torch::Tensor& images, const torch::Tensor& targets);

  // Ends a last partial accumulation window: its gradients are scaled up to a full window's
  // weight and the optimiser steps (what it did, as step()'s Result: stepped, skipped,
  // grad_norm). No-op when no window is open.
  Result finish_window();
  bool window_open() const { return micro_ % accumulation_ != 0; }
  // Data parallel: gradients are averaged over `group` before each optimiser step (null:
  // this process alone), sent during the backward that ends each window, and each process
  // mixes its batches (BatchMix) with draws of its own. The group must outlive the Stepper.
  void average_gradients_over(DataParallel* group);
  // After each optimizer step that is taken (not an fp16 skip), `ema` is offered the new weights
  // (ModelEma::after_step; null: none). It must outlive the Stepper.
  void keep_average(ModelEma* ema) { ema_ = ema; }
  // The plateau schedule's rate (Plateau::lr()): from the next optimizer step on, the rate is
  // lr_at()'s (the warmup's, then lr) but not above this.
  void cap_lr(double lr) { lr_cap_ = lr; }
  int64_t global_step() const { return global_step_; }
  // The learning rate of the last optimizer step; < 0 before the first.
  double lr() const { return lr_; }
  // Null unless amp is fp16.
  GradScaler* scaler() { return scaler_.get(); }
  const Objective& objective() const { return objective_; }

 private:
  // Averages the gradients over the group (if any), then schedule, unscale (fp16), clip,
  // step, zero_grad, moving average; fills r's stepped, skipped, grad_norm and clipped and adds the
  // averaging's time to r->sync_s.
  void optimizer_step(Result* r);

  const TrainConfig& cfg_;
  Network& model_;
  torch::optim::Optimizer& optimizer_;
  Objective objective_;
  torch::Device device_;
  int64_t total_steps_, steps_per_epoch_;
  int64_t global_step_;
  int64_t accumulation_;
  int64_t micro_ = 0;
  std::unique_ptr<GradScaler> scaler_;
  DataParallel* group_ = nullptr;
  ModelEma* ema_ = nullptr;
  std::optional<double> lr_cap_;
  double lr_ = -1;
  BatchMix mix_;  // inactive unless mixup_alpha or cutmix_alpha > 0
};

}  // namespace stoker::train
