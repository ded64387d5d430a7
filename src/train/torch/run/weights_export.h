// The weight files a finished run exports into its folder (model.safetensors and, with a
// moving average, model_ema.safetensors; model_best.safetensors is BestWeights'), and the
// metadata each carries: what feeding and scoring the weights needs (the model, the objective,
// the class names, the evaluation chain with its fitted statistics). exported_weights.h reads
// them back.
// Thread safety: WeightsMetadata is immutable after construction; the functions write files
// and stdout, from the training loop's thread.
// Errors: SystemError / DataError from writing a file (save_safetensors).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "stoker/data/transform.h"
#include "stoker/train/config.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/model/network.h"
#include "train/torch/run/run_directory.h"
#include "train/torch/run/run_records.h"
#include "train/torch/run/setup.h"
#include "train/torch/run/tensorboard_log.h"

namespace stoker::train {

// The metadata of a run's weight files. Copies what it needs from the setup.
class WeightsMetadata {
 public:
  // `inputs`: inference_inputs(setup), what feeding the trained model takes.
  WeightsMetadata(const TrainConfig& cfg, const TrainSetup& setup, const data::TransformSpec& inputs);

  // The model's, after `global_step` optimiser steps.
  std::map<std::string, std::string> model(int64_t global_step) const;
  // The moving average's: the model's plus its decay and updates.
  std::map<std::string, std::string> averaged(int64_t global_step, const ModelEma& ema) const;

 private:
  std::map<std::string, std::string> common_;
};

// What a finished run writes and prints when its loop has ended with `exit_code` (the leader):
// on success the weights (model.safetensors, and model_ema.safetensors for `ema`) and the
// "saved" line; always summary.json and metrics' last rows (RunRecords::finish), the
// TensorBoard and report hints, and summary.json on stdout with --json-summary. `best` is
// BestWeights::summary(); `tensorboard` the run's log, or null. Returns the exit code.
int export_run(const TrainConfig& cfg, bool json_summary, TrainSetup& setup, const RunStart& start,
               const WeightsMetadata& metadata, ModelEma* ema, RunRecords& records, const nlohmann::json& best,
               const TensorBoardLog* tensorboard, int64_t global_step, int exit_code);

}  // namespace stoker::train
