// stoker/monitor/sampler.h — samples host and GPU figures on its own thread.
//
//   Sampler sampler({.interval_s = 1.0, .pid = child});
//   sampler.add_sink([](const Sample& s) { ... });  // runs on the sampler thread
//   sampler.start();
//   ...                                             // latest() / summary() from any thread
//   sampler.stop();
//
// Nothing here sits in a training loop's path: readers take the latest sample (a copy under
// a mutex) or the running summary. NVML is opened once at construction; without it the GPU
// part says why once (gpu_status()) and everything else works. PCIe throughput is read at
// `pcie_interval_s` because the call blocks ~20 ms. A sink that throws is disabled with a
// message on stderr; a sampling error never stops sampling.
//
// Thread safety: add_sink() and watch() before start(); start()/stop() from one thread; latest(),
// samples_published(), summary(), gpu_status(), gpus() from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "stoker/monitor/sample.h"
#include "stoker/monitor/summary.h"

namespace stoker::monitor {

struct SamplerOptions {
  double interval_s = 1.0;       // >= 0.05 (UsageError otherwise)
  double pcie_interval_s = 5.0;  // PCIe throughput at most this often
  pid_t pid = 0;                 // process tree to watch; 0 = none
  std::string proc_root = "/proc";
  bool gpu = true;           // false: do not load NVML
  std::string nvml_library;  // "" = libnvidia-ml.so.1, then libnvidia-ml.so
};

using SampleSink = std::function<void(const Sample&)>;

class Sampler {
 public:
  explicit Sampler(SamplerOptions options);
  ~Sampler();  // stops
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void add_sink(SampleSink sink);
  // Watch this process tree from now on (before start(); replaces options.pid).
  void watch(pid_t pid);
  void start();
  void stop();
  // Takes one sample now on the calling thread (for tests and one-shot use; not while
  // the sampler thread runs).
  Sample sample_once();

  bool has_sample() const;
  // Samples published so far: one atomic load, no lock and no copy, so a loop can look every
  // step and call latest() only when it grew.
  uint64_t samples_published() const;
  Sample latest() const;
  Summary summary() const;
  // "2 GPUs (NVIDIA H100 80GB HBM3 ×2) · driver 580.159" or "no GPU: NVML not found (...)".
  const std::string& gpu_status() const;
  const std::vector<GpuInfo>& gpus() const;
  bool watched_alive() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace stoker::monitor
