// SIGINT/SIGTERM during training: the handler only records the signal; the loop checks
// raised() after each step, saves a checkpoint and exits 128 + signo.
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

  // The signal received since construction (SIGINT or SIGTERM), or 0. Thread-safe.
  int raised() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace stoker::train
