// stoker/monitor/gpu_reader.h — per-GPU figures through NVML, loaded at run time.
//
// NVML is opened with dlopen("libnvidia-ml.so.1"), falling back to "libnvidia-ml.so"; no
// NVML header or library is needed to build stoker. On a machine without the driver, open()
// returns nullptr and says why once; everything else in stoker works.
//
// GPM metrics (SM activity, SM occupancy, tensor-core activity, DRAM bandwidth) exist on
// Hopper and newer: they are computed from two GPM samples at least 100 ms apart, so the
// first sample() after open() has them unavailable. PCIe throughput calls block ~20 ms each,
// so they are read only when sample() is asked to (the sampler does it at a lower rate).
// Any NVML call that fails leaves its figure unavailable; it never ends sampling. Where the
// driver lacks a newer call (NVML_ERROR_FUNCTION_NOT_FOUND) the older one is used instead:
// memory from nvmlDeviceGetMemoryInfo_v2 (used excludes the driver's reservation, as
// nvidia-smi shows it) else v1 (used includes it); clock-event reasons from
// nvmlDeviceGetCurrentClocksEventReasons else ...ThrottleReasons.
//
// process_memory_bytes matches NVML's pids, which are the host's: inside a container with
// its own pid namespace the watched pids do not match and the figure reads 0.
//
// Sources: "nvml" for plain calls, "nvml-gpm" for GPM metrics.
//
// Thread safety: not thread-safe; one reader per sampling thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/monitor/sample.h"

namespace stoker::monitor {

class GpuReader {
 public:
  // Loads NVML and initialises it. `library` overrides the dlopen name (tests use a fake).
  // On failure returns nullptr and puts a one-line reason in *why_not (if not null), e.g.
  // "NVML not found (libnvidia-ml.so.1: cannot open shared object file: ...)" or
  // "NVML could not start (Driver Not Loaded)". No GPU NVML can open is a failure too.
  // A GPU NVML refuses (no permission) is left out; the others keep their NVML index.
  static std::unique_ptr<GpuReader> open(std::string* why_not, const std::string& library = "");
  ~GpuReader();
  GpuReader(const GpuReader&) = delete;
  GpuReader& operator=(const GpuReader&) = delete;

  const std::vector<GpuInfo>& gpus() const;
  // Driver and NVML versions, e.g. "driver 580.159, NVML 13.580.159".
  const std::string& versions() const;

  // One GpuSample per GPU in gpus() order, overwriting *out. `now_ns`: a monotonic clock,
  // used to space the GPM samples. `pids`: the watched process tree, for
  // process_memory_bytes (unavailable when empty). `with_pcie`: also read PCIe throughput.
  void sample(std::vector<GpuSample>* out, int64_t now_ns, const std::vector<pid_t>& pids, bool with_pcie);

  struct Impl;

 private:
  explicit GpuReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker::monitor
