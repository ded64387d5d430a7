// The weights `stoker train` exports (model.safetensors, model_best.safetensors,
// model_ema.safetensors) read back with what their metadata says about feeding and scoring
// them: the model, the objective, the class names and the evaluation chain with the
// Standardize statistics fitted at training. That metadata is the whole contract between a
// run and what later uses its weights (`stoker evaluate`).
#pragma once

#include <string>
#include <vector>

#include "stoker/data/transform.h"
#include "train/torch/step/objective.h"

namespace stoker::train {

struct ExportedWeights {
  std::string path;
  std::string model;
  Objective objective;
  std::vector<std::string> class_names;  // empty for regression
  data::TransformSpec inputs;            // the evaluation chain, with Standardize's statistics
  int features = 0;                      // per sample; 0 for images
  std::string note;                      // " · best epoch 3 (val acc 91.2 %)", " · moving average …"
};

// The file to read: `given`, or in a run folder its model_best.safetensors, else its
// model.safetensors. Throws DataError when there is none.
std::string exported_weights_file(const std::string& given);

// The metadata of `path`. Throws DataError naming the file and the key for a file that
// stoker train did not write (or whose metadata does not parse).
ExportedWeights read_exported_weights(const std::string& path);

}  // namespace stoker::train
