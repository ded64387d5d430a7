// The one place that knows the differences between libtorch 1.13 (Debian) and 2.x (pip).
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <c10/core/Event.h>
#include <torch/torch.h>
#include <torch/version.h>
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>

namespace stoker::train::compat {

inline std::string torch_version() { return TORCH_VERSION; }

// State of the CPU generator that dropout and init draw from (same API in 1.13 and 2.x,
// but kept here so a future change touches one file).
inline torch::Tensor cpu_rng_state() { return at::detail::getDefaultCPUGenerator().get_state(); }
inline void set_cpu_rng_state(const torch::Tensor& state) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle to the global one
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

// What ProcessGroupGloo derives from, and what the gradient reducer sends through: c10d's
// Backend from 2.0 (ProcessGroup became a dispatcher over backends), ProcessGroup in 1.13.
// Both declare the collectives (allreduce, broadcast, barrier) stoker calls.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveGroup = c10d::Backend;
#else
using CollectiveGroup = c10d::ProcessGroup;
#endif

inline bool cuda_available() { return torch::cuda::is_available(); }

// TF32 for float32 matmuls and convolutions, and cuDNN's autotuner (input shapes are fixed
// per run). Same calls in 1.13 and 2.x.
inline void enable_cuda_fast_math() {
  at::globalContext().setAllowTF32CuBLAS(true);
  at::globalContext().setAllowTF32CuDNN(true);
  at::globalContext().setBenchmarkCuDNN(true);
}

// Out of memory, on the GPU or the host. 2.x throws c10::OutOfMemoryError for CUDA; 1.13 a
// c10::Error whose message says "CUDA out of memory"; the CPU allocator says "can't allocate
// memory" in both.
inline bool is_out_of_memory(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return true;
  const std::string message = e.what();
  return message.find("out of memory") != std::string::npos ||
         message.find("can't allocate memory") != std::string::npos;
}

// zero_grad(set_to_none=true): 1.13's C++ Optimizer::zero_grad() takes no argument and zeroes
// in place; dropping the gradient tensors instead saves a memset and lets backward write.
inline void zero_grad_set_to_none(torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    for (auto& p : group.params()) p.mutable_grad() = torch::Tensor();
  }
}

// The key of a parameter's entry in Optimizer::state(): 1.13 keys by the TensorImpl's address
// printed into a string (c10::guts::to_string), later releases by the address itself. Read
// from the map's own key type, so no version number is guessed.
template <typename StateMap>
typename StateMap::key_type optimizer_state_key(const StateMap& /*state*/, const torch::Tensor& param) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    std::ostringstream key;
    key << param.unsafeGetTensorImpl();
    return key.str();
  } else {
    return param.unsafeGetTensorImpl();
  }
}

// TCPStore's libuv server (an option from 2.1, the default from 2.4) exists only where torch
// was built with libuv (pip wheels are; Debian 13's 2.6 is not, and refuses the default).
// Sets the older, always-built server.
template <typename TCPStoreOptions>
void use_classic_store(TCPStoreOptions& options) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  options.useLibUV = false;
#else
  (void)options;
#endif
}

// Autocast on one device type for the life of the scope (bf16 on CPU or CUDA, fp16 on CUDA).
// 2.4 replaced set_enabled/set_cpu_enabled and set_autocast_{gpu,cpu}_dtype with calls that
// take the device type (the old ones are deprecated, which -Werror turns into errors).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define STOKER_TORCH_AUTOCAST_BY_DEVICE 1
#else
#define STOKER_TORCH_AUTOCAST_BY_DEVICE 0
#endif

inline void set_autocast(c10::DeviceType device, bool enabled, at::ScalarType dtype) {
#if STOKER_TORCH_AUTOCAST_BY_DEVICE
  if (enabled) at::autocast::set_autocast_dtype(device, dtype);
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CPU) {
    if (enabled) at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  } else {
    if (enabled) at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  }
#endif
}

// Device-generic event timing (c10::Event::elapsedTime, synchronize) came with PyTorch's
// generic stream/event work of 2024; stoker relies on it from 2.5 on (compiled against 2.6).
// Before that only CUDA's own ATen/cuda headers could time events, and a CPU-only libtorch
// does not ship them.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
#define STOKER_TORCH_EVENT_TIMING 1
#else
#define STOKER_TORCH_EVENT_TIMING 0
#endif

// Seconds on the device between two recorded events of one device, both created with
// c10::EventFlag::BACKEND_DEFAULT (timing on); waits for `end` to complete. < 0 where this
// libtorch cannot time events.
inline double event_seconds(const c10::Event& begin, const c10::Event& end) {
#if STOKER_TORCH_EVENT_TIMING
  end.synchronize();
  return begin.elapsedTime(end) / 1000.0;
#else
  (void)begin;
  (void)end;
  return -1;
#endif
}

class AutocastScope {
 public:
  // `dtype` kFloat (or any non-reduced type) leaves autocast off.
  AutocastScope(c10::DeviceType device, at::ScalarType dtype)
      : device_(device), on_(dtype == at::kBFloat16 || dtype == at::kHalf) {
    if (on_) set_autocast(device_, true, dtype);
  }
  ~AutocastScope() {
    if (!on_) return;
    set_autocast(device_, false, at::kFloat);
    at::autocast::clear_cache();
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool on_;
};

}  // namespace stoker::train::compat
