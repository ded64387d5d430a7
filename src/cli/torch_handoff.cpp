#include "torch_handoff.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace stoker::cli {

bool needs_torch(std::string_view command) {
  static constexpr std::array<std::string_view, 4> kCommands = {"train", "evaluate", "doctor", "check"};
  for (const std::string_view c : kCommands) {
    if (c == command) return true;
  }
  return false;
}

std::optional<int> hand_over_torch_command(const char* program, int argc, char** argv) {
  if (argc < 2 || !needs_torch(argv[1])) return std::nullopt;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path = (ec ? std::filesystem::path(program) : self.parent_path() / program).string();
  ::execv(path.c_str(), argv);  // returns only on failure
  const int error = errno;
  std::fprintf(stderr,
               "error: `stoker %s` runs %s (the stoker commands built with libtorch), which %s%s%s; "
               "rebuild with `bash scripts/build.sh build`, or keep %s in the same folder as stoker\n",
               argv[1], path.c_str(), error == ENOENT ? "is missing" : "cannot be started (",
               error == ENOENT ? "" : std::strerror(error), error == ENOENT ? "" : ")", program);
  return 1;
}

}  // namespace stoker::cli
