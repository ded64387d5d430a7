// Runs a command through /bin/sh and captures stdout, stderr and the exit code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `command` is passed to /bin/sh -c. Stdin is /dev/null.
CommandResult run_command(const std::string& command);

// "" when /usr/bin/python3 (Debian's, which sees python3-torch) imports torch and
// torchvision, else why not, for GTEST_SKIP.
std::string torchvision_missing();

// The whole text of a file ("" when it cannot be read).
std::string read_text(const std::string& path);

// The whole file as bytes (empty when it cannot be read).
std::vector<uint8_t> read_bytes(const std::string& path);

// One row of a bad-input table: arguments, the exit code and a part of the error line.
struct ExpectedError {
  std::string args;
  int exit_code;
  std::string expected;
};

// The error policy, as a test: exit code `exit_code` and exactly one stderr line,
// "error: ...", that contains `expected`. Non-fatal gtest expectations naming `what`.
void expect_one_line_error(const CommandResult& result, int exit_code, const std::string& expected,
                           const std::string& what);

// A bad-input table: runs `command_prefix + row.args` for each row and expects its one line.
void expect_one_line_errors(const std::string& command_prefix, const std::vector<ExpectedError>& rows);

}  // namespace stoker::testing
