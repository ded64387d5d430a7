#include "stoker/core/process.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <thread>

namespace stoker {

namespace {

// The CPUs process `pid` (0: this one) may run on; 0 when its mask cannot be read.
int affinity_cpus(pid_t pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(pid, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

}  // namespace

int usable_cores() {
  if (const int cpus = affinity_cpus(0); cpus > 0) return cpus;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int cores_per_process(int processes) { return std::max(1, usable_cores() / std::max(1, processes)); }

bool pinned_by_launcher() {
  const pid_t parent = getppid();  // 0 where the parent is outside this PID namespace
  if (parent <= 0) return false;
  const int own = affinity_cpus(0), parents = affinity_cpus(parent);
  return own > 0 && own < parents;
}

int rank_cores(int local_processes) {
  return local_processes > 1 && pinned_by_launcher() ? usable_cores() : cores_per_process(local_processes);
}

double peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

double free_ram_bytes() {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

double allocation_ceiling_bytes() {
  double ceiling = std::numeric_limits<double>::infinity();
  struct sysinfo info {};
  if (sysinfo(&info) == 0 && info.totalram > 0) {
    ceiling = (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    unsigned long size_pages = 0;  // the first field of /proc/self/statm: the address space in use
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%lu", &size_pages) != 1) size_pages = 0;
      std::fclose(statm);
    }
    const double used = static_cast<double>(size_pages) * static_cast<double>(sysconf(_SC_PAGESIZE));
    const double left = std::max(0.0, static_cast<double>(limit.rlim_cur) - used);
    ceiling = std::min(ceiling, left);
  }
  return ceiling;
}

}  // namespace stoker
