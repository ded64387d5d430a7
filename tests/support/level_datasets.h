// Small datasets whose targets a model can learn in seconds: 8x8 gray PNGs filled with one
// level (0..255) plus a little noise. A regression learns the level; a binary classifier
// tells dark from bright. Written with the library's own PNG encoder.
#pragma once

#include <cstdint>
#include <string>

#include "support/temp_dir.h"

namespace stoker::testing {

// `count` images in dir/<name>/ and a file list dir/<name>.csv with the header
// "path,brightness,darkness" (level / 255 and 1 - level / 255): a two-target regression.
// Returns the CSV's path.
std::string write_level_regression(const TempDir& dir, const std::string& name, int count, uint32_t seed);

// `count` 8x8 gray PNGs each with a bright vertical bar at column x (0..7), and dir/<name>.csv
// with the header "path,offset,level": offset = (x + 0.5) / 8 - 0.5, which a horizontal flip
// negates, and the bar's level / 255, which it keeps. Returns the CSV's path.
std::string write_bar_regression(const TempDir& dir, const std::string& name, int count, uint32_t seed);

// An image folder dir/<name>/{bright,dark}/ of `count` images (level >= 128 is bright).
// Returns the folder's path.
std::string write_level_classes(const TempDir& dir, const std::string& name, int count, uint32_t seed);

}  // namespace stoker::testing
