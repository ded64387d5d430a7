// What the model is trained to predict and how a prediction is scored: classification
// (class ids, cross-entropy with optional label smoothing) or regression (float targets,
// MSE / L1 / smooth L1). Resolved once from the config and the training data; the step,
// the evaluation and `stoker doctor` all take their targets and loss from here.
#pragma once

#include <torch/torch.h>

#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/train/config.h"

namespace stoker::train {

struct Objective {
  TaskKind task = TaskKind::kClassification;  // never kAuto once resolved
  LossKind loss = LossKind::kCrossEntropy;    // never kAuto once resolved
  int64_t outputs = 0;                        // classes, or float targets per sample
  double label_smoothing = 0;

  bool classification() const { return task == TaskKind::kClassification; }

  // The batch's targets as a zero-copy host view: (N) int64 class ids or (N, outputs)
  // float32. The batch must outlive its use.
  torch::Tensor targets_of(const data::Batch& batch) const;
  // Targets of the right kind and shape for synthetic batches (the doctor's model probe).
  torch::Tensor random_targets(int64_t n, const torch::TensorOptions& options) const;
  // Mean loss over the batch (sum with `sum`), computed in float32 whatever the output dtype.
  torch::Tensor loss_of(const torch::Tensor& output, const torch::Tensor& target, bool sum = false) const;
};

Objective classification_objective(int64_t classes, double label_smoothing = 0);

// Resolves task and loss "auto" from the training data and checks the validation data has
// targets of the same kind. Throws UsageError naming the data and what fits, e.g. "task
// regression needs float targets, and /data/train has class labels (3 classes); ...".
Objective make_objective(const TrainConfig& cfg, const data::Source& train, const data::Source* val);

}  // namespace stoker::train
