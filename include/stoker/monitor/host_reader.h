// stoker/monitor/host_reader.h — CPU, memory, disk, network and process-tree figures from
// /proc. The root directory is a parameter, so tests point it at a fake /proc tree.
//
// Rates (CPU %, bytes/s) are computed against the previous sample(); the first call has
// none (unavailable). Counters that go backwards (wrap, device reset) give no rate for that
// interval rather than a huge or negative one. A process that exits between listing and
// reading is skipped, not an error. No call throws for a missing or unreadable file: the
// figures it would have given are unavailable.
//
// Thread safety: not thread-safe; one reader per sampling thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/monitor/sample.h"

namespace stoker::monitor {

class HostReader {
 public:
  explicit HostReader(std::string proc_root = "/proc");
  ~HostReader();
  HostReader(const HostReader&) = delete;
  HostReader& operator=(const HostReader&) = delete;

  // The root of the process tree to watch (it and all descendants); 0 = none.
  void watch(pid_t pid);
  // True while the watched root process exists and is not a zombie (false when none is
  // watched). Reads the root's /proc/<pid>/stat now, so it is valid before the first sample().
  bool watched_alive() const;

  // Fills `out`; `now_ns` is a monotonic timestamp used for rates. With no process watched,
  // /proc/<pid> is not scanned at all. Reusing the same `out` across calls avoids
  // reallocating core_percent.
  void sample(HostSample* out, int64_t now_ns);

  // Pids of the watched tree as of the last sample() (for per-process GPU memory).
  const std::vector<pid_t>& watched_pids() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stoker::monitor
