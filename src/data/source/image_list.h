// Image files held in memory with their class ids: what open_image_list (an ImageFolder
// object's samples) and open_image_folder (a folder listed) both make.
// Thread safety: as Source's (immutable once made).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/data/path_list.h"
#include "stoker/data/source.h"

namespace stoker::data {

// describe(): "<description>: N images in K classes<notes>". No checks: the callers have made
// one class id in [0, class_names.size()) per path.
std::unique_ptr<Source> image_list_source(std::string description, PathList paths, std::vector<int64_t> labels,
                                          std::vector<std::string> class_names, std::string notes);

}  // namespace stoker::data
