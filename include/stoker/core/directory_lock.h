// stoker/core/directory_lock.h — one process at a time in a folder (a training run's).
//
// DirectoryLock takes flock(2)'s exclusive lock on the folder itself (no lock file is left
// behind) and holds it until destroyed; the kernel drops it when the process ends, however it
// ends (kill -9 included), so a stale lock cannot outlive its process.
// Errors: a folder that cannot be opened throws SystemError; one held by another process
// throws UsageError with `busy_hint` appended ("wait for it to end, ..."). Not copyable;
// movable. Thread safety: one object per thread.
#pragma once

#include <string>

namespace stoker {

class DirectoryLock {
 public:
  DirectoryLock(const std::string& folder, const std::string& busy_hint);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  DirectoryLock(DirectoryLock&& other) noexcept;
  DirectoryLock& operator=(DirectoryLock&& other) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace stoker
