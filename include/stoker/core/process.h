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

// An upper bound of what this process can still allocate, in bytes: the address space that
// `ulimit -v` leaves it (RLIMIT_AS less its present size) and the machine's RAM plus swap,
// whichever is less (infinity when neither is known). An allocation above it cannot succeed;
// one below it may still fail.
double allocation_ceiling_bytes();

}  // namespace stoker
