// Validation: loss, top-1 and (with more than 5 classes) top-5 over one pass of a loader.
#pragma once

#include "models.h"
#include "stoker/data/loader.h"

namespace stoker::train {

struct EvalResult {
  double loss = 0;
  double top1 = 0;
  double top5 = -1;  // only with more than 5 classes
  int64_t samples = 0;
};

// Puts `model` in eval mode, runs epoch 0 of `loader` without gradients.
EvalResult evaluate(Network& model, data::Loader& loader, int64_t classes, const torch::Device& device);

}  // namespace stoker::train
