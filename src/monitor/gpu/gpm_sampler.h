// monitor/gpu/gpm_sampler.h — GPM (GPU Performance Monitoring, Hopper and newer) metrics of
// one GPU: SM activity, SM occupancy, tensor-core activity and DRAM bandwidth.
//
// GPM metrics are rates between two samples of the GPU's counters, and NVML wants those at
// least 100 ms apart. A GpmSampler holds two sample buffers: the base (older) and a spare.
// When sample() finds the base at least 100 ms old it fills the spare, computes the metrics
// from the pair and makes the spare the new base. When called sooner it leaves the base alone
// (a window under 100 ms would be refused, or noisy) and repeats the last figures; the first
// call only takes the base, so its figures are unavailable.
//
// Thread safety: not thread-safe; belongs to one GpuReader.
#pragma once

#include <cstdint>
#include <memory>

#include "monitor/gpu/nvml_library.h"
#include "stoker/monitor/sample.h"

namespace stoker::monitor {

class GpmSampler {
 public:
  static constexpr int64_t kMinWindowNs = 100'000'000;

  // A sampler for `device`, or nullptr when the library lacks GPM, the device does not
  // support it, or the sample buffers cannot be allocated.
  static std::unique_ptr<GpmSampler> create(const NvmlFunctions& fn, nvmlDevice_t device);
  ~GpmSampler();
  GpmSampler(const GpmSampler&) = delete;
  GpmSampler& operator=(const GpmSampler&) = delete;

  // Fills the four GPM readings of *out (source "nvml-gpm"), or clears them when there are
  // no figures yet or the last attempt failed. `now_ns`: a monotonic clock.
  void sample(int64_t now_ns, GpuSample* out);

 private:
  GpmSampler(const NvmlFunctions& fn, nvmlDevice_t device, nvmlGpmSample_t a, nvmlGpmSample_t b);
  // Computes the metrics from base and spare into last_; false when NVML refused.
  bool compute();

  const NvmlFunctions& fn_;
  nvmlDevice_t device_;
  nvmlGpmSample_t base_;
  nvmlGpmSample_t spare_;
  bool have_base_ = false;
  int64_t base_ns_ = 0;
  // Figures of the last window, in the order of kMetricIds (gpm_sampler.cpp).
  Reading last_[4];
  // Big (about 13 KB), so kept rather than rebuilt on the stack each time.
  std::unique_ptr<nvmlGpmMetricsGet_t> request_;
};

}  // namespace stoker::monitor
