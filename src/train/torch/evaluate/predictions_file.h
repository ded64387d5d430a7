// `stoker evaluate --predictions`: one CSV row per sample as evaluation goes, written to
// FILE.tmp and renamed when complete. Not thread-safe.
#pragma once

#include <torch/torch.h>

#include <fstream>
#include <string>

#include "stoker/data/source.h"
#include "train/torch/run/exported_weights.h"
#include "train/torch/step/device_feed.h"

namespace stoker::train {

// "sample,target,predicted,confidence" (class names where the weights have them; confidence
// is the predicted class's softmax probability), or for regression
// "sample,target_0,…,predicted_0,…". `weights` and `source` must outlive it.
class PredictionsFile {
 public:
  // Throws UsageError when `path` cannot be opened.
  PredictionsFile(const std::string& path, const ExportedWeights& weights, const data::Source& source);

  // The rows of `batch`, given the model's outputs for it (N x outputs, float32, any device).
  void add(const FedBatch& batch, const torch::Tensor& outputs);

  // Moves the finished file into place; throws SystemError when it could not be written.
  void finish();
  int64_t rows() const { return rows_; }

 private:
  std::string class_text(int64_t id) const;

  std::string path_, tmp_;
  std::ofstream out_;
  const ExportedWeights& weights_;
  const data::Source& source_;
  int64_t rows_ = 0;
};

}  // namespace stoker::train
