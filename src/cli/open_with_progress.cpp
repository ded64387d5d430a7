#include "open_with_progress.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "progress_line.h"
#include "stoker/data/open_progress.h"

namespace stoker::cli {

std::unique_ptr<data::Source> open_source_with_progress(const std::string& path, const std::string& split, bool clips) {
  data::OpenProgress progress;
  std::unique_ptr<data::Source> source;
  std::exception_ptr error;
  std::atomic<bool> done{false};
  std::thread opener([&] {
    const data::OpenProgressScope scope(&progress);
    try {
      source = clips ? data::open_clip_source(path, split) : data::open_source(path, split);
    } catch (...) {
      error = std::current_exception();
    }
    done = true;
  });
  ProgressLine line;
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!done) line.update([&] { return data::open_progress_text(path, progress, line.seconds()); });
  }
  opener.join();
  line.clear();
  if (error) std::rethrow_exception(error);
  return source;
}

}  // namespace stoker::cli
