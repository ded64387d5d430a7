#include "stoker/monitor/host_reader.h"

#include <cmath>
#include <utility>

#include "monitor/host/cpu_stat.h"
#include "monitor/host/device_counters.h"
#include "monitor/host/diskstats.h"
#include "monitor/host/meminfo.h"
#include "monitor/host/net_dev.h"
#include "monitor/host/proc_files.h"
#include "monitor/host/process_tree.h"

namespace stoker::monitor {
namespace {

// Sources name the kernel interface, not the path read (tests read a fake tree).
constexpr const char* kStatSource = "/proc/stat";
constexpr const char* kMeminfoSource = "/proc/meminfo";
constexpr const char* kDiskstatsSource = "/proc/diskstats";
constexpr const char* kNetDevSource = "/proc/net/dev";
constexpr const char* kProcessSource = "/proc/<pid>";

std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// One counters file (disks or network) and the read before it, for bytes/s.
struct RateState {
  std::vector<host::DeviceCounters> now;
  std::vector<host::DeviceCounters> before;
  int64_t before_ns = 0;
  bool has_before = false;
};

// Sets the two rates from a fresh read in state->now (`read_ok` false: the file was not
// readable) against the previous one, then makes this read the previous one.
void update_rates(RateState* state, bool read_ok, int64_t now_ns, const char* source, Reading* in_per_s,
                  Reading* out_per_s) {
  in_per_s->clear();
  out_per_s->clear();
  if (!read_ok) {
    state->has_before = false;
    return;
  }
  host::CounterIncrease increase;
  if (state->has_before && now_ns > state->before_ns && host::sum_increases(state->before, state->now, &increase)) {
    const double seconds = static_cast<double>(now_ns - state->before_ns) * 1e-9;
    in_per_s->set(static_cast<double>(increase.in) / seconds, source);
    out_per_s->set(static_cast<double>(increase.out) / seconds, source);
  }
  state->before.swap(state->now);
  state->before_ns = now_ns;
  state->has_before = true;
}

}  // namespace

struct HostReader::State {
  explicit State(const std::string& root)
      : stat_path(root + "/stat"),
        meminfo_path(root + "/meminfo"),
        diskstats_path(root + "/diskstats"),
        net_dev_path(root + "/net/dev"),
        tree(root) {}

  void sample_cpu(HostSample* out);
  void sample_memory(HostSample* out);
  void sample_process_tree(HostSample* out, int64_t now_ns);

  const std::string stat_path;
  const std::string meminfo_path;
  const std::string diskstats_path;
  const std::string net_dev_path;
  std::string buffer;  // every file is read into this one, reused

  host::CpuStat cpu;
  host::CpuStat previous_cpu;
  bool has_previous_cpu = false;
  RateState disks;
  RateState network;
  host::ProcessTree tree;
};

void HostReader::State::sample_cpu(HostSample* out) {
  out->cpu_percent.clear();
  if (!host::read_small_file(stat_path.c_str(), &buffer) || !host::parse_cpu_stat(buffer, &cpu)) {
    has_previous_cpu = false;
    out->core_percent.clear();
    return;
  }
  if (!has_previous_cpu) {
    out->core_percent.clear();
  } else {
    if (auto percent = host::busy_percent(previous_cpu.all, cpu.all)) {
      out->cpu_percent.set(*percent, kStatSource);
    }
    out->core_percent.resize(cpu.cores.size());
    for (size_t i = 0; i < cpu.cores.size(); ++i) {
      const host::CpuTimes before = i < previous_cpu.cores.size() ? previous_cpu.cores[i] : host::CpuTimes{};
      const auto percent = host::busy_percent(before, cpu.cores[i]);
      out->core_percent[i] = percent ? static_cast<float>(*percent) : std::nanf("");
    }
  }
  std::swap(previous_cpu, cpu);
  has_previous_cpu = true;
}

void HostReader::State::sample_memory(HostSample* out) {
  out->memory_total_bytes.clear();
  out->memory_available_bytes.clear();
  out->memory_used_bytes.clear();
  out->swap_total_bytes.clear();
  out->swap_used_bytes.clear();
  if (!host::read_small_file(meminfo_path.c_str(), &buffer)) return;
  const host::MemInfo info = host::parse_meminfo(buffer);
  if (info.total) out->memory_total_bytes.set(static_cast<double>(*info.total), kMeminfoSource);
  if (info.available) {
    out->memory_available_bytes.set(static_cast<double>(*info.available), kMeminfoSource);
  }
  if (info.total && info.available && *info.available <= *info.total) {
    out->memory_used_bytes.set(static_cast<double>(*info.total - *info.available), kMeminfoSource);
  }
  if (info.swap_total) {
    out->swap_total_bytes.set(static_cast<double>(*info.swap_total), kMeminfoSource);
  }
  if (info.swap_total && info.swap_free && *info.swap_free <= *info.swap_total) {
    out->swap_used_bytes.set(static_cast<double>(*info.swap_total - *info.swap_free), kMeminfoSource);
  }
}

void HostReader::State::sample_process_tree(HostSample* out, int64_t now_ns) {
  out->process_cpu_percent.clear();
  out->process_rss_bytes.clear();
  out->process_count.clear();
  // Nothing watched: /proc is not scanned at all.
  if (tree.root() <= 0) return;
  host::TreeFigures figures;
  tree.sample(now_ns, &figures);
  if (!figures.root_found) return;
  out->process_count.set(figures.process_count, kProcessSource);
  out->process_rss_bytes.set(static_cast<double>(figures.rss_bytes), kProcessSource);
  if (figures.cpu_percent) out->process_cpu_percent.set(*figures.cpu_percent, kProcessSource);
}

HostReader::HostReader(std::string proc_root)
    : state_(std::make_unique<State>(without_trailing_slashes(std::move(proc_root)))) {}

HostReader::~HostReader() = default;

void HostReader::watch(pid_t pid) { state_->tree.watch(pid); }

bool HostReader::watched_alive() const { return state_->tree.root_alive(); }

const std::vector<pid_t>& HostReader::watched_pids() const { return state_->tree.pids(); }

void HostReader::sample(HostSample* out, int64_t now_ns) {
  State& s = *state_;
  s.sample_cpu(out);
  s.sample_memory(out);

  bool ok = host::read_small_file(s.diskstats_path.c_str(), &s.buffer);
  if (ok) host::parse_diskstats(s.buffer, &s.disks.now);
  update_rates(&s.disks, ok, now_ns, kDiskstatsSource, &out->disk_read_bytes_per_s, &out->disk_write_bytes_per_s);

  ok = host::read_small_file(s.net_dev_path.c_str(), &s.buffer);
  if (ok) host::parse_net_dev(s.buffer, &s.network.now);
  update_rates(&s.network, ok, now_ns, kNetDevSource, &out->net_rx_bytes_per_s, &out->net_tx_bytes_per_s);

  s.sample_process_tree(out, now_ns);
}

}  // namespace stoker::monitor
