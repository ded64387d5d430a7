// Runs a command through /bin/sh and captures stdout, stderr and the exit code.
#pragma once

#include <string>

namespace stoker::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `command` is passed to /bin/sh -c. Stdin is /dev/null.
CommandResult run_command(const std::string& command);

}  // namespace stoker::testing
