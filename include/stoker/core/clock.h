// stoker/core/clock.h — monotonic time helpers used for stage timing.
#pragma once

#include <chrono>
#include <cstdint>

namespace stoker {

using SteadyClock = std::chrono::steady_clock;

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch()).count();
}

inline double ns_to_seconds(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

// Measures the time since construction or the last lap(). Not thread-safe; one per thread.
class Stopwatch {
 public:
  Stopwatch() : start_(now_ns()) {}
  // Nanoseconds since the previous lap (or construction); restarts the watch.
  int64_t lap() {
    const int64_t t = now_ns();
    const int64_t elapsed = t - start_;
    start_ = t;
    return elapsed;
  }
  int64_t elapsed_ns() const { return now_ns() - start_; }

 private:
  int64_t start_;
};

}  // namespace stoker
