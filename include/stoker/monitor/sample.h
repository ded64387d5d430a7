// stoker/monitor/sample.h — one snapshot of the machine: host figures from /proc and, per
// GPU, figures from NVML. Plain values, cheap to copy.
//
// Every figure is a Reading: a value plus the source it came from ("nvml", "nvml-gpm",
// "/proc/stat", ...). A figure that could not be read has no source and is reported as
// unavailable — never as 0 — by every sink (empty CSV cell, JSON null, "n/a" on the line).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::monitor {

struct Reading {
  double value = 0;
  const char* source = nullptr;  // static string; nullptr = unavailable

  bool ok() const { return source != nullptr; }
  void set(double v, const char* from) {
    value = v;
    source = from;
  }
  void clear() {
    value = 0;
    source = nullptr;
  }
};

// What does not change while a GPU is watched.
struct GpuInfo {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;
  bool gpm_supported = false;  // Hopper or newer with GPM metrics
};

struct GpuSample {
  int index = 0;
  // % of the time a kernel ran (not "busy"): the mean of the driver's samples since the last
  // read (nvmlDeviceGetSamples) where it keeps them, else nvmlDeviceGetUtilizationRates' last
  // sample period.
  Reading util_gpu_percent;
  Reading util_memory_percent;  // the same for the memory controller
  Reading memory_used_bytes;
  Reading memory_total_bytes;
  Reading power_watts;
  Reading power_limit_watts;
  Reading temperature_c;
  Reading sm_clock_mhz;
  Reading throttle_reasons;     // clock-event reason bit mask (see describe_throttle_reasons)
  Reading pcie_rx_bytes_per_s;  // sampled at a lower rate (the call blocks ~20 ms)
  Reading pcie_tx_bytes_per_s;
  Reading sm_activity_percent;      // GPM: what share of SMs were busy — real saturation
  Reading sm_occupancy_percent;     // GPM: resident warps / max
  Reading tensor_activity_percent;  // GPM: tensor-core pipes busy
  Reading dram_bandwidth_percent;   // GPM: DRAM bandwidth utilisation
  Reading process_memory_bytes;     // used by the watched process tree
};

struct HostSample {
  Reading cpu_percent;  // all cores, 0..100
  // Per core, indexed by CPU number, 0..100; empty until two reads. NaN for a core with no
  // value this interval (offline, just plugged in, or its counters went back).
  std::vector<float> core_percent;
  Reading memory_total_bytes;
  Reading memory_available_bytes;
  Reading memory_used_bytes;  // total - available
  Reading swap_total_bytes;
  Reading swap_used_bytes;
  Reading disk_read_bytes_per_s;  // whole disks, partitions and virtual devices excluded
  Reading disk_write_bytes_per_s;
  Reading net_rx_bytes_per_s;  // all interfaces but loopback
  Reading net_tx_bytes_per_s;
  Reading process_cpu_percent;  // watched tree, % of one core (may exceed 100)
  Reading process_rss_bytes;    // watched tree, summed
  Reading process_count;        // processes in the watched tree
};

struct Sample {
  double seconds = 0;   // since the sampler started
  int64_t unix_ns = 0;  // wall clock, for ISO 8601 timestamps
  HostSample host;
  std::vector<GpuSample> gpus;
};

// Words for a clock-event reason mask, lowest bit first and comma-separated, e.g. 0x44 ->
// "power cap, HW thermal"; "none" for 0; bits NVML did not define when this was written are
// appended as one hex number ("idle, 0x1000").
std::string describe_throttle_reasons(uint64_t mask);

}  // namespace stoker::monitor
