// prepare_dataset(): see stoker/data/prepare.h.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <thread>

#include "data/source/file_reader.h"
#include "stoker/core/error.h"
#include "stoker/core/mutex.h"
#include "stoker/core/output_clash.h"
#include "stoker/core/user_files.h"
#include "stoker/data/decode.h"
#include "stoker/data/encode.h"
#include "stoker/data/prepare.h"

namespace stoker::data {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxListed = 100;

std::vector<fs::path> list_files(const fs::path& root, const PrepareOptions& options) {
  constexpr size_t kProgressEvery = 256;  // entries between two calls of options.progress
  std::vector<fs::path> files;
  size_t entries = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, ec);
  if (ec) throw Error(fmt::format("cannot read {}: {}", root.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(fmt::format("cannot read under {}: {}", root.string(), ec.message()));
    if (it->is_regular_file(ec)) files.push_back(it->path().lexically_relative(root));
    if (options.progress && ++entries % kProgressEvery == 0) options.progress(static_cast<int64_t>(files.size()), -1);
  }
  std::sort(files.begin(), files.end());
  return files;
}

void write_file(const fs::path& path, std::span<const uint8_t> bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw Error(fmt::format("cannot create {}", path.string()));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(path.c_str());
    throw Error(fmt::format("cannot write {} (disk full?)", path.string()));
  }
}

void check_paths(const fs::path& source, const fs::path& output) {
  std::error_code ec;
  if (!fs::is_directory(source, ec)) {
    throw Error(fmt::format("--data {} is not a directory; give the dataset's root folder", source.string()));
  }
  check_output_folder(output.string(), "--out");
  check_output_folder_apart(output.string(), "--out", {{source.string(), "--data"}});
  if (fs::exists(output, ec) && !fs::is_empty(output, ec)) {
    throw Error(fmt::format("--out {} exists and is not empty; give a new directory", output.string()));
  }
}

}  // namespace

PrepareReport prepare_dataset(const std::string& source, const std::string& output, const PrepareOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path src(source);
  const fs::path out(output);
  check_paths(src, out);
  const std::vector<fs::path> files = list_files(src, options);

  PrepareReport report;
  report.files = static_cast<int64_t>(files.size());
  Mutex mutex;  // guards report's lists and the first error
  std::string first_error;
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};

  const auto work = [&] {
    SampleData data;
    while (!stop.load(std::memory_order_relaxed)) {
      const size_t i = next.fetch_add(1);
      if (i >= files.size()) return;
      const fs::path& rel = files[i];
      try {
        const Status read = read_whole_file((src / rel).string(), &data);
        if (!read.ok()) throw Error(fmt::format("{}: {}", (src / rel).string(), read.reason()));
        std::error_code ec;
        fs::create_directories((out / rel).parent_path(), ec);
        if (ec) throw Error(fmt::format("cannot create {}: {}", (out / rel).parent_path().string(), ec.message()));
        std::vector<uint8_t> rewritten;
        std::string kept_reason;
        if (sniff_format(data.bytes) == ImageFormat::kJpeg) {
          try {
            rewritten = add_restart_markers(data.bytes);
          } catch (const Error& e) {
            kept_reason = e.what();
          }
        }
        const std::span<const uint8_t> bytes = rewritten.empty() ? data.bytes : std::span<const uint8_t>(rewritten);
        write_file(out / rel, bytes);
        const MutexLock lock(mutex);
        report.bytes_in += static_cast<int64_t>(data.bytes.size());
        report.bytes_out += static_cast<int64_t>(bytes.size());
        if (!rewritten.empty()) ++report.jpegs_rewritten;
        if (!kept_reason.empty()) {
          ++report.kept_count;
          if (report.kept.size() < kMaxListed) report.kept.push_back({rel.string(), kept_reason});
        }
      } catch (const Error& e) {
        const MutexLock lock(mutex);
        if (first_error.empty()) first_error = e.what();
        stop = true;
      }
      done.fetch_add(1, std::memory_order_relaxed);
    }
  };

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw Error(fmt::format("cannot create --out {}: {}", out.string(), ec.message()));
  const int workers = std::max(1, options.workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  while (options.progress && done.load() < report.files && !stop.load()) {
    options.progress(done.load(), report.files);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (std::thread& t : threads) t.join();
  if (!first_error.empty()) throw Error(first_error);
  if (options.progress) options.progress(report.files, report.files);
  std::sort(report.kept.begin(), report.kept.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace stoker::data
