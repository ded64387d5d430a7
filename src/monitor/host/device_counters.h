// Private: per-device byte counters (disks, network interfaces) and the rate between two
// reads, matched by device name so a device that appears or vanishes between reads neither
// adds its lifetime total as a spike nor makes the sum go down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::monitor::host {

struct DeviceCounters {
  // "sda", "eth0": kernel names fit the small-string buffer, so refilling a cleared vector
  // does not allocate.
  std::string name;
  uint64_t in = 0;   // disk: bytes read; network: bytes received
  uint64_t out = 0;  // disk: bytes written; network: bytes sent
};

struct CounterIncrease {
  uint64_t in = 0;
  uint64_t out = 0;
};

// Sums, over the devices present in both reads, how much each counter grew. False if any
// such counter went backwards (wrap, driver reset): that interval has no rate. Devices in
// only one read add nothing — a new one counts from its first read.
bool sum_increases(const std::vector<DeviceCounters>& before, const std::vector<DeviceCounters>& after,
                   CounterIncrease* out);

}  // namespace stoker::monitor::host
