#include <fmt/format.h>
#include <unistd.h>

#include <string>

#include "stoker/core/terminal.h"
#include "stoker/monitor/sinks.h"

namespace stoker::monitor {

std::string format_status_line(const Sample& s) {
  std::vector<std::string> parts;
  for (const GpuSample& g : s.gpus) {
    std::string gpu = fmt::format("GPU{}", g.index);
    gpu += g.util_gpu_percent.ok() ? fmt::format(" {:.0f}%", g.util_gpu_percent.value) : " n/a";
    if (g.sm_activity_percent.ok()) gpu += fmt::format(" SM {:.0f}%", g.sm_activity_percent.value);
    if (g.tensor_activity_percent.ok()) gpu += fmt::format(" TC {:.0f}%", g.tensor_activity_percent.value);
    parts.push_back(gpu);
    if (g.memory_used_bytes.ok() && g.memory_total_bytes.ok()) {
      parts.push_back(
          fmt::format("VRAM {:.1f}/{:.1f} GB", g.memory_used_bytes.value / 1e9, g.memory_total_bytes.value / 1e9));
    }
    std::string power;
    if (g.power_watts.ok()) power = fmt::format("{:.0f} W", g.power_watts.value);
    if (g.temperature_c.ok()) power += fmt::format("{}{:.0f}°C", power.empty() ? "" : " ", g.temperature_c.value);
    if (g.throttle_reasons.ok()) {
      const auto mask = static_cast<uint64_t>(g.throttle_reasons.value) & ~uint64_t{1};  // idle is not news
      if (mask != 0) power += (power.empty() ? "" : " ") + ("throttled: " + describe_throttle_reasons(mask));
    }
    if (!power.empty()) parts.push_back(power);
  }
  const HostSample& h = s.host;
  parts.push_back(h.cpu_percent.ok() ? fmt::format("CPU {:.0f}%", h.cpu_percent.value) : "CPU n/a");
  if (h.memory_used_bytes.ok() && h.memory_total_bytes.ok()) {
    parts.push_back(
        fmt::format("RAM {:.1f}/{:.1f} GB", h.memory_used_bytes.value / 1e9, h.memory_total_bytes.value / 1e9));
  }
  if (h.process_rss_bytes.ok()) {
    parts.push_back(fmt::format("proc {:.0f}% RSS {:.1f} GB",
                                h.process_cpu_percent.ok() ? h.process_cpu_percent.value : 0.0,
                                h.process_rss_bytes.value / 1e9));
  }
  if (h.disk_read_bytes_per_s.ok()) {
    parts.push_back(fmt::format("disk r {:.0f} MB/s w {:.0f} MB/s", h.disk_read_bytes_per_s.value / 1e6,
                                h.disk_write_bytes_per_s.ok() ? h.disk_write_bytes_per_s.value / 1e6 : 0.0));
  }
  std::string line;
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? " | " : "") + parts[i];
  return line;
}

StatusLine::StatusLine(std::FILE* out) : out_(out), terminal_(::isatty(::fileno(out)) == 1) {}

void StatusLine::write(const Sample& sample) {
  const std::string line = format_status_line(sample);
  if (terminal_) {
    // Redraw in place and clear the rest; a wrapped line could not be redrawn.
    std::fprintf(out_, "\r%s\x1b[K", fit_to_width(line, terminal_columns(out_) - 1).c_str());
    dirty_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void StatusLine::finish() {
  if (dirty_) std::fputc('\n', out_);
  dirty_ = false;
  std::fflush(out_);
}

}  // namespace stoker::monitor
