// Private: the memory and swap totals of /proc/meminfo, in bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stoker::monitor::host {

struct MemInfo {
  std::optional<uint64_t> total;
  // MemAvailable, the kernel's estimate of what can be allocated without swapping. Kernels
  // before 3.14 lack it; then MemFree + Buffers + Cached, which overstates it a little
  // (not all page cache can be dropped) but is what free(1) did then.
  std::optional<uint64_t> available;
  std::optional<uint64_t> swap_total;
  std::optional<uint64_t> swap_free;
};

// Parses /proc/meminfo text; a key that is missing or malformed stays empty.
MemInfo parse_meminfo(std::string_view text);

}  // namespace stoker::monitor::host
