#include "train/torch/run/stop_signals.h"

#include <atomic>
#include <iterator>

namespace stoker::train {

namespace {

std::atomic<int> g_stop_signal{0};  // set by the handler; no I/O in the handler

extern "C" void on_stop_signal(int signo) { g_stop_signal.store(signo); }

}  // namespace

StopSignals::StopSignals() {
  g_stop_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &action, &old_[i]);
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &old_[i], nullptr);
}

int StopSignals::raised() const { return g_stop_signal.load(); }

const char* stop_signal_name(int signo) {
  return signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : signo == SIGHUP ? "SIGHUP" : "a signal";
}

}  // namespace stoker::train
