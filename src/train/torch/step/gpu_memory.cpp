#include "train/torch/step/gpu_memory.h"

#include <fmt/format.h>
#include <unistd.h>

#include <vector>

#include "stoker/core/clock.h"
#include "stoker/monitor/gpu_reader.h"

namespace stoker::train {

std::string gpu_memory_text(int gpu_index) {
  std::string why;
  const auto reader = monitor::GpuReader::open(&why);
  if (!reader) return "unknown (" + why + ")";
  std::vector<monitor::GpuSample> samples;
  reader->sample(&samples, now_ns(), {::getpid()}, false);
  for (const monitor::GpuSample& gpu : samples) {
    if (gpu.index != gpu_index || !gpu.process_memory_bytes.ok()) continue;
    return fmt::format("{:.2f} GiB used by this process (NVML)", gpu.process_memory_bytes.value / (1 << 30));
  }
  return "unknown (NVML does not report this process on GPU " + std::to_string(gpu_index) + ")";
}

void GpuMemoryPeak::attach(monitor::Sampler& sampler, int gpu_index) {
  sampler.add_sink([this, gpu_index](const monitor::Sample& sample) {
    for (const monitor::GpuSample& gpu : sample.gpus) {
      if (gpu.index != gpu_index || !gpu.process_memory_bytes.ok()) continue;
      const double used = gpu.process_memory_bytes.value;
      double seen = peak_.load();
      while (used > seen && !peak_.compare_exchange_weak(seen, used)) {
      }
    }
  });
}

}  // namespace stoker::train
