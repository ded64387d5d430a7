// stoker/monitor/summary.h — running statistics over a monitoring session: mean, p95 and
// peak of the figures a user asks about after a run, and the share of time the GPU idled
// while the CPU was busy (the signature of an input-bound job).
//
// Thread safety: a SummaryRecorder is not thread-safe; the Sampler guards it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "stoker/monitor/sample.h"

namespace stoker::monitor {

struct SeriesStats {
  size_t count = 0;  // samples that had the figure
  double mean = 0;
  double p95 = 0;
  double peak = 0;
  bool ok() const { return count > 0; }
};

struct GpuSummary {
  int index = 0;
  SeriesStats util_percent;
  SeriesStats sm_activity_percent;
  SeriesStats tensor_activity_percent;
  SeriesStats memory_used_bytes;  // .peak = peak VRAM
  SeriesStats process_memory_bytes;
  SeriesStats power_watts;
};

// Thresholds of the "GPU idle while CPU busy" share.
inline constexpr double kGpuIdleBelowPercent = 20.0;  // GPU utilisation (or SM activity) under this
inline constexpr double kCpuBusyFromPercent = 60.0;   // host CPU at or above this
inline constexpr double kIdleShareHintFrom = 0.2;     // print the input-pipeline hint from 20 %

struct Summary {
  double seconds = 0;
  size_t samples = 0;
  SeriesStats cpu_percent;
  SeriesStats memory_used_bytes;
  SeriesStats process_cpu_percent;
  SeriesStats process_rss_bytes;
  double disk_read_bytes = 0;  // integrated over the session
  double disk_write_bytes = 0;
  std::vector<GpuSummary> gpus;
  // Share of samples (with GPU and CPU figures) where every GPU was idle and the CPU busy;
  // negative when there were no such samples to judge (no GPU).
  double gpu_idle_cpu_busy_share = -1;
};

class SummaryRecorder {
 public:
  void add(const Sample& sample);
  Summary summary() const;

 private:
  struct Series {
    std::vector<float> values;
    void add(const Reading& r) {
      if (r.ok()) values.push_back(static_cast<float>(r.value));
    }
    SeriesStats stats() const;
  };
  struct GpuSeries {
    Series util, sm_activity, tensor, memory, process_memory, power;
  };
  double first_seconds_ = -1;
  double last_seconds_ = 0;
  size_t samples_ = 0;
  Series cpu_, memory_, process_cpu_, process_rss_;
  std::vector<GpuSeries> gpus_;
  double disk_read_ = 0, disk_write_ = 0;
  size_t idle_judged_ = 0, idle_busy_ = 0;
};

// The multi-line report `stoker monitor` prints when a watched command ends, e.g.
// "stoker monitor: 12 min 31 s · GPU0 util mean 58 % (p95 97 %) · ..." Lines end in '\n'.
std::string format_summary(const Summary& summary, const std::string& gpu_status);

}  // namespace stoker::monitor
