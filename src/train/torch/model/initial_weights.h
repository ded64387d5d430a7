// Starting a model from saved weights (--weights): fine-tuning from torchvision's pretrained
// ResNet/EfficientNet weights, or continuing from another run's export.
//
// The file is a .safetensors file (stoker's model.safetensors, or a state_dict written with
// the safetensors package) or a torch.save'd state_dict (.pth/.pt; data/state_dict.h reads it,
// with torchvision's checkpoint {"model": ...} and a "module." prefix handled). Names are the
// model's state-dict names (torchvision's for the ResNets and EfficientNets).
//
// Every parameter and buffer of the model is taken from the file, converted to its dtype,
// except:
//  - the classifier (the model's last 2-D weight and its bias) when its shape differs, as
//    when 1000 ImageNet classes meet a dataset's 10: it keeps its initialisation;
//  - a first convolution for 1-channel inputs given a 3-channel one: its weights are summed
//    over the colour channels (a grey image is R = G = B, so the filter responds alike).
// Anything else that does not fit (a tensor missing on either side, another shape) is a
// UsageError naming the file, the tensor and both shapes, and the model is left unchanged.
// Not thread-safe: call before training starts.
#pragma once

#include <string>

#include "train/torch/model/network.h"

namespace stoker::train {

// What was loaded, for the run header: "122 tensors · fc.weight, fc.bias left as initialised
// (1000 classes there, 10 here)".
std::string load_initial_weights(Network& model, const std::string& model_name, const std::string& path);

}  // namespace stoker::train
