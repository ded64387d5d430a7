// monitor/gpu/utilization_samples.h — a GPU's utilisation averaged over the whole interval
// between two reads, from the driver's own sample buffer (nvmlDeviceGetSamples).
//
// nvmlDeviceGetUtilizationRates answers for the driver's last sample period only, which is
// 1/6 s to 1 s depending on the product: read once a second, it can miss most of the second
// (a GPU busy in bursts reads 0 % or 100 % by chance). The driver also keeps its samples in a
// buffer (about 100, some 6 a second), each with a CPU timestamp; the mean of those newer than
// the last read covers the interval whole, each sample counted once.
//
// The first read only marks where the next starts (the buffer holds some 16 s from before the
// monitor started), so it has no figure; nor has a read that finds no sample newer than the
// last (read faster than the driver samples). The caller then keeps the instantaneous figure.
// A driver without the buffer for this device is not asked again.
//
// Thread safety: not thread-safe; belongs to one GpuReader.
#pragma once

#include <optional>
#include <vector>

#include "monitor/gpu/nvml_library.h"

namespace stoker::monitor {

class UtilizationSamples {
 public:
  // `fn.device_get_samples` may be null: then there is never a figure.
  UtilizationSamples(const NvmlFunctions& fn, nvmlDevice_t device, nvmlSamplingType_t type);

  // The mean of the samples newer than the newest the last call saw, in %, or nullopt.
  std::optional<double> mean_since_last();

 private:
  const NvmlFunctions& fn_;
  nvmlDevice_t device_;
  nvmlSamplingType_t type_;
  bool supported_;
  bool started_ = false;
  unsigned long long seen_us_ = 0;  // the newest sample's timestamp so far
  std::vector<nvmlSample_t> buffer_;
};

}  // namespace stoker::monitor
