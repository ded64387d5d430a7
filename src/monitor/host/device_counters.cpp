#include "monitor/host/device_counters.h"

namespace stoker::monitor::host {
namespace {

// The kernel lists devices in a stable order, so the same index is tried first.
const DeviceCounters* find(const std::vector<DeviceCounters>& list, size_t hint, const std::string& name) {
  if (hint < list.size() && list[hint].name == name) return &list[hint];
  for (const DeviceCounters& device : list) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

}  // namespace

bool sum_increases(const std::vector<DeviceCounters>& before, const std::vector<DeviceCounters>& after,
                   CounterIncrease* out) {
  *out = CounterIncrease{};
  for (size_t i = 0; i < after.size(); ++i) {
    const DeviceCounters& now = after[i];
    const DeviceCounters* then = find(before, i, now.name);
    if (then == nullptr) continue;
    if (now.in < then->in || now.out < then->out) return false;
    out->in += now.in - then->in;
    out->out += now.out - then->out;
  }
  return true;
}

}  // namespace stoker::monitor::host
