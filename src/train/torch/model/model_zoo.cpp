// The layers torchvision's conv nets share (model_zoo.h).
#include "train/torch/model/model_zoo.h"

#include <fmt/format.h>

#include "stoker/core/error.h"

namespace stoker::train::zoo {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups) {
  auto c = torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).groups(groups).bias(false));
  torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
  return c;
}

torch::nn::BatchNorm2d batch_norm(int64_t features, double eps, double momentum) {
  auto bn = torch::nn::BatchNorm2d(torch::nn::BatchNormOptions(features).eps(eps).momentum(momentum));
  torch::nn::init::ones_(bn->weight);
  torch::nn::init::zeros_(bn->bias);
  return bn;
}

void require_input(const std::string& model, InputShape in, int64_t min_size) {
  if (in.channels < 1) throw UsageError(fmt::format("model {} needs at least 1 channel (got {})", model, in.channels));
  if (in.height < min_size || in.width < min_size) {
    throw UsageError(fmt::format(
        "model {} needs images of at least {}x{} (got {}x{}); resize them larger, e.g. --transforms 'Resize({}), "
        "CenterCrop({})'",
        model, min_size, min_size, in.width, in.height, min_size, min_size));
  }
}

}  // namespace stoker::train::zoo
