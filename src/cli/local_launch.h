// `stoker train --nproc-per-node N`: starts N copies of this command on this machine as one
// data-parallel group, as torchrun does (train/torch/parallel/data_parallel.h reads what it sets:
// RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free
// MASTER_PORT), and waits for them.
//
// - Rank 0 prints and writes the run folder; the others print only their errors.
// - One process failing (an error, a crash, a kill) stops the others at once, and the group
//   exits with the failed process's code: nobody waits on a peer that is gone.
// - SIGINT/SIGTERM reach every process (a terminal's Ctrl-C reaches them directly); they
//   agree on the step to stop at, rank 0 saves the checkpoint, and all exit 128 + signal. A
//   second signal kills them at once (the last checkpoint saved stands).
// - Without OMP_NUM_THREADS or --threads, each process gets an equal share of the cores.
#pragma once

namespace stoker::cli {

// Runs the group; returns the exit code for the command. Not reentrant (it owns SIGINT,
// SIGTERM and SIGCHLD of the calling thread while it runs).
int launch_local_processes(int processes, int threads);

}  // namespace stoker::cli
