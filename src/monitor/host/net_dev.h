// Private: bytes received and sent per network interface, from /proc/net/dev.
#pragma once

#include <string_view>
#include <vector>

#include "monitor/host/device_counters.h"

namespace stoker::monitor::host {

// Parses /proc/net/dev text into *out (cleared first): one entry per interface but the
// loopback "lo", `in` = bytes received, `out` = bytes sent. The two header lines and
// malformed lines are skipped. Every other interface counts, so traffic that crosses a
// bridge or veth pair (containers) is counted on each interface it passes.
void parse_net_dev(std::string_view text, std::vector<DeviceCounters>* out);

}  // namespace stoker::monitor::host
