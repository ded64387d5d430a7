#include "stop_signals.h"

#include <atomic>

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
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::raised() const { return g_stop_signal.load(); }

}  // namespace stoker::train
