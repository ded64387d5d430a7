#include "open_progress_lines.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <thread>

#include "stoker/core/clock.h"
#include "stoker/core/mutex.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

void write_line(const std::string& line) {
  const py::gil_scoped_acquire gil;
  try {
    const py::object err = py::module_::import("sys").attr("stderr");
    err.attr("write")(line + "\n");
    err.attr("flush")();
  } catch (const py::error_already_set&) {
    // A closed or replaced stderr: the line is lost, the opening goes on.
  }
}

// The thread that writes the lines while a source opens on another: made, it returns once a
// line due at once is written (so that it comes before the opening ends); destroyed, it stops.
class ProgressLines {
 public:
  ProgressLines(const std::string& path, const data::OpenProgress& progress, double first_line_after)
      : path_(path), progress_(progress), first_line_after_(first_line_after), thread_([this] { run(); }) {
    MutexLock lock(mutex_);
    while (!started_) lock.wait(changed_);
  }
  ~ProgressLines() {
    {
      const MutexLock lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  ProgressLines(const ProgressLines&) = delete;
  ProgressLines& operator=(const ProgressLines&) = delete;

 private:
  void run() {
    const Stopwatch clock;
    const auto seconds = [&] { return ns_to_seconds(clock.elapsed_ns()); };
    double next = first_line_after_;
    if (next <= 0) {
      write_line(data::open_progress_text(path_, progress_, 0));
      next = kOpenLineEverySeconds;
    }
    MutexLock lock(mutex_);
    started_ = true;
    changed_.notify_all();
    while (!done_) {
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                 std::chrono::duration<double>(std::max(0.0, next - seconds())));
      while (!done_ && lock.wait_until(changed_, deadline)) {
      }
      if (done_) return;
      lock.unlock();
      write_line(data::open_progress_text(path_, progress_, seconds()));
      lock.lock();
      next += kOpenLineEverySeconds;
    }
  }

  const std::string& path_;
  const data::OpenProgress& progress_;
  const double first_line_after_;
  Mutex mutex_;
  std::condition_variable changed_;
  bool started_ STOKER_GUARDED_BY(mutex_) = false;
  bool done_ STOKER_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: it starts once the members above are made
};

}  // namespace

std::unique_ptr<data::Source> open_showing_progress(const std::string& path, const std::string& split, bool clips,
                                                    double first_line_after) {
  const py::gil_scoped_release release;  // taken back last, once the lines' thread has ended
  data::OpenProgress progress;
  const ProgressLines lines(path, progress, first_line_after);
  const data::OpenProgressScope scope(&progress);
  return clips ? data::open_clip_source(path, split) : data::open_source(path, split);
}

}  // namespace stoker::python
