#include "support/build_paths.h"

#include <filesystem>

namespace stoker::testing {

std::string build_path(const std::string& relative) {
  static const std::filesystem::path build =
      std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path();
  return (build / relative).string();
}

}  // namespace stoker::testing
