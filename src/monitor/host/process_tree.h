// Private: a watched process and all its descendants, found through the ppid of every
// process in /proc, with their summed CPU time and resident memory.
//
// Cost: reading /proc/<pid>/stat for every process costs a few microseconds each, which on
// a busy machine (hundreds of processes) would dominate the whole sampler. So a process
// seen outside the tree keeps its cached ppid and is not read again: outside the tree it
// cannot gain a parent inside it (an orphan is re-parented to an ancestor of its dead parent,
// which is outside the tree too). Each sample reads only the tree's members and pids that
// are new since the last sample; a cached entry the walk reaches is re-read before it is
// trusted. What the cache can miss: a pid freed and reused between two samples by a new
// child of the tree — so everything is re-read every 30 s, and on watch().
//
// Descendants are by ppid: a grandchild whose parent exits is re-parented (to init or a
// subreaper) and leaves the tree unless that subreaper is in the tree.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stoker::monitor::host {

struct TreeFigures {
  bool root_found = false;  // the root's stat was readable: the rest is valid
  int process_count = 0;
  uint64_t rss_bytes = 0;  // summed: pages shared between members count once per member
  // % of one core since the previous sample, summed over the pids present in both samples;
  // nothing on the first sample of a root.
  std::optional<double> cpu_percent;
};

class ProcessTree {
 public:
  explicit ProcessTree(std::string proc_root);
  ~ProcessTree();
  ProcessTree(const ProcessTree&) = delete;
  ProcessTree& operator=(const ProcessTree&) = delete;

  // 0 = none. Forgets the previous figures and forces a full rescan.
  void watch(pid_t root);
  pid_t root() const { return root_; }

  // Rescans; `now_ns` is monotonic, for the CPU rate.
  void sample(int64_t now_ns, TreeFigures* out);

  // The tree as of the last sample(), ascending.
  const std::vector<pid_t>& pids() const { return pids_; }

  // Reads the root's stat now: it exists and is not a zombie.
  bool root_alive() const;

 private:
  struct Entry {
    pid_t pid = 0;
    pid_t ppid = 0;
    uint64_t cpu_ticks = 0;
    uint64_t start_time = 0;
    uint64_t rss_pages = 0;
    bool fresh = false;  // read this sample (not a cached ppid)
    bool in_tree = false;
  };
  struct Member {  // what the CPU rate needs from the previous sample
    pid_t pid = 0;
    uint64_t start_time = 0;
    uint64_t cpu_ticks = 0;
  };

  bool list_pids();
  bool read_entry(pid_t pid, Entry* entry);
  void build_entries(bool full_scan);
  void walk_tree(size_t root_index);
  std::optional<double> cpu_percent(int64_t now_ns) const;

  std::string proc_root_;
  pid_t root_ = 0;
  std::string root_stat_path_;
  int64_t clock_ticks_per_s_;
  uint64_t page_bytes_;

  DIR* dir_ = nullptr;  // kept open and rewound: no opendir() allocation per sample
  bool force_full_scan_ = true;
  int64_t last_full_scan_ns_ = 0;

  // Reused across samples so a steady-state sample does not allocate.
  std::string path_;
  mutable std::string buffer_;
  std::vector<pid_t> listing_;
  std::vector<Entry> entries_;                         // this sample, by pid
  std::vector<Entry> known_;                           // the last sample: the ppid cache
  std::vector<std::pair<pid_t, uint32_t>> by_parent_;  // (ppid, index in entries_)
  std::vector<uint32_t> queue_;
  std::vector<Member> members_;
  std::vector<Member> previous_members_;
  bool has_previous_ = false;
  int64_t previous_ns_ = 0;
  std::vector<pid_t> pids_;
};

}  // namespace stoker::monitor::host
