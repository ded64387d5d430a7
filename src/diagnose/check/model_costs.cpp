#include "stoker/diagnose/model_costs.h"

#include <array>

namespace stoker::diagnose {

namespace {

// The one table. See the header for where each figure comes from.
constexpr std::array<ModelCost, 12> kModels = {{
    {"resnet50", 4.11e9, 25.56e6, 90e6, 50e6, 3, 224, 224, 256, "ImageNet-1k train", 1'281'167, false},
    {"resnet18", 1.82e9, 11.69e6, 36e6, 20e6, 3, 224, 224, 256, "ImageNet-1k train", 1'281'167, false},
    {"mnist_cnn", 12.0e6, 1.20e6, 0.7e6, 0.4e6, 1, 28, 28, 64, "Fashion-MNIST train", 60'000, true},
    {"mlp", 0.535e6, 0.536e6, 0.015e6, 0.01e6, 1, 28, 28, 64, "Fashion-MNIST train", 60'000, true},
    // EfficientNets at their native resolution: thin depthwise layers keep the MACs low but
    // the saved activations high (B0 saves as much per image as ResNet-50).
    {"efficientnet_b0", 0.386e9, 5.29e6, 88e6, 50e6, 3, 224, 224, 256, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b1", 0.687e9, 7.79e6, 143e6, 80e6, 3, 240, 240, 256, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b2", 0.994e9, 9.11e6, 182e6, 100e6, 3, 260, 260, 128, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b3", 1.827e9, 12.23e6, 312e6, 169e6, 3, 300, 300, 128, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b4", 4.394e9, 19.34e6, 654e6, 367e6, 3, 380, 380, 64, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b5", 10.27e9, 30.39e6, 1309e6, 717e6, 3, 456, 456, 32, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b6", 19.07e9, 43.04e6, 2217e6, 1197e6, 3, 528, 528, 32, "ImageNet-1k train", 1'281'167, false},
    {"efficientnet_b7", 37.75e9, 66.35e6, 3851e6, 2061e6, 3, 600, 600, 16, "ImageNet-1k train", 1'281'167, false},
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
