#include "monitor/host/net_dev.h"

#include "monitor/host/proc_files.h"

namespace stoker::monitor::host {
namespace {

// After "name:", eight receive columns (bytes packets errs drop fifo frame compressed
// multicast) come before the transmit bytes.
constexpr int kReceiveColumns = 8;

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

void parse_net_dev(std::string_view text, std::vector<DeviceCounters>* out) {
  out->clear();
  std::string_view line;
  while (next_line(&text, &line)) {
    // "  eth0: 284117883 6267 ...": old kernels print no space after the colon once the
    // byte count is wide, so split on the colon, not on blanks. The headers have no colon.
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = trim_blanks(line.substr(0, colon));
    if (name.empty() || name == "lo") continue;
    std::string_view rest = line.substr(colon + 1);
    uint64_t received = 0;
    uint64_t sent = 0;
    if (!next_u64(&rest, &received) || !skip_fields(&rest, kReceiveColumns - 1) || !next_u64(&rest, &sent)) {
      continue;
    }
    out->push_back({std::string(name), received, sent});
  }
}

}  // namespace stoker::monitor::host
