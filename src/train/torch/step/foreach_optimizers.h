// SGD and AdamW whose step updates all of a group's parameters with a few multi-tensor
// ("foreach") operations, and gradient clipping done the same way: what PyTorch's Python
// optimizers do by default on CUDA (foreach=True) and libtorch's C++ ones do not.
//
// Why: libtorch's torch::optim::SGD and AdamW loop over the parameters, 4 to 8 operations
// each. ResNet-50 has 161 parameter tensors, so one step launched ~800 (SGD) to ~1,600 (AdamW)
// small CUDA kernels, and clip_grad_norm_ another ~320, each costing the host a few µs while
// the GPU waited (the training step reads the loss before the optimiser runs). Here each
// group's update is ~5 (SGD) or ~10 (AdamW) operations, whatever the parameter count; on CUDA
// each is one multi-tensor kernel per chunk of tensors. On the CPU, ATen runs a foreach
// operation tensor by tensor with the same kernels, so results there are bit-identical to
// libtorch's optimisers (tests/torch/foreach_optimizers_test.cpp checks that), but slower
// (see MultiTensor), so by default the optimisers step there as libtorch's do.
//
// The classes derive from torch::optim::SGD and AdamW and keep their options and per-parameter
// state (SGDParamState, AdamWParamState) unchanged: checkpoints written by either load into
// the other, and everything that takes a torch::optim::Optimizer takes these.
//
// Thread safety: as libtorch's optimisers (none; one thread steps an optimiser).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace stoker::train {

// Where the optimisers take the multi-tensor step. kOnCuda (the default) is PyTorch's own
// default (foreach only when the parameters are on CUDA): on the CPU, where an operation costs
// no launch, libtorch's per-parameter loop keeps each tensor in cache through its operations
// and measured up to 3.3x faster for SGD on ResNet-50 (bench/optimizer_step.cpp). kAlways
// takes it everywhere (the tests use it to hold the multi-tensor step to libtorch's).
enum class MultiTensor { kOnCuda, kAlways };

class ForeachSgd : public torch::optim::SGD {
 public:
  using torch::optim::SGD::SGD;
  // torch::optim::SGD::step's update (weight decay, momentum with dampening, Nesterov) for
  // every parameter that has a gradient; parameters without one are left as they are.
  torch::Tensor step(LossClosure closure = nullptr) override;
  void set_multi_tensor(MultiTensor mode) { mode_ = mode; }

 private:
  MultiTensor mode_ = MultiTensor::kOnCuda;
};

class ForeachAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  // torch::optim::AdamW::step's update (decoupled weight decay, bias-corrected moments) for
  // every parameter that has a gradient. AMSGrad, which stoker does not offer, takes
  // libtorch's own per-parameter step.
  torch::Tensor step(LossClosure closure = nullptr) override;
  void set_multi_tensor(MultiTensor mode) { mode_ = mode; }

 private:
  MultiTensor mode_ = MultiTensor::kOnCuda;
};

// The gradients of `params` that have one (handles sharing the parameters' gradient tensors,
// for in-place multi-tensor operations on them).
std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& params);

// torch::nn::utils::clip_grad_norm_ (L2) with multi-tensor operations, on every device (on
// the CPU too it measured 1.7-2x faster than libtorch's on ResNets): the total L2 norm of
// the gradients of `params` (those that have one), and when it exceeds `max_norm` every
// gradient is scaled by max_norm / (norm + 1e-6). Returns the norm before clipping (0 when
// no parameter has a gradient). One device→host read, as libtorch's.
double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace stoker::train
