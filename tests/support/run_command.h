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

// "" when /usr/bin/python3 (Debian's, which sees python3-torch) finds torch and torchvision,
// else why not, for GTEST_SKIP. It looks the packages up without importing them (0.1 s, not the
// 3-5 s of an import): a torch that is installed but broken fails the test that uses it.
std::string torchvision_missing();

// One /usr/bin/python3 process that runs the Python source `script` once per entry of `cases`,
// with sys.argv[1:] set to that entry's words: torch is imported once, not once per case.
// `outputs` holds each case's standard output, in order; exit_code is non-zero (with `err`)
// when any case raised.
struct PythonCasesResult {
  int exit_code = -1;
  std::string err;
  std::vector<std::string> outputs;
};
PythonCasesResult run_python_cases(const std::string& script, const std::vector<std::string>& cases);

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

// `err` without the lines a slow open writes before its error (data::open_progress_text's
// forms: "opening train/, 1 s", "listing ...; about 9 s left", "indexing ..."): an open that
// runs a second past its checks on a loaded machine shows one, by design.
std::string without_open_progress_lines(const std::string& err);

// The error policy, as a test: exit code `exit_code` and exactly one stderr line besides a
// slow open's progress lines, "error: ...", that contains `expected`. Non-fatal gtest
// expectations naming `what`.
void expect_one_line_error(const CommandResult& result, int exit_code, const std::string& expected,
                           const std::string& what);

// A bad-input table: runs `command_prefix + row.args` for each row and expects its one line.
void expect_one_line_errors(const std::string& command_prefix, const std::vector<ExpectedError>& rows);

}  // namespace stoker::testing
