#include "stoker/monitor/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stoker::monitor {

SeriesStats SummaryRecorder::Series::stats() const {
  SeriesStats s;
  s.count = values.size();
  if (values.empty()) return s;
  double sum = 0;
  for (float v : values) {
    sum += v;
    s.peak = std::max(s.peak, static_cast<double>(v));
  }
  s.mean = sum / static_cast<double>(values.size());
  std::vector<float> sorted = values;
  // Nearest-rank p95: the smallest value with at least 95 % of samples at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(sorted.size())));
  const size_t at = rank == 0 ? 0 : rank - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(at), sorted.end());
  s.p95 = sorted[at];
  return s;
}

void SummaryRecorder::add(const Sample& sample) {
  const double dt = samples_ == 0 ? 0.0 : sample.seconds - last_seconds_;
  if (first_seconds_ < 0) first_seconds_ = sample.seconds;
  last_seconds_ = sample.seconds;
  ++samples_;
  const HostSample& host = sample.host;
  cpu_.add(host.cpu_percent);
  memory_.add(host.memory_used_bytes);
  process_cpu_.add(host.process_cpu_percent);
  process_rss_.add(host.process_rss_bytes);
  if (host.disk_read_bytes_per_s.ok()) disk_read_ += host.disk_read_bytes_per_s.value * dt;
  if (host.disk_write_bytes_per_s.ok()) disk_write_ += host.disk_write_bytes_per_s.value * dt;

  if (gpus_.size() < sample.gpus.size()) gpus_.resize(sample.gpus.size());
  bool all_idle = !sample.gpus.empty();
  bool judged = host.cpu_percent.ok() && !sample.gpus.empty();
  for (size_t g = 0; g < sample.gpus.size(); ++g) {
    const GpuSample& gpu = sample.gpus[g];
    GpuSeries& series = gpus_[g];
    series.util.add(gpu.util_gpu_percent);
    series.sm_activity.add(gpu.sm_activity_percent);
    series.tensor.add(gpu.tensor_activity_percent);
    series.memory.add(gpu.memory_used_bytes);
    series.process_memory.add(gpu.process_memory_bytes);
    series.power.add(gpu.power_watts);
    // SM activity says whether the GPU was really busy; utilisation only that a kernel ran.
    const Reading& busy = gpu.sm_activity_percent.ok() ? gpu.sm_activity_percent : gpu.util_gpu_percent;
    if (!busy.ok()) {
      judged = false;
    } else if (busy.value >= kGpuIdleBelowPercent) {
      all_idle = false;
    }
  }
  if (judged) {
    ++idle_judged_;
    if (all_idle && host.cpu_percent.value >= kCpuBusyFromPercent) ++idle_busy_;
  }
}

Summary SummaryRecorder::summary() const {
  Summary s;
  s.samples = samples_;
  s.seconds = samples_ > 0 ? last_seconds_ - first_seconds_ : 0;
  s.cpu_percent = cpu_.stats();
  s.memory_used_bytes = memory_.stats();
  s.process_cpu_percent = process_cpu_.stats();
  s.process_rss_bytes = process_rss_.stats();
  s.disk_read_bytes = disk_read_;
  s.disk_write_bytes = disk_write_;
  for (size_t g = 0; g < gpus_.size(); ++g) {
    GpuSummary gs;
    gs.index = static_cast<int>(g);
    gs.util_percent = gpus_[g].util.stats();
    gs.sm_activity_percent = gpus_[g].sm_activity.stats();
    gs.tensor_activity_percent = gpus_[g].tensor.stats();
    gs.memory_used_bytes = gpus_[g].memory.stats();
    gs.process_memory_bytes = gpus_[g].process_memory.stats();
    gs.power_watts = gpus_[g].power.stats();
    s.gpus.push_back(gs);
  }
  if (idle_judged_ > 0) {
    s.gpu_idle_cpu_busy_share = static_cast<double>(idle_busy_) / static_cast<double>(idle_judged_);
  }
  return s;
}

namespace {

std::string duration_text(double seconds) {
  const auto total = static_cast<long long>(std::llround(seconds));
  if (total < 60) return fmt::format("{:.1f} s", seconds);
  if (total < 3600) return fmt::format("{} min {} s", total / 60, total % 60);
  return fmt::format("{} h {} min", total / 3600, (total % 3600) / 60);
}

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

}  // namespace

std::string format_summary(const Summary& s, const std::string& gpu_status) {
  const std::string indent(16, ' ');
  std::string out = "stoker monitor: " + duration_text(s.seconds);
  if (s.gpus.empty()) out += " · " + gpu_status.substr(0, gpu_status.find(':'));  // "no GPU"
  for (const GpuSummary& g : s.gpus) {
    out += fmt::format(" · GPU{}", g.index);
    if (g.util_percent.ok()) {
      out += fmt::format(" util mean {:.0f} % (p95 {:.0f} %)", g.util_percent.mean, g.util_percent.p95);
    }
    if (g.sm_activity_percent.ok()) {
      out += fmt::format(" · SM activity mean {:.0f} %", g.sm_activity_percent.mean);
    }
    if (g.memory_used_bytes.ok()) out += " · peak VRAM " + gb(g.memory_used_bytes.peak);
  }
  out += "\n" + indent;
  std::vector<std::string> host;
  if (s.cpu_percent.ok()) host.push_back(fmt::format("CPU mean {:.0f} %", s.cpu_percent.mean));
  if (s.process_rss_bytes.ok()) host.push_back("peak RSS " + gb(s.process_rss_bytes.peak));
  if (s.process_cpu_percent.ok()) {
    host.push_back(fmt::format("process CPU mean {:.0f} % of a core", s.process_cpu_percent.mean));
  }
  host.push_back("disk read " + gb(s.disk_read_bytes));
  for (size_t i = 0; i < host.size(); ++i) out += (i ? " · " : "") + host[i];
  out += "\n";
  if (s.gpu_idle_cpu_busy_share >= 0) {
    out += indent + fmt::format("GPU idle while CPU busy {:.0f} % of the time", 100 * s.gpu_idle_cpu_busy_share);
    if (s.gpu_idle_cpu_busy_share >= kIdleShareHintFrom) {
      out += " → the input pipeline is likely the bottleneck";
    }
    out += "\n";
  }
  return out;
}

}  // namespace stoker::monitor
