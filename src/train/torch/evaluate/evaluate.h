// Validation over one pass of a loader. Classification: loss, top-1, top-5 (more than 5
// classes) and ROC AUC (2 classes, on the softmax probability of class 1). Regression: loss
// and the mean absolute error per target.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

#include "stoker/data/loader.h"
#include "train/torch/model/models.h"
#include "train/torch/step/device_feed.h"
#include "train/torch/step/objective.h"

namespace stoker::train {

struct EvalResult {
  double loss = 0;
  double top1 = -1;         // classification
  double top5 = -1;         // only with more than 5 classes
  double auc = -1;          // only with 2 classes; NaN when the data holds one class only
  std::vector<double> mae;  // regression: one per target
  int64_t samples = 0;

  double mean_mae() const;  // over the targets; -1 without
};

// Sees each batch with the model's outputs for it (N x outputs, float32, on the device) as
// evaluate() goes: how `stoker evaluate` writes its predictions.
using EvalBatchSink = std::function<void(const FedBatch& batch, const torch::Tensor& outputs)>;

// Puts `model` in eval mode, runs epoch 0 of `loader` without gradients; batches reach the
// device as `feed` says (the training loop's plan).
EvalResult evaluate(Network& model, data::Loader& loader, const Objective& objective, const FeedOptions& feed,
                    const EvalBatchSink& sink = {});

}  // namespace stoker::train
