#include "train/torch/parallel/gradient_reducer.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <exception>
#include <utility>

#include "stoker/core/mutex.h"

namespace stoker::train {

namespace {

// Bucket sizes: DistributedDataParallel's bucket_cap_mb (25) and its small first bucket (1 MB),
// which holds the last layers' gradients, the first that backward completes.
constexpr int64_t kBucketBytes = 25 << 20;
constexpr int64_t kFirstBucketBytes = 1 << 20;

// What a collective call returns (c10d::ProcessGroup::Work in 1.13, c10d::Work in 2.x).
using WorkPtr = decltype(std::declval<compat::CollectiveGroup&>().allreduce(std::declval<std::vector<at::Tensor>&>()));

std::vector<torch::Tensor> trained_parameters(Network& model) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : model.parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

}  // namespace

struct GradientReducer::State {
  struct Bucket {
    std::vector<size_t> members;   // parameter indices
    std::vector<at::Tensor> flat;  // one tensor, as the collective calls take them
  };

  c10::intrusive_ptr<compat::CollectiveGroup> gloo;
  double inverse = 1;
  std::vector<torch::Tensor> params;  // what the buckets were planned for
  std::vector<Bucket> buckets;
  std::vector<size_t> bucket_of;  // parameter index -> bucket
  // Hooks on the attached model's gradient accumulators: (accumulator, key for del_post_hook).
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, uintptr_t>> hooks;

  // One backward's progress, from arm() to finish().
  Mutex mutex;
  bool armed STOKER_GUARDED_BY(mutex) = false;
  std::vector<size_t> waiting STOKER_GUARDED_BY(mutex);  // per bucket: gradients not complete yet
  size_t next STOKER_GUARDED_BY(mutex) = 0;              // buckets [0, next) are sent
  std::vector<WorkPtr> sent STOKER_GUARDED_BY(mutex);
  std::exception_ptr failure STOKER_GUARDED_BY(mutex);  // a send that threw in a hook

  bool planned_for(const std::vector<torch::Tensor>& now) const {
    if (now.size() != params.size()) return false;
    for (size_t i = 0; i < now.size(); ++i) {
      if (!now[i].is_same(params[i])) return false;
    }
    return true;
  }

  void plan(std::vector<torch::Tensor> now) {
    params = std::move(now);
    buckets.clear();
    bucket_of.assign(params.size(), 0);
    int64_t bytes = 0;
    for (size_t i = params.size(); i-- > 0;) {
      const torch::Tensor& p = params[i];
      const int64_t size = p.numel() * p.element_size();
      const int64_t cap = buckets.size() == 1 ? kFirstBucketBytes : kBucketBytes;
      const bool fits = !buckets.empty() && bytes + size <= cap &&
                        params[buckets.back().members[0]].scalar_type() == p.scalar_type() &&
                        params[buckets.back().members[0]].device() == p.device();
      if (!fits) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().members.push_back(i);
      bucket_of[i] = buckets.size() - 1;
      bytes += size;
    }
    for (Bucket& b : buckets) {
      int64_t numel = 0;
      for (const size_t i : b.members) numel += params[i].numel();
      b.flat = {torch::empty({numel}, params[b.members[0]].options())};
    }
  }

  void start() STOKER_REQUIRES(mutex) {
    waiting.clear();
    for (const Bucket& b : buckets) waiting.push_back(b.members.size());
    next = 0;
    sent.clear();
    failure = nullptr;
  }

  // Packs bucket `next` (a gradient backward did not reach counts as zeros) and sends it.
  void send_next() STOKER_REQUIRES(mutex) {
    Bucket& b = buckets[next++];
    int64_t offset = 0;
    for (const size_t i : b.members) {
      torch::Tensor& p = params[i];
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      const int64_t n = p.numel();
      b.flat[0].slice(0, offset, offset + n).copy_(p.grad().reshape({-1}));
      offset += n;
    }
    sent.push_back(gloo->allreduce(b.flat));
  }

  // From the hook on parameter i's gradient accumulator: its gradient is complete.
  void ready(size_t i) {
    MutexLock lock(mutex);
    if (!armed || failure) return;
    try {
      --waiting[bucket_of[i]];
      while (next < buckets.size() && waiting[next] == 0) send_next();
    } catch (...) {
      failure = std::current_exception();  // finish() throws it on the loop's thread
    }
  }

  void finish() {
    torch::NoGradGuard no_grad;
    MutexLock lock(mutex);
    if (!armed) start();  // nothing was sent during backward
    armed = false;
    if (failure) std::rethrow_exception(failure);
    while (next < buckets.size()) send_next();
    for (size_t k = 0; k < buckets.size(); ++k) {
      sent[k]->wait();
      Bucket& b = buckets[k];
      b.flat[0].mul_(inverse);
      int64_t offset = 0;
      for (const size_t i : b.members) {
        torch::Tensor& grad = params[i].mutable_grad();
        const int64_t n = grad.numel();
        grad.copy_(b.flat[0].slice(0, offset, offset + n).view_as(grad));
        offset += n;
      }
    }
    sent.clear();
  }
};

namespace {

class GradientReady final : public torch::autograd::FunctionPostHook {
 public:
  GradientReady(std::weak_ptr<GradientReducer::State> state, size_t index) : state_(std::move(state)), index_(index) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    if (const auto state = state_.lock()) state->ready(index_);
    return outputs;
  }

 private:
  std::weak_ptr<GradientReducer::State> state_;
  size_t index_;
};

}  // namespace

GradientReducer::GradientReducer(c10::intrusive_ptr<compat::CollectiveGroup> gloo, int world_size)
    : state_(std::make_shared<State>()) {
  state_->gloo = std::move(gloo);
  state_->inverse = 1.0 / world_size;
}

GradientReducer::~GradientReducer() { detach(); }

void GradientReducer::detach() {
  for (auto& [accumulator, key] : state_->hooks) accumulator->del_post_hook(key);
  state_->hooks.clear();
}

void GradientReducer::attach(Network& model) {
  std::vector<torch::Tensor> params = trained_parameters(model);
  if (state_->planned_for(params) && !state_->hooks.empty()) return;
  detach();
  state_->plan(std::move(params));
  for (size_t i = 0; i < state_->params.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(state_->params[i]);
    const uintptr_t key = accumulator->add_post_hook(std::make_unique<GradientReady>(state_, i));
    state_->hooks.emplace_back(std::move(accumulator), key);
  }
}

void GradientReducer::arm() {
  if (state_->hooks.empty()) return;  // nothing attached: finish() sends everything
  MutexLock lock(state_->mutex);
  state_->start();
  state_->armed = true;
}

void GradientReducer::finish(Network& model) {
  std::vector<torch::Tensor> params = trained_parameters(model);
  if (!state_->planned_for(params)) {
    detach();  // hooks on another model's accumulators would send the wrong gradients
    state_->plan(std::move(params));
    MutexLock lock(state_->mutex);
    state_->armed = false;
  }
  state_->finish();
}

size_t GradientReducer::sent_count() const {
  MutexLock lock(state_->mutex);
  return state_->sent.size();
}

std::vector<std::vector<size_t>> GradientReducer::bucket_members() const {
  std::vector<std::vector<size_t>> out;
  for (const auto& b : state_->buckets) out.push_back(b.members);
  return out;
}

}  // namespace stoker::train
