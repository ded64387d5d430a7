// data::open_source() (or open_clip_source()) on a thread of its own while the calling thread
// shows a ProgressLine of what the listing or index has done (data::OpenProgress): ImageNet's
// 1.28 million files, or its shards, on a network file system take minutes to list.
//
// Thread safety: call from the thread that writes the command's stderr.
#pragma once

#include <memory>
#include <string>

#include "stoker/data/source.h"

namespace stoker::cli {

std::unique_ptr<data::Source> open_source_with_progress(const std::string& path, const std::string& split,
                                                        bool clips = false);

}  // namespace stoker::cli
