#include "monitor/host/meminfo.h"

#include <utility>

#include "monitor/host/proc_files.h"

namespace stoker::monitor::host {
namespace {

// "MemTotal:       16326476 kB": every figure we read is in kB (KiB, despite the name).
// False when the line is not `key`.
bool read_kib(std::string_view line, std::string_view key, std::optional<uint64_t>* out) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') {
    return false;
  }
  std::string_view rest = line.substr(key.size() + 1);
  uint64_t kib = 0;
  if (next_u64(&rest, &kib)) *out = kib * 1024;
  return true;
}

}  // namespace

MemInfo parse_meminfo(std::string_view text) {
  MemInfo info;
  std::optional<uint64_t> free, buffers, cached;
  const std::pair<std::string_view, std::optional<uint64_t>*> wanted[] = {
      {"MemTotal", &info.total},
      {"MemAvailable", &info.available},
      {"MemFree", &free},
      {"Buffers", &buffers},
      {"Cached", &cached},
      {"SwapTotal", &info.swap_total},
      {"SwapFree", &info.swap_free},
  };
  std::string_view line;
  while (next_line(&text, &line)) {
    for (const auto& [key, slot] : wanted) {
      if (read_kib(line, key, slot)) break;
    }
  }
  if (!info.available && free && buffers && cached) info.available = *free + *buffers + *cached;
  return info;
}

}  // namespace stoker::monitor::host
