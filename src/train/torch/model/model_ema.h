// An exponential moving average of a model's weights (timm's ModelEma, torchvision's
// ExponentialMovingAverage), kept as an AveragePlan (stoker/train/config.h) says: after every
// plan.every_steps-th optimizer step that was taken, every floating-point parameter and buffer
// of the average moves toward the model's,
//     average ← d · average + (1 − d) · weight,
// with d = min(decay, (1 + n) / (10 + n)) after n updates when plan.ramp (TensorFlow's
// ExponentialMovingAverage with num_updates: the first updates weigh more, so a short run's
// average is not mostly its random initialisation), else d = decay; updates of steps before
// plan.copy_until_step copy the weights instead (torchvision's script through its warmup).
// Without the ramp (torchvision's average, an AveragedModel), the first update, and the first
// after those copies, copy the weights too: its n_averaged is 0 there.
// Integer buffers (BatchNorm's num_batches_tracked) are copied.
// The average is a second instance of the model's network, on the same device and in the
// same memory format, kept in eval mode: it is validated and exported like the model.
// Not thread-safe: the training loop's thread only.
#pragma once

#include <cstdint>
#include <memory>

#include "stoker/train/config.h"
#include "train/torch/model/network.h"

namespace stoker::train {

class ModelEma {
 public:
  // `average`: a second instance of `model`'s architecture (another_model in setup.h); it
  // starts as a copy of `model`'s weights. plan.decay in [0, 1).
  ModelEma(std::shared_ptr<Network> average, const Network& model, const AveragePlan& plan);

  // After optimizer step `step` (the run's count, from 0) was taken: folds `model` in on every
  // plan.every_steps-th step, or copies it there (see the top of this file).
  void after_step(const Network& model, int64_t step);

  // Folds `model`'s current weights in (one update's worth) and counts the update.
  void update(const Network& model);

  // Starts over from `model`'s weights, with no updates counted.
  void restart_from(const Network& model);

  Network& network() { return *average_; }
  const Network& network() const { return *average_; }
  double decay() const { return plan_.decay; }
  const AveragePlan& plan() const { return plan_; }
  // The d the next update will use.
  double next_decay() const;
  int64_t updates() const { return updates_; }
  // For a checkpoint that is resumed.
  void set_updates(int64_t updates) { updates_ = updates; }

 private:
  // Every parameter and buffer of `model` into the average; the count is the caller's.
  void copy_weights(const Network& model);

  std::shared_ptr<Network> average_;
  AveragePlan plan_;
  int64_t updates_ = 0;
};

}  // namespace stoker::train
