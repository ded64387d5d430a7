// Sample names below a data root, as the exclude list writes and reads them.
#pragma once

#include <string_view>

namespace stoker::data {

// Whether `relative` is a path down from a folder as it is: not empty, and no empty, "." or ".."
// part (such a name is written whole, not relative to the root). Pure; any thread.
inline bool plain_relative(std::string_view relative) {
  if (relative.empty()) return false;
  for (;;) {
    const size_t slash = relative.find('/');
    const std::string_view part = relative.substr(0, slash);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string_view::npos) return true;
    relative.remove_prefix(slash + 1);
  }
}

}  // namespace stoker::data
