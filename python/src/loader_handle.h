// The C++ Loader as the extension holds it: its batches leave as BatchArrays, and a wait
// for the next batch releases the GIL and still answers Ctrl-C. Shared by the loader and the
// diagnosis bindings. Thread safety: as data::Loader's (one consumer at a time).
#pragma once

#include <pybind11/pybind11.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "batch_arrays.h"
#include "loader_closing.h"
#include "stoker/data/loader.h"

namespace stoker::python {

// One batch as Python sees it.
struct PyBatch {
  int64_t epoch = 0;
  int64_t index = 0;
  int size = 0;
  BatchArray inputs;
  BatchArray targets;  // class ids (int64) or float targets
  std::vector<uint64_t> indices;
  pybind11::object items;     // a Dataset object's targets, one per sample (a list); else None
  pybind11::object finished;  // a Dataset object's batch of images stacked on a worker (finished_of); else None
  pybind11::object columns;   // a CSV list's extra columns (extra_columns_of), a list; else None
  pybind11::object params;    // with return_params, records_of(batch); else None
  pybind11::object geometry;  // for a source with keypoints or boxes, geometry_of(batch); else None
  // The samples left for the GPU (LoaderOptions::gpu_handoff), gpu_samples_of(batch); else None.
  pybind11::object gpu;
  // The batch itself, for the calls that finish its GPU samples (GpuDecoder.decode,
  // Loader.redo_on_cpu); its arrays above share it.
  std::shared_ptr<data::Batch> batch;
};

class LoaderHandle {
 public:
  // `allocate`: None for the loader's own host memory, or a callable allocate(bytes) ->
  // (address, owner) for batch buffers (the owner is kept until the buffer is freed).
  // `records`: each batch carries records_of() (return_params).
  // `gpu_required`: with options.gpu_handoff on, a chain or source the GPU cannot finish
  // (gpu_handoff_blocker) raises UsageError (decode='gpu'); otherwise the handoff is turned
  // off and gpu_note() says why (decode='auto').
  LoaderHandle(std::shared_ptr<data::Source> source, data::LoaderOptions options, pybind11::object allocate,
               bool records = false, bool gpu_required = false);

  ~LoaderHandle();  // stops the workers with the GIL released (a worker may be waiting for it)
  LoaderHandle(const LoaderHandle&) = delete;
  LoaderHandle& operator=(const LoaderHandle&) = delete;

  // Begins `epoch` at `first_batch`, in the options' order or in `order` (a script's sampler; in
  // batches of `batch_sizes` where given: a batch sampler's, Loader::start_epoch_in_batches),
  // with the GIL released. `on_order`, unless None, is called (with the GIL) with the epoch's
  // order from the first sample no worker has claimed, a list of ids, before the workers claim
  // another (Loader::OrderListener).
  void start_epoch(int64_t epoch, int64_t first_batch, std::optional<std::vector<uint64_t>> order,
                   std::optional<std::vector<int>> batch_sizes, const pybind11::object& on_order);
  // Loader::reseed with the GIL released (it waits for samples being written, which a
  // Dataset's worker may be making in Python).
  void reseed(uint64_t seed, int64_t seed_epoch);
  // The next batch, or nullopt at the end of the epoch. Waits with the GIL released and looks
  // for signals every 100 ms (a KeyboardInterrupt ends the wait); with `timeout` > 0, a wait
  // longer than that many seconds raises RuntimeError (torch DataLoader's timeout).
  std::optional<PyBatch> next(double timeout = 0);

  // start_epoch() and next() release the GIL and take it back outside any destructor: on a
  // daemon thread while the interpreter finalizes, taking it back ends the thread (CPython
  // calls pthread_exit), and that unwinding must not cross a noexcept destructor
  // (std::terminate). close() and close_all() wait for such a call on another thread to
  // return (within 0.1 s) before they destroy the loader it uses.
  //
  // Stops and joins the workers (each finishes the sample it holds) and lets go of the loader,
  // with the GIL released; batches handed out stay valid. Any later use of this handle raises.
  // Called for every live loader before the interpreter finalizes (stoker/data_loader.py), so
  // that no worker is running Python code while it does. Inside a worker's Python call (a
  // garbage collection there let go of the handle) it hands the loader to close_elsewhere()
  // and returns at once (loader_closing.h); in a process forked from the one that made it, it
  // leaves the loader as it is (leave_in_fork). With the GIL held.
  void close();
  // At exit, with the GIL held: takes the loader out of every handle not yet destroyed, so that
  // every later call on them raises (one under way returns within 0.1 s) while the loader and its
  // workers live on until close_all(). In between, the threads inside a call on a loader leave it
  // (stoker/_exit.py, settle): none of them still runs stoker's code, on a loader being destroyed
  // or into the interpreter's finalization, when close_all() joins the workers.
  static void take_all();
  // At exit, with the GIL held: take_all(), then closes the loaders taken, and waits for those
  // handed to close_elsewhere(); afterwards no worker runs Python code.
  static void close_all();
  // Throws std::runtime_error once closed.
  data::Loader& loader();
  // Why the GPU decodes none of this loader's samples although asked to ('auto'), or "".
  const std::string& gpu_note() const { return gpu_note_; }

 private:
  bool features_;
  bool classes_;
  bool dataset_targets_;                          // the source is a DatasetSource: its targets come with each batch
  std::vector<data::ExtraColumn> extra_columns_;  // the source's columns passed through, if any
  bool records_;
  bool geometry_;
  std::string gpu_note_;
  // Every handle not yet destroyed (close_all); read and changed with the GIL held.
  static std::set<LoaderHandle*>& live_handles();
  // The loader taken out of this handle, to be closed; none when it was closed already or is a
  // forked copy (left as it is: leave_in_fork). With the GIL held.
  std::optional<OwnedLoader> take_loader();

  // Runs `f` (a call on the loader) with the GIL released, counted in calls_ (see close()).
  template <class F>
  void without_gil(F&& f);

  pid_t made_in_ = getpid();  // the process the loader's workers run in
  // Threads inside a call on the loader with the GIL released; shared with close_all(), which
  // waits for it to be 0 with the GIL released, while the handle may go.
  std::shared_ptr<std::atomic<int>> calls_ = std::make_shared<std::atomic<int>>(0);
  // Declared before the loader, so destroyed after it; each batch handed out holds it too.
  std::shared_ptr<data::BufferAllocator> allocator_;
  std::unique_ptr<data::Loader> loader_;  // changed with the GIL held
};

}  // namespace stoker::python
