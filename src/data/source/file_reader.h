// Reading one whole file into a reusable buffer, the per-sample I/O of file-based sources.
#pragma once

#include <string>

#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

// Reads `path` into out->storage (grow-only) and points out->bytes at it. Fails with a short
// reason ("file not found", "permission denied", "is a directory", "read error: ...").
Status read_whole_file(const std::string& path, SampleData* out);

// True when the file name ends in .jpg, .jpeg or .png (any case).
bool has_image_extension(const std::string& filename);

// "1,281,167": thousands separators for messages.
std::string with_commas(uint64_t value);

}  // namespace stoker::data
