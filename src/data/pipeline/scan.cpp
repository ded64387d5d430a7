// scan_source(): see stoker/data/scan.h.
#include "stoker/data/scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "stoker/core/mutex.h"

namespace stoker::data {

namespace {

// One worker's reusable state: the sample buffer, a decoder, the decoded image.
class SampleChecker {
 public:
  SampleChecker(const Source& source, int64_t max_pixels)
      : source_(source), decoder_({.max_pixels = max_pixels, .crop_window = false, .dct_scaling = false}) {}

  // "" when sample `i` is good, else why not. Adds the bytes read to *bytes.
  std::string check(size_t i, int64_t* bytes) {
    const Status read = source_.read(i, &data_);
    if (!read.ok()) return read.reason();
    *bytes += static_cast<int64_t>(data_.bytes.size());
    if (data_.feature_count == 0 && !data_.raw) {
      const Status decoded = decoder_.decode(data_.bytes, DecodeRequest{}, &image_);
      if (!decoded.ok()) return decoded.reason();
    }
    return {};
  }

 private:
  const Source& source_;
  ImageDecoder decoder_;
  SampleData data_;
  DecodedImage image_;
};

}  // namespace

ScanReport scan_source(const Source& source, const ScanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto since_start = [start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ScanReport report;
  report.samples = static_cast<int64_t>(source.size());
  source.expect_reads(Source::ReadOrder::kInOrder);

  Mutex mutex;  // guards report.bad, report.bytes, report.seconds and the first exception
  std::exception_ptr failure;
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0}, bad{0};
  std::atomic<bool> stop{false};
  const auto work = [&] {
    try {
      SampleChecker checker(source, options.max_pixels);
      int64_t bytes = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const size_t i = next.fetch_add(1);
        if (i >= source.size()) break;
        std::string reason = checker.check(i, &bytes);
        if (!reason.empty()) {
          bad.fetch_add(1);
          const MutexLock lock(mutex);
          if (report.bad.size() < kMaxListedBad) report.bad.push_back({i, source.name(i), std::move(reason)});
        }
        done.fetch_add(1, std::memory_order_relaxed);
      }
      const MutexLock lock(mutex);
      report.bytes += bytes;
      report.seconds = std::max(report.seconds, since_start());  // the last worker's end
    } catch (...) {
      const MutexLock lock(mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  const int workers = std::max(1, options.workers);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(workers));
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  const auto progress = [&] {
    if (options.progress) options.progress({done.load(), report.samples, bad.load(), since_start()});
  };
  while (done.load() < report.samples && !stop.load()) {
    progress();
    const bool stopped = options.wait ? options.wait(options.progress_seconds) : [&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(options.progress_seconds));
      return false;
    }();
    if (stopped) {
      report.stopped = true;
      stop = true;
    }
  }
  for (std::thread& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  report.checked = done.load();
  report.bad_count = bad.load();
  progress();
  std::sort(report.bad.begin(), report.bad.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return report;
}

}  // namespace stoker::data
