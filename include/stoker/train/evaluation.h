// stoker/train/evaluation.h — `stoker evaluate`: the weights a training run exported
// (model.safetensors, model_best.safetensors, model_ema.safetensors, or the run folder)
// scored on a dataset with the figures validation reports, fed as their metadata says (the
// evaluation chain and the Standardize statistics recorded when they were trained), so the
// same weights on the same data give the same figures as the run's validation did. With a
// predictions file, one row per sample: its name, target and prediction.
// No torch headers here. Not thread-safe; one evaluation at a time.
#pragma once

#include <string>

namespace stoker::train {

struct EvaluateOptions {
  // A .safetensors file written by `stoker train`, or a run folder: its model_best.safetensors,
  // else its model.safetensors.
  std::string weights;
  // Read as --val-data is: the data's own test split where it has one (IDX t10k files, an
  // archive's x_val/x_test), else all of it.
  std::string data;
  int batch_size = 256;
  int workers = 2;
  std::string device = "auto";  // auto, cpu, cuda, cuda:N
  std::string predictions;      // CSV file to write; "" = none
  bool json = false;            // one JSON object on stdout instead of the lines
};

// Returns the exit code. Throws UsageError / DataError (one line) for weights that stoker did
// not write, data the model cannot take (other classes, features, targets) or a file that
// cannot be written.
int run_evaluation(const EvaluateOptions& options);

}  // namespace stoker::train
