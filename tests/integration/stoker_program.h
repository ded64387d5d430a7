// What the command-line tests run: the stoker program of this build, and the dataset the
// training tests use where Debian's dataset-fashion-mnist is installed.
#pragma once

#include <string>

#include "support/build_paths.h"

namespace stoker::testing {

inline const std::string kStoker = build_path("src/stoker");
inline const std::string kFashion = "/usr/share/datasets/fashion-mnist";

}  // namespace stoker::testing
