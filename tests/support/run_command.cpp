#include "support/run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace stoker::testing {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

CommandResult run_command(const std::string& command) {
  TempDir dir;
  const std::string out = dir.str() + "/out", err = dir.str() + "/err";
  const std::string full = "(" + command + ") </dev/null >" + out + " 2>" + err;
  const int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out);
  result.err = slurp(err);
  return result;
}

}  // namespace stoker::testing
