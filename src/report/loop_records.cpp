#include "stoker/report/loop_records.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "stoker/core/csv_line.h"
#include "stoker/core/user_files.h"

namespace stoker::report {

namespace {

// A text cell on one line (stoker report reads the file a line at a time): line breaks become
// spaces, then quoted as every CSV cell stoker writes.
std::string text_cell(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return csv_cell(text);
}

// Writes all of `text` at once (a row is one write(): no other writer's bytes inside it).
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

double LoopEpoch::samples_per_sec() const {
  const double total = wait_s + copy_s + compute_s;
  return total > 0 ? static_cast<double>(samples) / total : 0;
}

std::string loops_csv_path(const std::string& monitor_log) {
  std::string stem = monitor_log;
  for (const char* ending : {".csv", ".jsonl"}) {
    const size_t n = std::strlen(ending);
    if (stem.size() > n && stem.compare(stem.size() - n, n, ending) == 0) {
      stem.resize(stem.size() - n);
      break;
    }
  }
  return stem + ".loops.csv";
}

std::string rank_log_path(const std::string& monitor_log, int rank) {
  if (rank == 0) return monitor_log;
  const std::filesystem::path path(monitor_log);
  std::filesystem::path name = path.stem();
  name += fmt::format(".rank{}", rank);
  name += path.extension();
  return (path.parent_path() / name).string();
}

LoopsCsv::LoopsCsv(const std::string& path) : path_(path) {
  check_output_file(path, "the watched loops' file beside the log");
  MutexLock lock(mutex_);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw UsageError(
        fmt::format("cannot write the watched loops' file {} (beside the monitor log): {}; choose a "
                    "log path in a writable folder",
                    path, std::strerror(errno)));
  }
  std::string header;
  for (const char* column : kLoopColumns) header += (header.empty() ? "" : ",") + std::string(column);
  if (!write_all(fd_, header + "\n")) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw SystemError(fmt::format("writing {} failed: {}", path, std::strerror(error)));
  }
}

LoopsCsv::~LoopsCsv() {
  MutexLock lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
}

Status LoopsCsv::write(const LoopEpoch& r) {
  const std::string row = fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", text_cell(r.loop), r.rank, r.epoch,
                                      r.steps, r.samples, r.wait_s, r.copy_s, r.compute_s, r.wait_share, r.copy_share,
                                      r.compute_share, r.samples_per_sec(), text_cell(r.verdict));
  MutexLock lock(mutex_);
  if (!write_all(fd_, row)) return Status::failure(fmt::format("writing {} failed: {}", path_, std::strerror(errno)));
  return Status::ok_status();
}

}  // namespace stoker::report
