// Internal to the model zoo (models.cpp): the layers torchvision's conv nets share
// (model_zoo.cpp), and one builder per family. Each builder checks the input shape
// (UsageError naming the model, the shape and what it needs) and returns nullptr for a name
// outside its family.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "train/torch/model/network.h"

namespace stoker::train::zoo {

// Conv2d without bias, padding kernel/2 ("same" for odd kernels), weights as torchvision
// initialises its conv nets: kaiming_normal_(mode="fan_out") with the ReLU gain.
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups = 1);

// BatchNorm2d with weight 1, bias 0; eps and momentum as torch.nn's defaults unless given.
torch::nn::BatchNorm2d batch_norm(int64_t features, double eps = 1e-5, double momentum = 0.1);

// The smallest input a five-stride-2 net takes: 32x32 ends at 1x1. Throws UsageError.
void require_input(const std::string& model, InputShape in, int64_t min_size);

// "resnet18" | "resnet50" (resnet.cpp).
std::shared_ptr<Network> make_resnet(const std::string& name, InputShape in, int64_t classes);

// "efficientnet_b0" ... "efficientnet_b7" (efficientnet.cpp).
std::shared_ptr<Network> make_efficientnet(const std::string& name, InputShape in, int64_t classes);

}  // namespace stoker::train::zoo
