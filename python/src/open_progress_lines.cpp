#include "open_progress_lines.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <thread>

#include "stoker/core/mutex.h"
#include "stoker/core/progress_line.h"
#include "stoker/data/open_progress.h"

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

// The thread that writes the lines while a source opens on another; destroyed, it stops.
class ProgressLines {
 public:
  ProgressLines(const std::string& path, const data::OpenProgress& progress)
      : path_(path), progress_(progress), thread_([this] { run(); }) {}
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
  // Looks at the progress every 20 ms, as open_source_showing_progress does.
  void run() {
    double next = 0;  // seconds of the progress: when a due line is written
    MutexLock lock(mutex_);
    while (!done_) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      while (!done_ && lock.wait_until(changed_, deadline)) {
      }
      if (done_ || !progress_.line_due() || progress_.seconds() < next) continue;
      lock.unlock();
      write_line(data::open_progress_text(path_, progress_));
      lock.lock();
      next = progress_.seconds() + ProgressLine::kLogEverySeconds;
    }
  }

  const std::string& path_;
  const data::OpenProgress& progress_;
  Mutex mutex_;
  std::condition_variable changed_;
  bool done_ STOKER_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: it starts once the members above are made
};

}  // namespace

std::unique_ptr<data::Source> open_showing_progress(const std::string& path, const std::string& split, bool clips) {
  const py::gil_scoped_release release;  // taken back last, once the lines' thread has ended
  data::OpenProgress progress;
  const ProgressLines lines(path, progress);
  const data::OpenProgressScope scope(&progress);
  return clips ? data::open_clip_source(path, split) : data::open_source(path, split);
}

}  // namespace stoker::python
