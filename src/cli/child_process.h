// Starting a command for `stoker monitor -- CMD ARGS...` and waiting for it while
// forwarding the stop signals (SIGINT, SIGTERM, SIGHUP), without any I/O in a signal handler.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "stoker/core/error.h"

namespace stoker::cli {

// The command could not be started: exit code 127, as shells use.
class CommandNotFound : public Error {
 public:
  using Error::Error;
  int exit_code() const noexcept override { return 127; }
};

// SIGINT, SIGTERM or SIGHUP (a closed terminal): the signals that stop a command.
bool is_stop_signal(int signo);

// The stop signals and SIGCHLD: what block_termination_signals() blocks and the waits take.
sigset_t termination_set();

// Blocks the stop signals and SIGCHLD in the calling thread; threads started afterwards
// inherit the mask, so only wait_for_child()/wait_for_signal() see them.
void block_termination_signals();

// Starts argv[0] (searched in PATH) with the default signal mask. Throws CommandNotFound.
pid_t spawn_command(const std::vector<std::string>& argv);

// Starts the program at `path` with `argv` and the environment `env` ("NAME=value"), with
// the default signal mask. Throws CommandNotFound.
pid_t spawn_process(const std::string& path, const std::vector<std::string>& argv, const std::vector<std::string>& env);

// Waits until `child` exits, forwarding the stop signals to it. Returns the shell-style exit
// code: the child's status, or 128 + signal number when a signal killed it.
int wait_for_child(pid_t child);

// Waits up to `seconds` (< 0: forever) for a stop signal; true when one arrived.
bool wait_for_signal(double seconds);

}  // namespace stoker::cli
