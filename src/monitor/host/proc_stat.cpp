#include "monitor/host/proc_stat.h"

#include <limits>

#include "monitor/host/proc_files.h"

namespace stoker::monitor::host {

bool parse_proc_stat(std::string_view text, ProcStat* out) {
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  std::string_view rest = text.substr(close + 1);
  // Fields from 3 on, numbered as in proc(5): 3 state, 4 ppid, 14 utime, 15 stime,
  // 22 starttime, 24 rss. Only the ones read are parsed: others (tpgid, nice) may be signed.
  std::string_view state;
  uint64_t ppid = 0;
  uint64_t utime = 0;
  uint64_t stime = 0;
  if (!next_field(&rest, &state) || state.size() != 1 || !next_u64(&rest, &ppid) || !skip_fields(&rest, 9) ||
      !next_u64(&rest, &utime) || !next_u64(&rest, &stime) || !skip_fields(&rest, 6) ||
      !next_u64(&rest, &out->start_time) || !skip_fields(&rest, 1) || !next_u64(&rest, &out->rss_pages)) {
    return false;
  }
  if (ppid > static_cast<uint64_t>(std::numeric_limits<pid_t>::max())) return false;
  out->state = state[0];
  out->ppid = static_cast<pid_t>(ppid);
  out->cpu_ticks = utime + stime;
  return true;
}

bool process_running(const std::string& proc_root, pid_t pid) {
  if (pid <= 0) return false;
  std::string text;
  ProcStat stat;
  const std::string path = proc_root + "/" + std::to_string(pid) + "/stat";
  return read_small_file(path.c_str(), &text) && parse_proc_stat(text, &stat) && is_running(stat);
}

}  // namespace stoker::monitor::host
