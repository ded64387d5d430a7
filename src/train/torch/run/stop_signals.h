// SIGINT, SIGTERM and SIGHUP (a closed SSH session) during training: the handler only
// records the signal; the loop checks raised() after each step, saves a checkpoint and exits
// 128 + signo.
// One StopSignals at a time per process (the handler writes a process-wide flag).
#pragma once

#include <csignal>

namespace stoker::train {

// Installs the handlers for its lifetime and restores the previous ones.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal received since construction (one of kStopSignals), or 0. Thread-safe.
  int raised() const;

  static constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

 private:
  struct sigaction old_[3]{};
};

// "SIGINT", "SIGTERM", "SIGHUP".
const char* stop_signal_name(int signo);

}  // namespace stoker::train
