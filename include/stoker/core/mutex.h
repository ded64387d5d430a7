// stoker/core/mutex.h — a mutex that clang's thread-safety analysis understands, and the
// annotations that say which state it guards.
//
// Shared state is declared `T x STOKER_GUARDED_BY(mutex_);` and functions that expect the
// lock held are marked STOKER_REQUIRES(mutex_). Built with clang and -Wthread-safety
// (`-DSTOKER_THREAD_SAFETY=ON`, which scripts/test.sh runs), an access without the lock is a
// compile error; with other compilers the annotations are empty. libstdc++'s std::mutex
// carries no annotations, hence this thin wrapper.
//
// Thread safety: Mutex is a mutex. MutexLock is owned by one thread, for one scope.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define STOKER_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define STOKER_THREAD_ANNOTATION(x)
#endif

#define STOKER_CAPABILITY(x) STOKER_THREAD_ANNOTATION(capability(x))
#define STOKER_SCOPED_CAPABILITY STOKER_THREAD_ANNOTATION(scoped_lockable)
#define STOKER_GUARDED_BY(x) STOKER_THREAD_ANNOTATION(guarded_by(x))
#define STOKER_REQUIRES(...) STOKER_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define STOKER_ACQUIRE(...) STOKER_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define STOKER_RELEASE(...) STOKER_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define STOKER_EXCLUDES(...) STOKER_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

namespace stoker {

class STOKER_CAPABILITY("mutex") Mutex {
 public:
  void lock() STOKER_ACQUIRE() { mutex_.lock(); }
  void unlock() STOKER_RELEASE() { mutex_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

// Holds a Mutex from construction to destruction, except while it waits on a condition
// variable or between unlock() and lock().
class STOKER_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) STOKER_ACQUIRE(mutex) : lock_(mutex.mutex_) {}
  ~MutexLock() STOKER_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() STOKER_RELEASE() { lock_.unlock(); }
  void lock() STOKER_ACQUIRE() { lock_.lock(); }

  // Releases the mutex until `cv` is notified (or spuriously), then holds it again. Callers
  // loop on their condition, which the analysis then sees read under the lock.
  void wait(std::condition_variable& cv) { cv.wait(lock_); }
  // The same, until `deadline` at the latest; false when it passed.
  template <typename Clock, typename Duration>
  bool wait_until(std::condition_variable& cv, std::chrono::time_point<Clock, Duration> deadline) {
    return cv.wait_until(lock_, deadline) == std::cv_status::no_timeout;
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace stoker
