#include "train/torch/step/foreach_optimizers.h"

#include <cmath>
#include <map>
#include <utility>

#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace {

// The parameters of one group that have a gradient, and those gradients.
struct WithGradients {
  std::vector<torch::Tensor> params, grads;
};

WithGradients with_gradients(const std::vector<torch::Tensor>& params) {
  WithGradients out;
  for (const auto& p : params) {
    if (!p.grad().defined()) continue;
    out.params.push_back(p);
    out.grads.push_back(p.grad());
  }
  return out;
}

// Whether the multi-tensor step applies: always, or when the parameters (the first that
// has a gradient) are on CUDA.
bool multi_tensor(MultiTensor mode, const std::vector<torch::optim::OptimizerParamGroup>& groups) {
  if (mode == MultiTensor::kAlways) return true;
  for (const auto& group : groups) {
    for (const auto& p : group.params()) {
      if (p.grad().defined()) return p.is_cuda();
    }
  }
  return false;
}

// Runs `closure` (if any) with gradients on, as libtorch's optimisers do before stepping.
torch::Tensor run_closure(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}

}  // namespace

torch::Tensor ForeachSgd::step(LossClosure closure) {
  if (!multi_tensor(mode_, param_groups_)) return torch::optim::SGD::step(std::move(closure));
  torch::NoGradGuard no_grad;
  torch::Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    WithGradients g = with_gradients(group.params());
    if (g.params.empty()) continue;
    std::vector<torch::Tensor> d_p =
        o.weight_decay() != 0 ? torch::_foreach_add(g.grads, g.params, o.weight_decay()) : g.grads;
    if (o.momentum() != 0) {
      // A parameter's first step starts its buffer at d_p; the others decay theirs.
      std::vector<torch::Tensor> buffers(g.params.size()), decaying, decaying_d_p;
      for (size_t i = 0; i < g.params.size(); ++i) {
        const auto key = compat::optimizer_state_key(state_, g.params[i]);
        const auto found = state_.find(key);
        if (found == state_.end()) {
          buffers[i] = torch::clone(d_p[i]).detach();
          auto state = std::make_unique<torch::optim::SGDParamState>();
          state->momentum_buffer(buffers[i]);
          state_[key] = std::move(state);
        } else {
          buffers[i] = static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer();
          decaying.push_back(buffers[i]);
          decaying_d_p.push_back(d_p[i]);
        }
      }
      if (!decaying.empty()) {
        torch::_foreach_mul_(decaying, o.momentum());
        torch::_foreach_add_(decaying, decaying_d_p, 1 - o.dampening());
      }
      d_p = o.nesterov() ? torch::_foreach_add(d_p, buffers, o.momentum()) : std::move(buffers);
    }
    torch::_foreach_add_(g.params, d_p, -1 * o.lr());
  }
  return loss;
}

torch::Tensor ForeachAdamW::step(LossClosure closure) {
  if (!multi_tensor(mode_, param_groups_)) return torch::optim::AdamW::step(std::move(closure));
  for (const auto& group : param_groups_) {
    if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) {
      return torch::optim::AdamW::step(std::move(closure));
    }
  }
  torch::NoGradGuard no_grad;
  torch::Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
    // Parameters by their step count (all alike unless some had no gradient on some step):
    // the bias corrections are per count.
    struct Bucket {
      std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs;
    };
    std::map<int64_t, Bucket> by_step;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = compat::optimizer_state_key(state_, p);
      auto found = state_.find(key);
      if (found == state_.end()) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(0);
        state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        found = state_.emplace(key, std::move(state)).first;
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*found->second);
      state.step(state.step() + 1);
      Bucket& bucket = by_step[state.step()];
      bucket.params.push_back(p);
      bucket.grads.push_back(p.grad());
      bucket.exp_avgs.push_back(state.exp_avg());
      bucket.exp_avg_sqs.push_back(state.exp_avg_sq());
    }
    for (auto& [count, g] : by_step) {
      std::vector<torch::Tensor>& m = g.exp_avgs;
      std::vector<torch::Tensor>& v = g.exp_avg_sqs;
      const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(count));
      const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(count));
      if (o.weight_decay() != 0) torch::_foreach_mul_(g.params, 1 - o.lr() * o.weight_decay());
      torch::_foreach_mul_(m, beta1);
      torch::_foreach_add_(m, g.grads, 1 - beta1);
      torch::_foreach_mul_(v, beta2);
      torch::_foreach_addcmul_(v, g.grads, g.grads, 1 - beta2);
      std::vector<torch::Tensor> denom = torch::_foreach_sqrt(v);
      torch::_foreach_div_(denom, std::sqrt(bias_correction2));
      torch::_foreach_add_(denom, o.eps());
      torch::_foreach_addcdiv_(g.params, m, denom, -(o.lr() / bias_correction1));
    }
  }
  return loss;
}

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& params) {
  return with_gradients(params).grads;
}

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  const WithGradients g = with_gradients(params);
  if (g.grads.empty()) return 0;
  // The same expressions as libtorch's clip_grad_norm_, so the same rounding.
  const torch::Tensor total = torch::stack(torch::_foreach_norm(g.grads, 2)).norm(2);
  const torch::Tensor coefficient = torch::clamp_max(max_norm / (total + 1e-6), 1.0);
  const torch::Tensor both = torch::stack({total, coefficient}).to(torch::kCPU, torch::kDouble);
  const double norm = both[0].item<double>(), scale = both[1].item<double>();
  if (scale < 1) torch::_foreach_mul_(g.grads, scale);  // × 1 would change nothing
  return norm;
}

}  // namespace stoker::train
