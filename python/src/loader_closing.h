// Closing a loader (stopping and joining its workers) where its own workers run Python code.
//
// The workers run Python for a Dataset object: dataset[i], worker_init_fn, letting go of items.
// That code may run a garbage collection, which may let go of a DataLoader that only a reference
// cycle held, the worker's own DataLoader included. Its workers cannot be joined there: the
// thread would join itself (std::system_error, so std::terminate) and then go on in a freed
// loader. LoaderHandle::close() hands such a loader to close_elsewhere() instead, and at exit
// LoaderHandle::close_all() waits for those too (finish_closing), so that no worker runs Python
// code while the interpreter finalizes.
//
// A process forked after a loader was made (os.fork, a torch DataLoader's worker) has none of
// its worker threads, and its locks and condition variables are copies of the parent's, maybe
// held or waited on there: stopping it would hang or abort. There the loader is left as it is
// (leave_in_fork), its memory the child's copy, and so are closings the parent had begun and
// the batches the child lets go of (delete_batch): giving a buffer back takes the loader's lock.
//
// A fork while a worker is inside Python code (dataset[i] in h5py, which holds its global lock
// while it reads) gives the child that lock held for ever: its first h5py call hangs (a torch
// DataLoader's fork workers, started for validation while a pass of this loader reads ahead).
// So a fork waits (before_fork, os.register_at_fork's `before`) until no worker is inside a
// WorkerPython scope, and workers entering one wait until the fork is done (after_fork).
//
// Thread safety: WorkerPython marks the calling thread only; close_elsewhere(), finish_closing(),
// leave_in_fork() and delete_batch() may be called from any thread; before_fork() and
// after_fork() from the forking thread, with the GIL held.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>

#include "stoker/data/loader.h"

namespace stoker::python {

// Marks this thread, while it lives, as a loader's worker running Python code (scopes nest).
// Made with the GIL held; while a fork is under way (before_fork) it waits for it to be done,
// with the GIL released.
class WorkerPython {
 public:
  WorkerPython();
  ~WorkerPython();
  WorkerPython(const WorkerPython&) = delete;
  WorkerPython& operator=(const WorkerPython&) = delete;

  // True on a thread inside a WorkerPython scope.
  static bool active();
};

// Before a fork: waits, with the GIL released, until no thread but this one is inside a
// WorkerPython scope, and makes new scopes wait until after_fork(). Gives up waiting after
// `timeout_s` (a dataset[i] that waits for the forking thread), and forks as before.
void before_fork(double timeout_s = 10.0);

// How many before_fork() calls in this process gave up waiting: a fork that went ahead with a
// worker inside dataset[i]. Any thread.
size_t forks_that_gave_up_waiting();

// After a fork, in the parent (`in_child` false) or the child: scopes may begin again.
void after_fork(bool in_child);

// A loader and the allocator of its buffers, which must outlive it: destroyed in that order.
struct OwnedLoader {
  std::shared_ptr<data::BufferAllocator> allocator;
  std::unique_ptr<data::Loader> loader;
};

// True, having let go of `owned` without destroying it, when this is not the process `made_in`
// (where the loader was made); else false and `owned` is untouched.
bool leave_in_fork(pid_t made_in, OwnedLoader& owned);

// Destroys `batch`, which gives its buffer back to its loader's pool under the loader's lock;
// in a process other than `made_in` (a forked child, where that lock may be held for ever by a
// thread it does not have) leaves it as it is instead, as leave_in_fork leaves the loader.
void delete_batch(pid_t made_in, const data::Batch* batch);

// Destroys `owned` (stopping and joining the loader's workers: one that let go of it finishes
// its sample first) on a thread of its own, and returns at once.
void close_elsewhere(OwnedLoader owned);

// Waits until every loader given to close_elsewhere() so far, and any given meanwhile, is
// destroyed. Call it with the GIL released: the closing threads take it to let go of the
// Dataset objects.
void finish_closing();

}  // namespace stoker::python
