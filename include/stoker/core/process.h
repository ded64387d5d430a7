// stoker/core/process.h — figures about this process and the machine it runs on, read on
// demand (no caching). Thread-safe.
#pragma once

namespace stoker {

// The CPUs this process may run on (sched_getaffinity), at least 1.
int usable_cores();

// One process's equal share of usable_cores() when `processes` of them share this machine (a
// data-parallel group), at least 1. What a launcher leaves each of the processes it starts.
int cores_per_process(int processes);

// Whether this process's launcher pinned it to a share of the launcher's cores: it may run on
// fewer CPUs than its parent process (numactl or taskset per rank, Slurm's --cpu-bind, a
// script's sched_setaffinity). False where the parent's CPUs cannot be read.
bool pinned_by_launcher();

// The cores this process counts as its own when it is one of `local_processes` ranks on this
// machine: usable_cores() as is where its launcher pinned it (pinned_by_launcher(): the mask is
// already its share), else cores_per_process(local_processes). At least 1. stoker train's ranks
// and the Python package's loaders (stoker._stoker.rank_cores) count by it.
int rank_cores(int local_processes);

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
