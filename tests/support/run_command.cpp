#include "support/run_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "support/temp_dir.h"

namespace stoker::testing {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string without_open_progress_lines(const std::string& err) {
  static const std::regex progress(
      R"(^(opening|listing|indexing|fitting Standardize over) .*, [0-9]+ s(; about [0-9]+ s left)?$)");
  std::istringstream lines(err);
  std::string kept, line;
  while (std::getline(lines, line)) {
    if (!std::regex_match(line, progress)) kept += line + "\n";
  }
  return kept;
}

void expect_one_line_error(const CommandResult& r, int exit_code, const std::string& expected,
                           const std::string& what) {
  const std::string err = without_open_progress_lines(r.err);
  EXPECT_EQ(r.exit_code, exit_code) << what << "\n" << r.err;
  EXPECT_EQ(err.rfind("error: ", 0), 0u) << what << ": " << r.err;
  EXPECT_NE(err.find(expected), std::string::npos) << what << ": " << r.err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << what << ": " << r.err;
}

void expect_one_line_errors(const std::string& command_prefix, const std::vector<ExpectedError>& rows) {
  for (const ExpectedError& row : rows) {
    expect_one_line_error(run_command(command_prefix + row.args), row.exit_code, row.expected, row.args);
  }
}

CommandResult run_command(const std::string& command) {
  TempDir dir;
  const std::string out = dir.str() + "/out", err = dir.str() + "/err";
  const std::string full = "(" + command + ") </dev/null >" + out + " 2>" + err;
  const int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_text(out);
  result.err = read_text(err);
  return result;
}

std::string torchvision_missing() {
  const CommandResult probe = run_command(
      "/usr/bin/python3 -c 'import importlib.util as u, sys; "
      "sys.exit(0 if u.find_spec(\"torch\") and u.find_spec(\"torchvision\") else 1)'");
  if (probe.exit_code == 0) return "";
  return "/usr/bin/python3 does not have torch and torchvision (install python3-torchvision)" +
         (probe.err.empty() ? std::string() : ": " + probe.err);
}

namespace {
// Runs a script per line of a file, each with its own sys.argv and a fresh module namespace,
// and ends each case's output with a record separator line.
constexpr const char* kCasesDriver = R"PY(
import contextlib, io, sys
script, cases = sys.argv[1], sys.argv[2]
code = compile(open(script).read(), script, "exec")
for line in open(cases).read().splitlines():
    sys.argv = [script] + line.split()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {"__name__": "__main__"})
    sys.stdout.write(out.getvalue() + "\x1e\n")
)PY";
}  // namespace

PythonCasesResult run_python_cases(const std::string& script, const std::vector<std::string>& cases) {
  TempDir dir;
  std::string lines;
  for (const std::string& c : cases) lines += c + "\n";
  const CommandResult run = run_command("/usr/bin/python3 " + dir.write_text("driver.py", kCasesDriver) + " " +
                                        dir.write_text("script.py", script) + " " + dir.write_text("cases.txt", lines));
  PythonCasesResult result;
  result.exit_code = run.exit_code;
  result.err = run.err;
  const std::string separator = "\x1e\n";
  for (size_t at = 0; at < run.out.size();) {
    const size_t end = run.out.find(separator, at);
    if (end == std::string::npos) break;
    result.outputs.push_back(run.out.substr(at, end - at));
    at = end + separator.size();
  }
  return result;
}

}  // namespace stoker::testing
