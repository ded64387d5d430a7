// stoker/diagnose/model_costs.h — what one training sample of each model costs: the single
// table `stoker check` (and any other estimate) reads. Pure data, no torch.
//
// Sources of the figures:
//  - forward MACs and parameters: the published counts for torchvision's resnet18/resnet50 at
//    3×224×224 (1.82 / 4.11 GMACs, 11.69 M / 25.56 M parameters), and the count by hand for
//    stoker's mnist_cnn (conv32-conv64-fc128-fc10 at 1×28×28: 12.0 M MACs, 1.20 M
//    parameters) and mlp (784-512-256-10: 0.54 M MACs and parameters).
//  - activation bytes kept for backward, per sample: approximations from PyTorch's peak
//    allocated memory while training (ResNet-50 ≈ 90 MB fp32, ≈ 50 MB with bf16/fp16
//    autocast); good to ±25 %, which the batch suggestion's margin absorbs.
//  - efficientnet_b0..b7: MACs counted over every Conv2d and Linear of torchvision's model
//    at its native resolution (224 … 600; they equal torchvision's published figures) and the
//    bytes of the tensors autograd saves for backward (torch.autograd.graph.saved_tensors_hooks,
//    training mode, fp32 and CPU bf16 autocast), per image. The same measure gives ResNet-50
//    85.5 MB fp32, within 5 % of its row.
// Training FLOPs per sample = 3 (forward + backward ≈ 2× forward) × 2 FLOP per MAC × MACs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::diagnose {

struct ModelCost {
  const char* name;
  double forward_macs;  // multiply-accumulates of one forward pass, one sample
  double parameters;
  double activation_bytes_fp32;   // per sample, kept for backward, amp off
  double activation_bytes_mixed;  // per sample with bf16/fp16 autocast
  int channels, height, width;    // input the MACs are counted at
  int reference_batch;            // the usual batch size; suggestions do not exceed it
  const char* reference_dataset;  // what "an epoch" means without --data
  int64_t reference_images;
  bool reference_raw_pixels;  // the reference dataset needs no image decoding (IDX)
};

// nullptr for a name not in the table.
const ModelCost* find_model_cost(std::string_view name);

// "resnet50, resnet18, mnist_cnn, mlp, efficientnet_b0, ..." (for messages).
std::string model_cost_names();

// 3 × 2 × forward MACs.
double training_flops_per_sample(const ModelCost& model);

}  // namespace stoker::diagnose
