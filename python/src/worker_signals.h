// The stop signals of a dataset_processes worker process (python/stoker/_dataset_processes.py).
//
// A cluster stops a job by a signal to its whole process group: SLURM's scancel and time limit
// send SIGTERM to every process of the step (SIGKILL after KillWait), Ctrl-C sends SIGINT to the
// foreground group, torchrun forwards SIGTERM. The training script's handler then finishes its
// step and saves its checkpoint, which may take more batches from the workers: so a worker
// outlives such a signal. Only a SIGTERM or SIGINT sent by the loader's own process (`manager`,
// multiprocessing's terminate() of a worker that did not stop) ends it, by that signal; and it
// ends with its parent, however that ends (SIGKILL at KillWait included), by
// PR_SET_PDEATHSIG: no worker is left behind.
//
// The thread that starts the processes blocks SIGTERM and SIGINT, so that a forked process (the
// fork and forkserver start methods) has them blocked until this call, which takes one that came
// meanwhile. Python starts a spawned one with none blocked: it blocks them itself, from the first
// object it unpickles on (python/stoker/_spawn_blocked.py), before it imports the script and torch.
//
// Thread safety: call from the worker process's main thread, once, before it serves items.
// Errors: none; where the parent is gone already (it ended before this call), the worker exits.
#pragma once

#include <sys/types.h>

namespace stoker::python {

// Installs the worker's handlers for SIGTERM and SIGINT and its parent-death signal (SIGKILL).
// `manager`: the pid of the loader's process, whose signals end the worker. `parent`: the pid
// the worker's parent had when it started (the manager, or the forkserver's), 0 to not check.
void shield_worker_from_group_signals(pid_t manager, pid_t parent);

}  // namespace stoker::python
