// Picks the source type from what a path is.
#include <filesystem>

#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

// "<dir>/<split>-images-idx3-ubyte[.gz]" if it exists, else "".
std::string find_idx(const fs::path& dir, const std::string& split, const std::string& what) {
  for (const char* suffix : {"", ".gz"}) {
    const fs::path candidate = dir / (split + "-" + what + suffix);
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return "";
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& path, const std::string& split) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError("dataset path " + path + " does not exist");
  if (fs::is_regular_file(path, ec)) {
    if (fs::path(path).extension() == ".csv") return open_file_list(path);
    throw DataError("dataset path " + path +
                    " is a file; expected a directory (image folder or IDX files) or a .csv list");
  }
  const std::string images = find_idx(path, split, "images-idx3-ubyte");
  if (!images.empty()) {
    const std::string labels = find_idx(path, split, "labels-idx1-ubyte");
    if (labels.empty()) {
      throw DataError("found " + images + " but no " + split + "-labels-idx1-ubyte[.gz] beside it");
    }
    return open_idx(images, labels);
  }
  return open_image_folder(path);
}

}  // namespace stoker::data
