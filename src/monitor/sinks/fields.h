// The one table of logged figures, shared by the CSV and JSONL logs (and their docs).
#pragma once

#include "stoker/monitor/sample.h"

namespace stoker::monitor {

struct HostField {
  const char* name;
  const char* unit;
  const char* source;
  Reading HostSample::*member;
};

struct GpuField {
  const char* name;
  const char* unit;
  const char* source;
  Reading GpuSample::*member;
};

// In column order. Append only: existing columns never move.
inline constexpr HostField kHostFields[] = {
    {"cpu_percent", "%", "/proc/stat", &HostSample::cpu_percent},
    {"mem_used_bytes", "B", "/proc/meminfo", &HostSample::memory_used_bytes},
    {"mem_available_bytes", "B", "/proc/meminfo", &HostSample::memory_available_bytes},
    {"mem_total_bytes", "B", "/proc/meminfo", &HostSample::memory_total_bytes},
    {"swap_used_bytes", "B", "/proc/meminfo", &HostSample::swap_used_bytes},
    {"swap_total_bytes", "B", "/proc/meminfo", &HostSample::swap_total_bytes},
    {"disk_read_bytes_per_s", "B/s", "/proc/diskstats", &HostSample::disk_read_bytes_per_s},
    {"disk_write_bytes_per_s", "B/s", "/proc/diskstats", &HostSample::disk_write_bytes_per_s},
    {"net_rx_bytes_per_s", "B/s", "/proc/net/dev", &HostSample::net_rx_bytes_per_s},
    {"net_tx_bytes_per_s", "B/s", "/proc/net/dev", &HostSample::net_tx_bytes_per_s},
    {"proc_cpu_percent", "% of one core", "/proc/<pid>", &HostSample::process_cpu_percent},
    {"proc_rss_bytes", "B", "/proc/<pid>", &HostSample::process_rss_bytes},
    {"proc_count", "", "/proc/<pid>", &HostSample::process_count},
};

// The throttle mask is logged separately as words (gpu<N>_throttle).
inline constexpr GpuField kGpuFields[] = {
    {"util_percent", "%", "nvml", &GpuSample::util_gpu_percent},
    {"mem_util_percent", "%", "nvml", &GpuSample::util_memory_percent},
    {"mem_used_bytes", "B", "nvml", &GpuSample::memory_used_bytes},
    {"mem_total_bytes", "B", "nvml", &GpuSample::memory_total_bytes},
    {"power_w", "W", "nvml", &GpuSample::power_watts},
    {"power_limit_w", "W", "nvml", &GpuSample::power_limit_watts},
    {"temp_c", "°C", "nvml", &GpuSample::temperature_c},
    {"sm_clock_mhz", "MHz", "nvml", &GpuSample::sm_clock_mhz},
    {"pcie_rx_bytes_per_s", "B/s", "nvml", &GpuSample::pcie_rx_bytes_per_s},
    {"pcie_tx_bytes_per_s", "B/s", "nvml", &GpuSample::pcie_tx_bytes_per_s},
    {"sm_activity_percent", "%", "nvml-gpm", &GpuSample::sm_activity_percent},
    {"sm_occupancy_percent", "%", "nvml-gpm", &GpuSample::sm_occupancy_percent},
    {"tensor_activity_percent", "%", "nvml-gpm", &GpuSample::tensor_activity_percent},
    {"dram_bw_percent", "%", "nvml-gpm", &GpuSample::dram_bandwidth_percent},
    {"proc_mem_bytes", "B", "nvml", &GpuSample::process_memory_bytes},
};

}  // namespace stoker::monitor
