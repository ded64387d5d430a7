// Private: the fields of /proc/<pid>/stat the process-tree figures need.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::monitor::host {

struct ProcStat {
  char state = '?';  // 'R', 'S', 'Z' (zombie), ...
  pid_t ppid = 0;
  uint64_t cpu_ticks = 0;   // utime + stime, all threads, in sysconf(_SC_CLK_TCK) ticks
  uint64_t start_time = 0;  // ticks after boot: tells a reused pid from the process before
  uint64_t rss_pages = 0;   // the same counter as the second field of /proc/<pid>/statm
};

// Parses one /proc/<pid>/stat line. The command name (field 2) is in parentheses and may
// itself hold spaces and parentheses ("(my (weird) proc)"), so the fields are counted from
// the LAST ')'. False for a truncated or malformed line.
bool parse_proc_stat(std::string_view text, ProcStat* out);

// Neither a zombie (exited, not yet reaped) nor dead.
inline bool is_running(const ProcStat& stat) { return stat.state != 'Z' && stat.state != 'X'; }

// True when <proc_root>/<pid>/stat exists and the process is not a zombie (exited, not yet
// reaped) or dead. Thread-safe: uses its own buffer.
bool process_running(const std::string& proc_root, pid_t pid);

}  // namespace stoker::monitor::host
