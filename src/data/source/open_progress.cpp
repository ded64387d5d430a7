#include "stoker/data/open_progress.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <thread>

#include "file_reader.h"
#include "stoker/core/clock.h"
#include "stoker/core/progress_line.h"

namespace stoker::data {

namespace {
thread_local OpenProgress* t_progress = nullptr;

std::unique_ptr<Source> open_showing_progress(const std::string& path,
                                              const std::function<std::unique_ptr<Source>()>& open) {
  OpenProgress progress;
  std::unique_ptr<Source> source;
  std::exception_ptr error;
  std::atomic<bool> done{false};
  std::thread opener([&] {
    const OpenProgressScope scope(&progress);
    try {
      source = open();
    } catch (...) {
      error = std::current_exception();
    }
    done = true;
  });
  ProgressLine line;
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!done && progress.line_due()) line.update([&] { return open_progress_text(path, progress); });
  }
  opener.join();
  line.clear();
  if (error) std::rethrow_exception(error);
  return source;
}
}  // namespace

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
  line += fmt::format(", {:.0f} s", std::floor(seconds));
  if (parts_done > 0 && parts > parts_done) {
    const double left = seconds * static_cast<double>(parts - parts_done) / static_cast<double>(parts_done);
    line += fmt::format("; about {:.0f} s left", std::ceil(left));
  }
  return line;
}

std::string open_progress_text(const std::string& path, const OpenProgress& progress) {
  return open_progress_text(path, progress.files, progress.parts_done, progress.parts, progress.shards,
                            progress.seconds());
}

std::unique_ptr<Source> open_source_showing_progress(const std::string& path, const std::string& split, bool clips) {
  return open_showing_progress(path, [&] { return clips ? open_clip_source(path, split) : open_source(path, split); });
}

std::unique_ptr<Source> open_source_showing_progress(const std::string& path, Split split) {
  return open_showing_progress(path, [&] { return open_source(path, split); });
}

}  // namespace stoker::data
