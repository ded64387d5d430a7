// How a Dataset object's Python calls on the worker threads went (dataset[i], and the batch's
// collate where the workers batch its items): the time each waited to enter (for the GIL), the
// time inside, and inside it the calling thread's CPU time and its time runnable but waiting for
// a core (Linux's /proc/thread-self/schedstat; 0 where that cannot be read). Summed over the
// workers against wall time they tell whether the calls ran side by side or one at a time
// (stoker/_gil_hint.py): calls serialized by the GIL, or by a lock of the library they call
// (h5py's), keep the other workers blocked, entering or inside a call, and at most one core busy.
//
// Threads: PythonCallTimes is updated by any worker (relaxed atomics) and read by any thread;
// a read may see one call's figures half added, which a window of many calls does not feel.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

namespace stoker::python {

struct PythonCallTimes {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> entry_wait_ns{0};  // waiting to take the GIL before the call
  std::atomic<int64_t> inside_ns{0};      // wall time from taking the GIL to the call's end
  std::atomic<int64_t> cpu_ns{0};         // the calling thread's CPU time in that span
  std::atomic<int64_t> run_wait_ns{0};    // its time runnable but waiting for a core in that span
};

// The calling thread's CPU time, in nanoseconds.
int64_t thread_cpu_ns();
// The calling thread's time runnable but not running since it started, in nanoseconds (0 where
// the kernel does not say).
int64_t thread_run_wait_ns();

// One call's clock: made right after the GIL is taken, with the time the thread asked for it;
// adds the call's figures to `times` when it goes, before the GIL is let go.
class PythonCallClock {
 public:
  PythonCallClock(PythonCallTimes& times, std::chrono::steady_clock::time_point asked);
  ~PythonCallClock();
  PythonCallClock(const PythonCallClock&) = delete;
  PythonCallClock& operator=(const PythonCallClock&) = delete;

 private:
  PythonCallTimes& times_;
  std::chrono::steady_clock::time_point entered_;
  int64_t cpu_at_entry_;
  int64_t run_wait_at_entry_;
};

// The GIL, taken for one of the worker threads' Python calls: clocked into `times` from the
// moment it was asked for (null: not clocked), the figures added before the GIL is let go.
class ClockedGil {
 public:
  explicit ClockedGil(PythonCallTimes* times) {
    if (times != nullptr) clock_.emplace(*times, asked_);
  }
  ClockedGil(const ClockedGil&) = delete;
  ClockedGil& operator=(const ClockedGil&) = delete;

 private:
  // In this order: asked before the GIL is taken; the clock ends before it is let go.
  std::chrono::steady_clock::time_point asked_ = std::chrono::steady_clock::now();
  pybind11::gil_scoped_acquire gil_;
  std::optional<PythonCallClock> clock_;
};

}  // namespace stoker::python
