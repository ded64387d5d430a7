#include "python_call_clock.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

namespace stoker::python {
namespace {

// The thread's own /proc/thread-self/schedstat, kept open while it lives (-1: not there).
struct SchedStat {
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  ~SchedStat() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int64_t thread_run_wait_ns() {
  thread_local SchedStat stat;
  if (stat.fd < 0) return 0;
  char text[96];
  const ssize_t n = pread(stat.fd, text, sizeof text - 1, 0);
  if (n <= 0) return 0;
  text[n] = '\0';
  // "<ns on a cpu> <ns waiting on a runqueue> <timeslices>"
  char* end = nullptr;
  std::strtoll(text, &end, 10);
  return std::strtoll(end, nullptr, 10);
}

PythonCallClock::PythonCallClock(PythonCallTimes& times, std::chrono::steady_clock::time_point asked)
    : times_(times),
      entered_(std::chrono::steady_clock::now()),
      cpu_at_entry_(thread_cpu_ns()),
      run_wait_at_entry_(thread_run_wait_ns()) {
  times_.entry_wait_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(entered_ - asked).count(),
                                 std::memory_order_relaxed);
}

PythonCallClock::~PythonCallClock() {
  const int64_t run_wait = thread_run_wait_ns();
  const int64_t cpu = thread_cpu_ns();
  const auto inside = std::chrono::steady_clock::now() - entered_;
  times_.run_wait_ns.fetch_add(run_wait - run_wait_at_entry_, std::memory_order_relaxed);
  times_.cpu_ns.fetch_add(cpu - cpu_at_entry_, std::memory_order_relaxed);
  times_.inside_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(inside).count(),
                             std::memory_order_relaxed);
  times_.calls.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace stoker::python
