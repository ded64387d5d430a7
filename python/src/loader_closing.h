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
// Thread safety: WorkerPython marks the calling thread only; close_elsewhere(), finish_closing(),
// leave_in_fork() and delete_batch() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <memory>

#include "stoker/data/loader.h"

namespace stoker::python {

// Marks this thread, while it lives, as a loader's worker running Python code (scopes nest).
class WorkerPython {
 public:
  WorkerPython();
  ~WorkerPython();
  WorkerPython(const WorkerPython&) = delete;
  WorkerPython& operator=(const WorkerPython&) = delete;

  // True on a thread inside a WorkerPython scope.
  static bool active();
};

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
