// One training step, timed: host→device copy, then forward, loss, backward and — at the end
// of an accumulation window — the learning-rate schedule and the optimiser step.
// The training loop and `stoker doctor` run the same steps.
#pragma once

#include "models.h"
#include "stoker/train/config.h"

namespace stoker::train {

// Learning rate at optimiser step `step` of `total` (warmup, then the schedule).
double lr_at(const TrainConfig& cfg, int64_t step, int64_t total, int64_t steps_per_epoch);

class Stepper {
 public:
  // `total_steps` and `steps_per_epoch` count optimiser steps (for the schedule).
  Stepper(const TrainConfig& cfg, Network& model, torch::optim::Optimizer& optimizer, torch::Device device,
          int64_t total_steps, int64_t steps_per_epoch, int64_t global_step = 0);

  struct Result {
    double loss = 0;        // this batch's loss (unscaled)
    double copy_s = 0;      // host→device
    double compute_s = 0;   // forward, backward, optimiser
    bool stepped = false;   // the optimiser stepped (a window ended)
  };
  // `images` (N, C, H, W) and `labels` (N) on the host (views of a batch are fine).
  Result step(const torch::Tensor& images, const torch::Tensor& labels);

  // Ends a last partial accumulation window: its gradients are scaled up to a full window's
  // weight and the optimiser steps. No-op when no window is open.
  void finish_window();
  bool window_open() const { return micro_ % accumulation_ != 0; }
  int64_t global_step() const { return global_step_; }

 private:
  const TrainConfig& cfg_;
  Network& model_;
  torch::optim::Optimizer& optimizer_;
  torch::Device device_;
  int64_t total_steps_, steps_per_epoch_;
  int64_t global_step_;
  int64_t accumulation_;
  int64_t micro_ = 0;
};

}  // namespace stoker::train
