// GPU memory this process holds, as NVML (and nvidia-smi) sees it: the caching allocator's
// reserve included. Used for the "GPU memory after the first batch" line and each epoch's
// peak.
#pragma once

#include <atomic>
#include <string>

#include "stoker/monitor/sampler.h"

namespace stoker::train {

// "3.21 GiB used by this process (NVML)", or why it is unknown.
std::string gpu_memory_text(int gpu_index);

// The largest process memory on one GPU that the sampler's thread has seen since the last
// take(). attach() before the sampler starts; this object must outlive the sampler's thread
// (declare it before the Sampler). take() is thread-safe.
class GpuMemoryPeak {
 public:
  void attach(monitor::Sampler& sampler, int gpu_index);
  // The peak in bytes since the last take(), or < 0 when none was seen; resets it.
  double take() { return peak_.exchange(-1); }

 private:
  std::atomic<double> peak_{-1};
};

}  // namespace stoker::train
