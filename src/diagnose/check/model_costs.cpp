#include "stoker/diagnose/model_costs.h"

#include <array>

namespace stoker::diagnose {

namespace {

// The one table. See the header for where each figure comes from.
constexpr std::array<ModelCost, 4> kModels = {{
    {"resnet50", 4.11e9, 25.56e6, 90e6, 50e6, 3, 224, 224, 256, "ImageNet-1k train", 1'281'167, false},
    {"resnet18", 1.82e9, 11.69e6, 36e6, 20e6, 3, 224, 224, 256, "ImageNet-1k train", 1'281'167, false},
    {"mnist_cnn", 12.0e6, 1.20e6, 0.7e6, 0.4e6, 1, 28, 28, 64, "Fashion-MNIST train", 60'000, true},
    {"mlp", 0.535e6, 0.536e6, 0.015e6, 0.01e6, 1, 28, 28, 64, "Fashion-MNIST train", 60'000, true},
}};

}  // namespace

const ModelCost* find_model_cost(std::string_view name) {
  for (const ModelCost& model : kModels) {
    if (name == model.name) return &model;
  }
  return nullptr;
}

std::string model_cost_names() {
  std::string names;
  for (const ModelCost& model : kModels) names += (names.empty() ? "" : ", ") + std::string(model.name);
  return names;
}

double training_flops_per_sample(const ModelCost& model) { return 3.0 * 2.0 * model.forward_macs; }

}  // namespace stoker::diagnose
