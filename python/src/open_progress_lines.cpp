#include "open_progress_lines.h"

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "stoker/core/clock.h"

namespace py = pybind11;

namespace stoker::python {

namespace {

std::string with_commas(uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

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

std::string open_progress_line(const std::string& path, uint64_t files, uint64_t parts_done, uint64_t parts,
                               bool shards, double seconds) {
  std::string line = shards ? fmt::format("indexing {}: {} of {} files ({} samples)", path, with_commas(parts_done),
                                          with_commas(parts), with_commas(files))
                     : parts == 0 ? fmt::format("listing {}", path)
                                  : fmt::format("listing {}: {} files in {} of {} class folders", path,
                                                with_commas(files), with_commas(parts_done), with_commas(parts));
  line += fmt::format(", {:.0f} s", std::floor(seconds));
  if (parts_done > 0 && parts > parts_done) {
    const double left = seconds * static_cast<double>(parts - parts_done) / static_cast<double>(parts_done);
    line += fmt::format("; about {:.0f} s left", std::ceil(left));
  }
  return line;
}

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
          write_line(open_progress_line(path, 0, 0, 0, false, 0));
          lock.lock();
          next = kOpenLineEverySeconds;
        }
        started = true;
        changed.notify_all();
      }
      const auto due = std::chrono::duration<double>(std::max(0.0, next - seconds()));
      if (changed.wait_for(lock, due, [&] { return done; })) return;
      lock.unlock();
      write_line(
          open_progress_line(path, progress.files, progress.parts_done, progress.parts, progress.shards, seconds()));
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
