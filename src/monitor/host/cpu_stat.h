// Private: the "cpu" and "cpuN" lines of /proc/stat, and busy percentages between two reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace stoker::monitor::host {

// Jiffies since boot. busy = user + nice + system + irq + softirq + steal; idle = idle +
// iowait; guest and guest_nice are not added again because the kernel already counts them
// in user and nice.
struct CpuTimes {
  uint64_t busy = 0;
  uint64_t total = 0;    // busy + idle
  bool present = false;  // false for a cpuN missing from the file (offline core)
};

struct CpuStat {
  CpuTimes all;                 // the "cpu" line
  std::vector<CpuTimes> cores;  // indexed by N of "cpuN"; gaps are offline cores
};

// Parses the cpu lines of /proc/stat text into *out (reusing its vector). False if there is
// no well-formed "cpu" line. A malformed "cpuN" line leaves that core not present.
bool parse_cpu_stat(std::string_view text, CpuStat* out);

// Busy share of the jiffies that passed between two reads, 0..100. Nothing when either read
// lacks the core, no jiffy passed, or a counter went backwards (wrap, hotplug): a rate over
// such an interval would be meaningless.
std::optional<double> busy_percent(const CpuTimes& before, const CpuTimes& after);

}  // namespace stoker::monitor::host
