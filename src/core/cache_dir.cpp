#include "stoker/core/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace stoker {

std::string cache_dir() {
  namespace fs = std::filesystem;
  if (const char* cache = std::getenv("STOKER_CACHE"); cache != nullptr && *cache != '\0') return cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return (fs::path(xdg) / "stoker").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return (fs::path(home) / ".cache" / "stoker").string();
  }
  return ".stoker-cache";
}

}  // namespace stoker
