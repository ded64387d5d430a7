#include "monitor/host/diskstats.h"

#include <utility>

#include "monitor/host/proc_files.h"

namespace stoker::monitor::host {
namespace {

constexpr uint64_t kSectorBytes = 512;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The disk `name` would be a partition of, by the kernel's naming: "sda1" -> "sda",
// "nvme0n1p2" -> "nvme0n1"; empty when the name cannot be a partition.
std::string_view parent_name(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && is_digit(name[end - 1])) --end;
  if (end == name.size() || end == 0) return {};
  if (name[end - 1] == 'p' && end >= 2 && is_digit(name[end - 2])) return name.substr(0, end - 1);
  if (is_digit(name[end - 1])) return {};
  return name.substr(0, end);
}

}  // namespace

bool is_virtual_disk(std::string_view name) {
  for (std::string_view prefix : {"loop", "ram", "zram", "sr", "fd"}) {
    if (name.size() > prefix.size() && name.starts_with(prefix) && is_digit(name[prefix.size()])) {
      return true;
    }
  }
  return false;
}

bool is_partition(std::string_view name, const std::vector<DeviceCounters>& listed) {
  const std::string_view parent = parent_name(name);
  if (parent.empty()) return false;
  for (const DeviceCounters& device : listed) {
    if (device.name == parent) return true;
  }
  return false;
}

void parse_diskstats(std::string_view text, std::vector<DeviceCounters>* out) {
  out->clear();
  std::string_view line;
  while (next_line(&text, &line)) {
    // major minor name reads reads_merged sectors_read ms_reading writes writes_merged
    // sectors_written ...
    std::string_view name;
    uint64_t sectors_read = 0;
    uint64_t sectors_written = 0;
    if (!skip_fields(&line, 2) || !next_field(&line, &name) || !skip_fields(&line, 2) ||
        !next_u64(&line, &sectors_read) || !skip_fields(&line, 3) || !next_u64(&line, &sectors_written)) {
      continue;
    }
    out->push_back({std::string(name), sectors_read * kSectorBytes, sectors_written * kSectorBytes});
  }
  // Keep whole disks at the front. Swapping rather than overwriting keeps every listed name
  // in the vector until the end, so is_partition() always sees the full list.
  size_t kept = 0;
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string& name = (*out)[i].name;
    if (is_virtual_disk(name) || is_partition(name, *out)) continue;
    if (i != kept) std::swap((*out)[kept], (*out)[i]);
    ++kept;
  }
  out->resize(kept);
}

}  // namespace stoker::monitor::host
