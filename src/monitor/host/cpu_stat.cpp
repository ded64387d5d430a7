#include "monitor/host/cpu_stat.h"

#include <algorithm>
#include <array>

#include "monitor/host/proc_files.h"

namespace stoker::monitor::host {
namespace {

// user nice system idle iowait irq softirq steal: older kernels print fewer (steal came in
// 2.6.11), so missing trailing columns count as 0 but at least user..idle must be there.
constexpr size_t kColumns = 8;
constexpr size_t kRequiredColumns = 4;

bool parse_times(std::string_view rest, CpuTimes* out) {
  std::array<uint64_t, kColumns> v{};
  size_t count = 0;
  std::string_view field;
  while (count < v.size() && next_field(&rest, &field)) {
    if (!parse_u64(field, &v[count])) return false;
    ++count;
  }
  if (count < kRequiredColumns) return false;
  const auto& [user, nice, system, idle, iowait, irq, softirq, steal] = v;
  out->busy = user + nice + system + irq + softirq + steal;
  out->total = out->busy + idle + iowait;
  out->present = true;
  return true;
}

}  // namespace

bool parse_cpu_stat(std::string_view text, CpuStat* out) {
  out->all = CpuTimes{};
  out->cores.clear();
  std::string_view line;
  while (next_line(&text, &line)) {
    if (!line.starts_with("cpu")) {
      // The cpu lines come first; once past them the rest (intr, ctxt, ...) is not needed.
      if (out->all.present) break;
      continue;
    }
    std::string_view rest = line;
    std::string_view name;
    next_field(&rest, &name);
    if (name == "cpu") {
      parse_times(rest, &out->all);
      continue;
    }
    uint64_t index = 0;
    // Bound the index so a corrupt line cannot make us allocate a huge vector.
    if (!parse_u64(name.substr(3), &index) || index >= 65536) continue;
    if (out->cores.size() <= index) out->cores.resize(index + 1);
    CpuTimes times;
    if (parse_times(rest, &times)) out->cores[index] = times;
  }
  return out->all.present;
}

std::optional<double> busy_percent(const CpuTimes& before, const CpuTimes& after) {
  if (!before.present || !after.present) return std::nullopt;
  if (after.busy < before.busy || after.total <= before.total) return std::nullopt;
  const double busy = static_cast<double>(after.busy - before.busy);
  const double total = static_cast<double>(after.total - before.total);
  // idle can step back a little on NOHZ kernels while busy does not, so the ratio is clamped.
  return std::min(100.0, 100.0 * busy / total);
}

}  // namespace stoker::monitor::host
