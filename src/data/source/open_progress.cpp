#include "stoker/data/open_progress.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <thread>

#include "file_reader.h"
#include "stoker/core/clock.h"
#include "stoker/core/mutex.h"
#include "stoker/core/progress_line.h"

namespace stoker::data {

namespace {
thread_local OpenProgress* t_progress = nullptr;

// What the opening thread tells the one that shows the lines: that it has ended.
struct OpenEnd {
  Mutex mutex;
  std::condition_variable changed;
  bool done STOKER_GUARDED_BY(mutex) = false;
};

// ", 6 s; about 12 s left": the seconds so far, and the rest at the rate of `done` of `all`.
std::string seconds_and_left(uint64_t done, uint64_t all, double seconds) {
  std::string text = fmt::format(", {:.0f} s", std::floor(seconds));
  if (done > 0 && all > done) {
    const double left = seconds * static_cast<double>(all - done) / static_cast<double>(done);
    text += fmt::format("; about {:.0f} s left", std::ceil(left));
  }
  return text;
}
}  // namespace

void run_with_progress_line(const std::string& path, const std::function<void()>& work, ProgressLine& line) {
  OpenProgress progress;
  std::exception_ptr error;
  OpenEnd end;
  std::thread opener([&] {
    {
      const OpenProgressScope scope(&progress);
      try {
        work();
      } catch (...) {
        error = std::current_exception();
      }
    }
    {
      const MutexLock lock(end.mutex);
      end.done = true;
    }
    end.changed.notify_all();
  });
  try {
    MutexLock lock(end.mutex);
    while (!end.done) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      while (!end.done && lock.wait_until(end.changed, deadline)) {
      }
      if (end.done || !progress.line_due()) continue;
      lock.unlock();  // the opener ends while a line is written
      line.update([&] { return open_progress_text(path, progress); });
      lock.lock();
    }
  } catch (...) {
    opener.join();  // a line that could not be written: the open still ends before this returns
    throw;
  }
  opener.join();
  if (error) std::rethrow_exception(error);
}

std::unique_ptr<Source> open_with_progress_line(const std::string& path,
                                                const std::function<std::unique_ptr<Source>()>& open,
                                                ProgressLine& line) {
  std::unique_ptr<Source> source;
  run_with_progress_line(
      path, [&] { source = open(); }, line);
  return source;
}

void OpenProgress::mark_checked() {
  int64_t unset = 0;
  checked_ns_.compare_exchange_strong(unset, now_ns());
}

double OpenProgress::seconds() const {
  const int64_t at = checked_ns_;
  return at == 0 ? 0 : ns_to_seconds(now_ns() - at);
}

OpenProgressScope::OpenProgressScope(OpenProgress* progress) : before_(t_progress) { t_progress = progress; }
OpenProgressScope::~OpenProgressScope() { t_progress = before_; }

OpenProgress* current_open_progress() { return t_progress; }

std::string open_progress_text(const std::string& path, uint64_t files, uint64_t parts_done, uint64_t parts,
                               bool shards, double seconds) {
  std::string line = shards ? fmt::format("indexing {}: {} of {} files ({} samples)", path, with_commas(parts_done),
                                          with_commas(parts), with_commas(files))
                     : parts == 0 ? fmt::format("opening {}", path)
                                  : fmt::format("listing {}: {} files in {} of {} class folders", path,
                                                with_commas(files), with_commas(parts_done), with_commas(parts));
  return line + seconds_and_left(parts_done, parts, seconds);
}

std::string fit_progress_text(const std::string& path, uint64_t rows_done, uint64_t rows, double seconds,
                              uint64_t sample_of) {
  const std::string sample =
      sample_of == 0 ? std::string()
                     : fmt::format(" sampled of {} (Standardize(fit_rows=None) fits all)", with_commas(sample_of));
  return fmt::format("fitting Standardize over {}: {} of {} rows{}", path, with_commas(rows_done), with_commas(rows),
                     sample) +
         seconds_and_left(rows_done, rows, seconds);
}

std::string open_progress_text(const std::string& path, const OpenProgress& progress) {
  if (progress.fit_rows) {
    return fit_progress_text(path, progress.parts_done, progress.parts, progress.seconds(), progress.fit_sample_of);
  }
  return open_progress_text(path, progress.files, progress.parts_done, progress.parts, progress.shards,
                            progress.seconds());
}

std::unique_ptr<Source> open_source_showing_progress(const std::string& path, const std::string& split, bool clips) {
  ProgressLine line;
  return open_with_progress_line(
      path, [&] { return clips ? open_clip_source(path, split) : open_source(path, split); }, line);
}

std::unique_ptr<Source> open_source_showing_progress(const std::string& path, Split split) {
  ProgressLine line;
  return open_with_progress_line(
      path, [&] { return open_source(path, split); }, line);
}

}  // namespace stoker::data
