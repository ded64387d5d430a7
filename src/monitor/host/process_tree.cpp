#include "monitor/host/process_tree.h"

#include <unistd.h>

#include <algorithm>

#include "monitor/host/proc_files.h"
#include "monitor/host/proc_stat.h"

namespace stoker::monitor::host {
namespace {

// Bounds how long the ppid cache can miss a reused pid (see the header).
constexpr int64_t kFullScanIntervalNs = 30'000'000'000;

bool parse_pid(const char* name, pid_t* out) {
  int64_t value = 0;
  if (*name == '\0') return false;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9' || value > 0x7fffffff / 10) return false;
    value = value * 10 + (*c - '0');
  }
  if (value <= 0 || value > 0x7fffffff) return false;
  *out = static_cast<pid_t>(value);
  return true;
}

}  // namespace

ProcessTree::ProcessTree(std::string proc_root)
    : proc_root_(std::move(proc_root)),
      clock_ticks_per_s_(::sysconf(_SC_CLK_TCK)),
      page_bytes_(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))) {
  if (clock_ticks_per_s_ <= 0) clock_ticks_per_s_ = 100;  // what Linux has used for decades
}

ProcessTree::~ProcessTree() {
  if (dir_ != nullptr) ::closedir(dir_);
}

void ProcessTree::watch(pid_t root) {
  root_ = root > 0 ? root : 0;
  root_stat_path_.clear();
  if (root_ > 0) {
    root_stat_path_ = proc_root_ + "/";
    append_decimal(&root_stat_path_, static_cast<uint64_t>(root_));
    root_stat_path_ += "/stat";
  }
  force_full_scan_ = true;
  has_previous_ = false;
  previous_members_.clear();
  pids_.clear();
}

bool ProcessTree::root_alive() const {
  if (root_ <= 0) return false;
  ProcStat stat;
  return read_small_file(root_stat_path_.c_str(), &buffer_) && parse_proc_stat(buffer_, &stat) && is_running(stat);
}

void ProcessTree::sample(int64_t now_ns, TreeFigures* out) {
  *out = TreeFigures{};
  pids_.clear();
  members_.clear();
  if (root_ <= 0) return;

  const bool full_scan =
      force_full_scan_ || now_ns - last_full_scan_ns_ >= kFullScanIntervalNs || now_ns < last_full_scan_ns_;
  if (full_scan) {
    force_full_scan_ = false;
    last_full_scan_ns_ = now_ns;
  }
  if (!list_pids()) listing_.clear();
  build_entries(full_scan);

  const auto root_it =
      std::lower_bound(entries_.begin(), entries_.end(), root_, [](const Entry& e, pid_t pid) { return e.pid < pid; });
  Entry* root = root_it != entries_.end() && root_it->pid == root_ ? &*root_it : nullptr;
  if (root != nullptr && !root->fresh && !read_entry(root_, root)) root = nullptr;
  if (root == nullptr) {
    has_previous_ = false;
    known_.swap(entries_);
    return;
  }
  walk_tree(static_cast<size_t>(root - entries_.data()));

  out->root_found = true;
  for (uint32_t index : queue_) {
    const Entry& e = entries_[index];
    out->rss_bytes += e.rss_pages * page_bytes_;
    members_.push_back({e.pid, e.start_time, e.cpu_ticks});
  }
  out->process_count = static_cast<int>(queue_.size());
  std::sort(members_.begin(), members_.end(), [](const Member& a, const Member& b) { return a.pid < b.pid; });
  for (const Member& m : members_) pids_.push_back(m.pid);
  out->cpu_percent = cpu_percent(now_ns);

  previous_members_.swap(members_);
  has_previous_ = true;
  previous_ns_ = now_ns;
  known_.swap(entries_);
}

bool ProcessTree::list_pids() {
  if (dir_ == nullptr) {
    dir_ = ::opendir(proc_root_.c_str());
    if (dir_ == nullptr) return false;
  } else {
    ::rewinddir(dir_);  // procfs lists the live processes again from the start
  }
  listing_.clear();
  while (const dirent* entry = ::readdir(dir_)) {
    pid_t pid = 0;
    if (parse_pid(entry->d_name, &pid)) listing_.push_back(pid);
  }
  // /proc lists pids in ascending order, a fake tree in any order.
  if (!std::is_sorted(listing_.begin(), listing_.end())) {
    std::sort(listing_.begin(), listing_.end());
  }
  return true;
}

bool ProcessTree::read_entry(pid_t pid, Entry* entry) {
  path_.assign(proc_root_);
  path_ += '/';
  append_decimal(&path_, static_cast<uint64_t>(pid));
  path_ += "/stat";
  ProcStat stat;
  // A process that exits after the listing has no stat (or an ESRCH read): skipped.
  if (!read_small_file(path_.c_str(), &buffer_) || !parse_proc_stat(buffer_, &stat)) return false;
  entry->pid = pid;
  entry->ppid = stat.ppid;
  entry->cpu_ticks = stat.cpu_ticks;
  entry->start_time = stat.start_time;
  entry->rss_pages = stat.rss_pages;
  entry->fresh = true;
  entry->in_tree = false;
  return true;
}

void ProcessTree::build_entries(bool full_scan) {
  entries_.clear();
  size_t k = 0;
  for (pid_t pid : listing_) {
    while (k < known_.size() && known_[k].pid < pid) ++k;
    const bool cached = k < known_.size() && known_[k].pid == pid;
    if (cached && !full_scan && !known_[k].in_tree) {
      Entry entry = known_[k];
      entry.fresh = false;
      entries_.push_back(entry);
      continue;
    }
    Entry entry;
    if (read_entry(pid, &entry)) entries_.push_back(entry);
  }
}

void ProcessTree::walk_tree(size_t root_index) {
  by_parent_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) {
    by_parent_.emplace_back(entries_[i].ppid, static_cast<uint32_t>(i));
  }
  std::sort(by_parent_.begin(), by_parent_.end());

  queue_.clear();
  entries_[root_index].in_tree = true;
  queue_.push_back(static_cast<uint32_t>(root_index));
  for (size_t q = 0; q < queue_.size(); ++q) {
    const pid_t parent = entries_[queue_[q]].pid;
    auto it = std::lower_bound(by_parent_.begin(), by_parent_.end(), std::make_pair(parent, 0u));
    for (; it != by_parent_.end() && it->first == parent; ++it) {
      Entry& child = entries_[it->second];
      if (child.in_tree) continue;  // also guards against a ppid cycle in a corrupt tree
      // A cached ppid may be stale (the pid reused): trust it only after a fresh read.
      if (!child.fresh && (!read_entry(child.pid, &child) || child.ppid != parent)) continue;
      child.in_tree = true;
      queue_.push_back(it->second);
    }
  }
}

std::optional<double> ProcessTree::cpu_percent(int64_t now_ns) const {
  if (!has_previous_ || now_ns <= previous_ns_) return std::nullopt;
  // Per pid, so a member that exits between samples takes its ticks with it instead of
  // making the sum drop, and a new member counts from its first sample instead of adding
  // its whole lifetime as a spike. Start times tell a reused pid from the old process.
  uint64_t ticks = 0;
  size_t p = 0;
  for (const Member& now : members_) {
    while (p < previous_members_.size() && previous_members_[p].pid < now.pid) ++p;
    if (p == previous_members_.size()) break;
    const Member& before = previous_members_[p];
    if (before.pid != now.pid || before.start_time != now.start_time) continue;
    if (now.cpu_ticks >= before.cpu_ticks) ticks += now.cpu_ticks - before.cpu_ticks;
  }
  const double seconds = static_cast<double>(now_ns - previous_ns_) * 1e-9;
  return 100.0 * static_cast<double>(ticks) / static_cast<double>(clock_ticks_per_s_) / seconds;
}

}  // namespace stoker::monitor::host
