#include "worker_signals.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace stoker::python {

namespace {

volatile sig_atomic_t g_manager = 0;

// A signal from the loader's process ends the worker by that signal (its default action, taken
// once the handler returns: the signal is blocked while it runs); any other is left to the
// loader's process, whose script decides (async-signal-safe calls only).
void on_stop_signal(int signal_number, siginfo_t* info, void* /*context*/) {
  if (info != nullptr && info->si_code == SI_USER && info->si_pid == g_manager) {
    std::signal(signal_number, SIG_DFL);
    raise(signal_number);
  }
}

}  // namespace

void shield_worker_from_group_signals(pid_t manager, pid_t parent) {
  g_manager = manager;
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  // Blocked since the fork (the feeder thread that starts the processes blocks them): one that came
  // meanwhile is taken by the handler now.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent != 0 && getppid() != parent) _exit(0);  // the parent ended before the line above
}

}  // namespace stoker::python
