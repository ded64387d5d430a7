// Helpers of the file-based sources (read_whole_file, their per-sample I/O, is in source.h).
#pragma once

#include <string>

#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

// True when the file name ends in one of kImageExtensions (any case).
bool has_image_extension(const std::string& filename);

// "1,281,167": thousands separators for messages.
std::string with_commas(uint64_t value);

}  // namespace stoker::data
