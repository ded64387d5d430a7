#include "open_progress_lines.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "stoker/core/clock.h"

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

}  // namespace

std::unique_ptr<data::Source> open_showing_progress(const std::string& path, const std::string& split, bool clips,
                                                    double first_line_after) {
  data::OpenProgress progress;
  std::mutex mutex;
  std::condition_variable changed;
  bool done = false, started = false;
  const auto show = [&] {
    const Stopwatch clock;
    const auto seconds = [&] { return ns_to_seconds(clock.elapsed_ns()); };
    std::unique_lock lock(mutex);
    double next = first_line_after;
    while (true) {
      if (!started) {  // the opening waits for this: a first line due at once comes before it ends
        if (next <= 0) {
          lock.unlock();
          write_line(data::open_progress_text(path, 0, 0, 0, false, 0));
          lock.lock();
          next = kOpenLineEverySeconds;
        }
        started = true;
        changed.notify_all();
      }
      const auto due = std::chrono::duration<double>(std::max(0.0, next - seconds()));
      if (changed.wait_for(lock, due, [&] { return done; })) return;
      lock.unlock();
      write_line(data::open_progress_text(path, progress, seconds()));
      lock.lock();
      next += kOpenLineEverySeconds;
    }
  };
  std::unique_ptr<data::Source> source;
  const py::gil_scoped_release release;
  std::thread lines(show);
  const auto stop = [&] {
    {
      const std::lock_guard lock(mutex);
      done = true;
    }
    changed.notify_all();
    lines.join();
  };
  try {
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return started; });
    }
    const data::OpenProgressScope scope(&progress);
    source = clips ? data::open_clip_source(path, split) : data::open_source(path, split);
  } catch (...) {
    stop();
    throw;
  }
  stop();
  return source;
}

}  // namespace stoker::python
