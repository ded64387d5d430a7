#include "stoker/report/event_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "report/tfrecord.h"

namespace stoker::report {

namespace fs = std::filesystem;

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  std::string host(name);
  for (char& c : host) {
    if (c == '/') c = '_';  // a file name, whatever the host is called
  }
  return host;
}

}  // namespace

double unix_seconds_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

EventFile::EventFile(const std::string& folder) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) throw SystemError(fmt::format("cannot create the TensorBoard folder {}: {}", folder, error.message()));
  const double now = unix_seconds_now();
  const std::string base =
      (fs::path(folder) / fmt::format("events.out.tfevents.{}.{}", static_cast<int64_t>(now), host_name())).string();
  MutexLock lock(mutex_);
  for (int attempt = 0; fd_ < 0; ++attempt) {
    path_ = attempt == 0 ? base : fmt::format("{}.{}", base, attempt);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0 && (errno != EEXIST || attempt >= 1000)) {
      throw SystemError(fmt::format("cannot create the TensorBoard event file {}: {}", path_, std::strerror(errno)));
    }
  }
  const Status status = append(file_version_event(now));
  if (!status.ok()) {
    ::close(fd_);
    throw SystemError(status.reason());
  }
}

EventFile::~EventFile() {
  MutexLock lock(mutex_);
  if (fd_ >= 0) ::close(fd_);
}

Status EventFile::write(int64_t step, const std::vector<Scalar>& scalars, double wall_time) {
  if (scalars.empty()) return Status::ok_status();
  const std::string payload = scalars_event(wall_time < 0 ? unix_seconds_now() : wall_time, step, scalars);
  MutexLock lock(mutex_);
  if (stopped_) return Status::ok_status();
  return append(payload);
}

Status EventFile::append(const std::string& payload) {
  std::string record;
  append_record(&record, payload);
  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const std::string reason = n < 0 ? std::strerror(errno) : "the disk took no more bytes";
    stopped_ = true;
    // Cut back to the last complete record, so the file ends on one.
    if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(bytes_)) == 0)
      ::lseek(fd_, static_cast<off_t>(bytes_), SEEK_SET);
    return Status::failure(fmt::format("writing {}: {}", path_, reason));
  }
  bytes_ += record.size();
  ++records_;
  return Status::ok_status();
}

bool EventFile::stopped() const {
  MutexLock lock(mutex_);
  return stopped_;
}

int64_t EventFile::records() const {
  MutexLock lock(mutex_);
  return records_;
}

}  // namespace stoker::report
