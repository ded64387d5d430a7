#include "torch_handoff.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "stoker/core/error.h"

namespace stoker::cli {

namespace {

struct Handoff {
  const char* program = nullptr;  // nullptr: not armed
  int argc = 0;
  char** argv = nullptr;
};

Handoff& handoff() {
  static Handoff h;
  return h;
}

}  // namespace

void arm_torch_handoff(const char* program, int argc, char** argv) { handoff() = {program, argc, argv}; }

void continue_in_torch_program() {
  const Handoff& h = handoff();
  if (h.program == nullptr || h.argc < 2) return;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string path = (ec ? std::filesystem::path(h.program) : self.parent_path() / h.program).string();
  std::fflush(nullptr);
  ::execv(path.c_str(), h.argv);  // returns only on failure
  const int error = errno;
  throw Error(fmt::format(
      "`stoker {}` runs {} (the stoker commands built with libtorch), which {}; rebuild with "
      "`bash scripts/build.sh build`, or keep {} in the same folder as stoker",
      h.argv[1], path,
      error == ENOENT ? std::string("is missing") : fmt::format("cannot be started ({})", std::strerror(error)),
      h.program));
}

}  // namespace stoker::cli
