// What every model of the zoo is: a torch module from images (or feature vectors laid out as
// N x 1 x 1 x D) to outputs, and the input shape it is built for. Kept apart from the zoo's
// entry point (models.h) so the families (model_zoo.h) build on it without including the
// registry that includes them.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace stoker::train {

// images (N, C, H, W) float → (N, outputs): logits of a classifier, or the predicted targets
// of a regression (the `classes` argument below is the number of outputs).
class Network : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

struct InputShape {
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
};

}  // namespace stoker::train
