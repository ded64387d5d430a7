// ForeachSgd, ForeachAdamW and clip_grad_norm: their multi-tensor step (forced on the CPU
// here; by default the optimisers take it on CUDA only) must land exactly where
// libtorch's per-parameter torch::optim::SGD, AdamW and clip_grad_norm_ land (ATen runs a
// foreach operation there tensor by tensor with the same kernels), keep the same state (so
// checkpoints load either way), and dispatch a handful of operations per step instead of a
// few per parameter — the point of them on a GPU, where each operation is a kernel launch.
#include "train/torch/step/foreach_optimizers.h"

#include <ATen/record_function.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "train/torch/model/models.h"
#include "train/torch/run/setup.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {
namespace {

// The multi-tensor step on the CPU too (by default it is taken on CUDA only).
template <typename O>
O& multi_tensor_everywhere(O& optimizer) {
  if constexpr (requires { optimizer.set_multi_tensor(MultiTensor::kAlways); }) {
    optimizer.set_multi_tensor(MultiTensor::kAlways);
  }
  return optimizer;
}

void multi_tensor_everywhere(torch::optim::Optimizer* optimizer) {
  if (auto* sgd = dynamic_cast<ForeachSgd*>(optimizer)) sgd->set_multi_tensor(MultiTensor::kAlways);
  if (auto* adamw = dynamic_cast<ForeachAdamW*>(optimizer)) adamw->set_multi_tensor(MultiTensor::kAlways);
}

// Parameters of assorted shapes (conv weights, vectors, a scalar), made from a seed.
std::vector<torch::Tensor> make_params(uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<torch::Tensor> params;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{8, 3, 3, 3}, {8}, {8}, {16, 8}, {16}, {1}, {5, 16}}) {
    params.push_back(torch::randn(shape).requires_grad_());
  }
  return params;
}

// Step `s`'s gradients: parameter i gets none where skip(s, i), so states start late and
// (AdamW) step counts differ between parameters.
void set_gradients(std::vector<torch::Tensor>& params, int s, const std::function<bool(int, size_t)>& skip) {
  for (size_t i = 0; i < params.size(); ++i) {
    torch::manual_seed(1000 * s + i);
    params[i].mutable_grad() = skip(s, i) ? torch::Tensor() : torch::randn(params[i].sizes());
  }
}

bool sometimes_missing(int s, size_t i) { return (s == 0 && i == 1) || (s == 2 && i == 4); }

// The two parameter lists hold bit-identical values.
void expect_identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                      const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << what << ": parameter " << i;
}

// Runs `steps` steps of `reference` (libtorch's) and `ours` over twin parameter lists with the
// same gradients and compares the parameters after each.
template <typename Reference, typename Ours, typename Options>
void expect_same_steps(const Options& options, bool two_groups, const std::string& what, int steps = 5) {
  std::vector<torch::Tensor> a = make_params(3), b = make_params(3);
  const auto groups = [&](std::vector<torch::Tensor>& p) {
    std::vector<torch::optim::OptimizerParamGroup> list;
    if (!two_groups) {
      list.emplace_back(p, std::make_unique<Options>(options));
      return list;
    }
    Options second = options;
    second.lr(options.lr() * 0.5).weight_decay(0);
    list.emplace_back(std::vector<torch::Tensor>(p.begin(), p.begin() + 3), std::make_unique<Options>(options));
    list.emplace_back(std::vector<torch::Tensor>(p.begin() + 3, p.end()), std::make_unique<Options>(second));
    return list;
  };
  Reference reference(groups(a), options);
  Ours ours(groups(b), options);
  multi_tensor_everywhere(ours);
  for (int s = 0; s < steps; ++s) {
    set_gradients(a, s, sometimes_missing);
    set_gradients(b, s, sometimes_missing);
    reference.step();
    ours.step();
    expect_identical(a, b, what + ", step " + std::to_string(s));
  }
  // Not vacuous: the parameters moved.
  const std::vector<torch::Tensor> start = make_params(3);
  EXPECT_FALSE(torch::equal(a[0], start[0])) << what;
}

TEST(ForeachOptimizersTest, SgdStepsExactlyAsLibtorchsSgd) {
  using torch::optim::SGDOptions;
  for (const bool two_groups : {false, true}) {
    const std::string g = two_groups ? " (two groups)" : "";
    expect_same_steps<torch::optim::SGD, ForeachSgd>(SGDOptions(0.1), two_groups, "plain" + g);
    expect_same_steps<torch::optim::SGD, ForeachSgd>(SGDOptions(0.1).momentum(0.9).weight_decay(1e-2), two_groups,
                                                     "momentum, weight decay" + g);
    expect_same_steps<torch::optim::SGD, ForeachSgd>(SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(5e-3),
                                                     two_groups, "nesterov" + g);
    expect_same_steps<torch::optim::SGD, ForeachSgd>(SGDOptions(0.1).momentum(0.8).dampening(0.3), two_groups,
                                                     "dampening" + g);
  }
}

TEST(ForeachOptimizersTest, AdamWStepsExactlyAsLibtorchsAdamW) {
  using torch::optim::AdamWOptions;
  for (const bool two_groups : {false, true}) {
    const std::string g = two_groups ? " (two groups)" : "";
    expect_same_steps<torch::optim::AdamW, ForeachAdamW>(AdamWOptions(1e-2), two_groups, "defaults" + g);
    expect_same_steps<torch::optim::AdamW, ForeachAdamW>(
        AdamWOptions(3e-3).betas(std::make_tuple(0.8, 0.99)).eps(1e-6).weight_decay(0.1), two_groups, "options" + g);
    expect_same_steps<torch::optim::AdamW, ForeachAdamW>(AdamWOptions(1e-2).amsgrad(true), two_groups, "amsgrad" + g);
  }
}

// A state saved by one optimiser continues in the other exactly: checkpoints from before
// (libtorch's classes) resume with these, and back.
template <typename Reference, typename Ours, typename Options>
void expect_state_carries_over(const Options& options) {
  std::vector<torch::Tensor> a = make_params(7), b = make_params(7);
  Ours first(a, options);
  multi_tensor_everywhere(first);
  for (int s = 0; s < 3; ++s) {
    set_gradients(a, s, sometimes_missing);
    first.step();
  }
  for (size_t i = 0; i < a.size(); ++i) b[i].detach().copy_(a[i].detach());
  std::stringstream saved;
  torch::save(first, saved);
  Reference second(b, options);
  multi_tensor_everywhere(second);
  torch::load(second, saved);
  for (int s = 3; s < 6; ++s) {
    set_gradients(a, s, sometimes_missing);
    set_gradients(b, s, sometimes_missing);
    first.step();
    second.step();
  }
  expect_identical(a, b, "after resuming");
}

TEST(ForeachOptimizersTest, StateLoadsIntoLibtorchsOptimisersAndBack) {
  expect_state_carries_over<torch::optim::SGD, ForeachSgd>(torch::optim::SGDOptions(0.1).momentum(0.9));
  expect_state_carries_over<ForeachSgd, torch::optim::SGD>(torch::optim::SGDOptions(0.1).momentum(0.9));
  expect_state_carries_over<torch::optim::AdamW, ForeachAdamW>(torch::optim::AdamWOptions(1e-2));
  expect_state_carries_over<ForeachAdamW, torch::optim::AdamW>(torch::optim::AdamWOptions(1e-2));
}

TEST(ForeachOptimizersTest, ClipGradNormMatchesLibtorch) {
  for (const double limit : {0.5, 1e6}) {
    std::vector<torch::Tensor> a = make_params(5), b = make_params(5);
    set_gradients(a, 1, sometimes_missing);
    set_gradients(b, 1, sometimes_missing);
    const double reference = torch::nn::utils::clip_grad_norm_(a, limit);
    const double ours = clip_grad_norm(b, limit);
    EXPECT_NEAR(ours, reference, 1e-6 * reference) << "limit " << limit;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].grad().defined()) continue;
      EXPECT_TRUE(torch::allclose(a[i].grad(), b[i].grad(), 1e-6, 0)) << "limit " << limit << ", gradient " << i;
    }
    if (limit < 1) {
      std::vector<torch::Tensor> clipped;
      for (const auto& p : b) {
        if (p.grad().defined()) clipped.push_back(p.grad());
      }
      EXPECT_LE(torch::stack(torch::_foreach_norm(clipped, 2)).norm().item<double>(), limit * 1.0001);
    }
  }
  std::vector<torch::Tensor> none = make_params(5);
  EXPECT_EQ(clip_grad_norm(none, 1.0), 0);
}

// Counts the operations dispatched on this thread while alive, outermost only (on the CPU a
// foreach operation dispatches its per-tensor operations inside itself).
class TopLevelOps {
 public:
  TopLevelOps()
      : handle_(at::addThreadLocalCallback(
            at::RecordFunctionCallback(&TopLevelOps::enter, &TopLevelOps::exit).scopes({at::RecordScope::FUNCTION}))) {
    count() = 0;
    depth() = 0;
  }
  ~TopLevelOps() { at::removeCallback(handle_); }
  TopLevelOps(const TopLevelOps&) = delete;
  TopLevelOps& operator=(const TopLevelOps&) = delete;
  int64_t seen() const { return count(); }

 private:
  static int64_t& count() {
    thread_local int64_t n = 0;
    return n;
  }
  static int64_t& depth() {
    thread_local int64_t d = 0;
    return d;
  }
  static std::unique_ptr<at::ObserverContext> enter(const at::RecordFunction& /*fn*/) {
    if (depth()++ == 0) ++count();
    return nullptr;
  }
  static void exit(const at::RecordFunction& /*fn*/, at::ObserverContext* /*ctx*/) { --depth(); }

  at::CallbackHandle handle_;
};

// Operations one step of `optimizer` dispatches, after a first step has made its state.
int64_t ops_per_step(torch::optim::Optimizer& optimizer, std::vector<torch::Tensor>& params) {
  set_gradients(params, 0, [](int, size_t) { return false; });
  optimizer.step();
  set_gradients(params, 1, [](int, size_t) { return false; });
  TopLevelOps ops;
  optimizer.step();
  return ops.seen();
}

TEST(ForeachOptimizersTest, AStepDispatchesAFewOperationsWhateverTheParameterCount) {
  // ResNet-18 (62 parameter tensors), through the trainer's own make_optimizer.
  const auto model = make_model("resnet18", {3, 32, 32}, 10);
  std::vector<torch::Tensor> params = model->parameters();
  ASSERT_GT(params.size(), 60u);
  for (const OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW}) {
    TrainConfig cfg;
    cfg.optimizer = kind;
    cfg.momentum = 0.9;
    cfg.weight_decay = 1e-4;
    const auto ours = make_optimizer(cfg, *model);
    // By default (as PyTorch's) the multi-tensor step is CUDA's; on these CPU parameters the
    // trainer's optimiser steps as libtorch's, parameter by parameter.
    const int64_t default_ops = ops_per_step(*ours, params);
    EXPECT_GE(default_ops, 3 * static_cast<int64_t>(params.size())) << "optimizer " << static_cast<int>(kind);
    multi_tensor_everywhere(ours.get());
    const int64_t foreach_ops = ops_per_step(*ours, params);
    std::unique_ptr<torch::optim::Optimizer> reference;
    if (kind == OptimizerKind::kSgd) {
      reference =
          std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(1e-4));
    } else {
      reference = std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(1e-3).weight_decay(1e-4));
    }
    const int64_t per_param_ops = ops_per_step(*reference, params);
    // Two groups (weights, normalization) of ≤ 10 operations each, against ≥ 3 per parameter.
    EXPECT_LE(foreach_ops, 24) << "optimizer " << static_cast<int>(kind);
    EXPECT_GE(per_param_ops, 3 * static_cast<int64_t>(params.size())) << "optimizer " << static_cast<int>(kind);
    RecordProperty(kind == OptimizerKind::kSgd ? "sgd_ops" : "adamw_ops",
                   std::to_string(foreach_ops) + " vs " + std::to_string(per_param_ops));
  }
  const auto clip_ops = [&](const std::function<void()>& clip) {
    set_gradients(params, 2, [](int, size_t) { return false; });
    TopLevelOps ops;
    clip();
    return ops.seen();
  };
  const int64_t foreach_clip = clip_ops([&] { clip_grad_norm(params, 1e-3); });
  const int64_t per_param_clip = clip_ops([&] { torch::nn::utils::clip_grad_norm_(params, 1e-3); });
  EXPECT_LE(foreach_clip, 16);
  EXPECT_GE(per_param_clip, 2 * static_cast<int64_t>(params.size()));
  RecordProperty("clip_ops", std::to_string(foreach_clip) + " vs " + std::to_string(per_param_clip));
}

}  // namespace
}  // namespace stoker::train
