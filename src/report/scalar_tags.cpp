#include "stoker/report/scalar_tags.h"

#include <fmt/format.h>

namespace stoker::report {

namespace tags {

std::string gpu_tag(int index, const char* name) { return fmt::format("gpu{}/{}", index, name); }

}  // namespace tags

namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

void add(std::vector<Scalar>* out, std::string tag, const monitor::Reading& reading, double scale = 1) {
  if (reading.ok()) out->push_back({std::move(tag), reading.value * scale});
}

// used / total in %, when both are there and total is not 0.
void add_percent(std::vector<Scalar>* out, std::string tag, const monitor::Reading& used,
                 const monitor::Reading& total) {
  if (used.ok() && total.ok() && total.value > 0) out->push_back({std::move(tag), 100 * used.value / total.value});
}

}  // namespace

std::vector<Scalar> step_time_scalars(const std::string& loop, int64_t samples, double wait_s, double copy_s,
                                      double compute_s) {
  using namespace tags;
  const double total = wait_s + copy_s + compute_s;
  if (!(total > 0)) return {};
  // A named loop's tags: its name in place of "train/", before the step_time/ ones.
  const auto tag = [&loop](const char* name, const char* leaf) { return loop.empty() ? name : loop + "/" + leaf; };
  return {{tag(kTrainSamplesPerSec, "samples_per_sec"), static_cast<double>(samples) / total},
          {tag(kWaitShare, kWaitShare), wait_s / total},
          {tag(kCopyShare, kCopyShare), copy_s / total},
          {tag(kComputeShare, kComputeShare), compute_s / total}};
}

std::vector<Scalar> monitor_scalars(const monitor::Sample& sample) {
  using namespace tags;
  std::vector<Scalar> out;
  const monitor::HostSample& host = sample.host;
  add(&out, kHostCpuPercent, host.cpu_percent);
  add(&out, kHostRamUsedGib, host.memory_used_bytes, 1 / kGib);
  add_percent(&out, kHostRamPercent, host.memory_used_bytes, host.memory_total_bytes);
  add(&out, kProcessCpuPercent, host.process_cpu_percent);
  add(&out, kProcessRssGib, host.process_rss_bytes, 1 / kGib);
  for (const monitor::GpuSample& gpu : sample.gpus) {
    add(&out, gpu_tag(gpu.index, kGpuUtil), gpu.util_gpu_percent);
    add(&out, gpu_tag(gpu.index, kGpuSmActivity), gpu.sm_activity_percent);
    add(&out, gpu_tag(gpu.index, kGpuMemoryUsedGib), gpu.memory_used_bytes, 1 / kGib);
    add_percent(&out, gpu_tag(gpu.index, kGpuMemoryPercent), gpu.memory_used_bytes, gpu.memory_total_bytes);
  }
  return out;
}

}  // namespace stoker::report
