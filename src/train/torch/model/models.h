// Model zoo of the trainer. Parameter and buffer names follow the PyTorch reference models, so a
// state dict carries over (conv1, conv2, fc1, fc2, ...): resnet18/resnet50 and efficientnet_b0-b7
// have torchvision's exact module tree and names (resnet: conv1, bn1, layer1.0.conv1,
// layer2.0.downsample.0, ..., fc; efficientnet: features.0.0, features.1.0.block.1.fc1, ...,
// classifier.1) and its initialisation, dropout and stochastic depth.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "train/torch/model/network.h"

namespace stoker::train {

// One of kModelNames (stoker/train/config.h). Throws UsageError for an unknown name (listing
// the available ones) or a shape the model cannot take (naming the shape and what it needs:
// the ResNets and EfficientNets take any channel count and at least 32x32).
std::shared_ptr<Network> make_model(const std::string& name, InputShape input, int64_t classes);

int64_t parameter_count(const torch::nn::Module& module);

// Re-lays the 4-D parameters and buffers (conv weights) out as channels_last, as
// model.to(memory_format=torch.channels_last) does in Python. Fast on CUDA tensor cores; on
// the CPU with libtorch 1.13 it made ResNet-18 3x slower (measured), so the trainer uses
// it on CUDA only.
void to_channels_last(torch::nn::Module& module);

}  // namespace stoker::train
