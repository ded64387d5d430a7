// What the command-line tests run: the stoker program of this build (tests/CMakeLists.txt
// names it), and the dataset the training tests use where Debian's dataset-fashion-mnist is
// installed.
#pragma once

#include <string>

namespace stoker::testing {

inline const std::string kStoker = STOKER_BINARY;
inline const std::string kFashion = "/usr/share/datasets/fashion-mnist";

}  // namespace stoker::testing
