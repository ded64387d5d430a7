// stoker/core/process.h — figures about this process and the machine it runs on, read on
// demand (no caching). Thread-safe.
#pragma once

namespace stoker {

// The CPUs this process may run on (sched_getaffinity), at least 1.
int usable_cores();

// One process's equal share of usable_cores() when `processes` of them share this machine (a
// data-parallel group), at least 1.
int cores_per_process(int processes);

// Peak resident set size of this process in bytes (getrusage; Linux reports KiB).
double peak_rss_bytes();

// Free physical memory in bytes (sysconf _SC_AVPHYS_PAGES); 0 when unknown.
double free_ram_bytes();

}  // namespace stoker
