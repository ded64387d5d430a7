// The best epoch's weights of a run, by the validation figure its epoch line reports: top-1
// accuracy for classification (higher is better), mean MAE for regression (lower is better).
// Kept as <run dir>/model_best.safetensors, written atomically, with the epoch, the figure and
// its value in the metadata; a resumed run reads them back, so "best" spans the whole run.
// With a moving average of the weights (ema_decay), the average is what is judged and kept,
// by its own figure ("ema_val_top1", "ema_val_mae"), as timm keeps its best checkpoint; a
// resumed run that turns the average on or off starts the record afresh.
// Not thread-safe: the training loop's thread only.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "train/torch/evaluate/evaluate.h"
#include "train/torch/model/network.h"

namespace stoker::train {

// How the epoch line names a best-weights metric ("val_top1" → "val acc", "ema_val_mae" →
// "EMA val MAE") and shows its value ("91.2 %", "0.0312"): for the early-stop line, the plateau
// schedule's (which also watches "val_loss" → "val loss", "0.4127") and for `stoker evaluate`,
// which reads them back from model_best.safetensors' metadata.
std::string figure_name(const std::string& metric);
std::string figure_value_text(const std::string& metric, double value);

class BestWeights {
 public:
  // `resumed`: an existing model_best.safetensors in `run_dir` is the best so far.
  // `averaged`: the weights offered are a moving average.
  BestWeights(const std::string& run_dir, bool resumed, bool averaged = false);

  // When `eval` (of epoch `epoch`, 1-based) beats the best so far, writes the file with
  // metadata() (called only then) plus the epoch and figure, and returns true. An epoch
  // without a figure (no validation data, a NaN) never does.
  bool offer(const torch::nn::Module& model, const EvalResult& eval, int64_t epoch,
             const std::function<std::map<std::string, std::string>()>& metadata);

  // {"epoch", "metric", "value", "weights"} of the best so far, or null.
  nlohmann::json summary() const;

  // The best epoch so far (1-based; 0 before the first figure).
  int64_t epoch() const { return epoch_; }
  // Its figure as the epoch line names it ("val acc", "val MAE", "EMA val acc") and its value
  // ("91.2 %", "0.0312"); empty before the first figure.
  std::string figure_name() const;
  std::string value_text() const;

 private:
  std::string path_;
  std::string prefix_;  // "ema_" for a moving average, else ""
  std::string metric_;  // prefix_ + "val_top1" or "val_mae"; "" before the first
  double value_ = 0;
  int64_t epoch_ = 0;
};

}  // namespace stoker::train
