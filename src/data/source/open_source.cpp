// Picks the source type from what a path is.
#include <fmt/format.h>
#include <sys/resource.h>

#include <filesystem>
#include <new>

#include "concat_source.h"
#include "dataset_paths.h"
#include "stoker/core/error.h"
#include "stoker/core/process.h"
#include "stoker/data/formats.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

// The IDX files of `split` in `dir`, the first prefix (split.h) that has images. Throws
// DataError for images without labels, and for a directory with none of the split's files.
std::unique_ptr<Source> open_idx_split(const std::string& dir, Split split) {
  const std::vector<std::string_view> prefixes = idx_prefixes(split);
  for (const std::string_view prefix : prefixes) {
    const std::string images = find_idx(dir, prefix, "images-idx3-ubyte");
    if (images.empty()) continue;
    const std::string labels = find_idx(dir, prefix, "labels-idx1-ubyte");
    if (labels.empty()) {
      throw DataError(fmt::format("found {} but no {}-labels-idx1-ubyte[.gz] beside it", images, prefix));
    }
    return open_idx(images, labels);
  }
  throw DataError(fmt::format("{} holds IDX files but no {}-images-idx3-ubyte[.gz]", dir,
                              prefixes.empty() ? "train" : prefixes.front()));
}

std::unique_ptr<Source> open_by_kind(const std::string& path, Split split, bool clips) {
  const FormatKind kind = kind_of_path(path);
  switch (kind) {
    case FormatKind::kImageFolder:
      break;
    case FormatKind::kIdx:
      return open_idx_split(path, split);
    case FormatKind::kCsv:
      return is_feature_table(path) ? open_feature_table(path) : open_file_list(path);
    case FormatKind::kNumpy:
      return open_arrays(path, split);
    case FormatKind::kTorch:
      return open_torch_file(path, split);
    case FormatKind::kHdf5:
      return open_hdf5(path, split);
    case FormatKind::kWebDataset:
      return open_web_dataset(path);
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) return clips ? open_clip_folder(path) : open_image_folder(path);
  if (path.ends_with(".tar.gz") || fs::path(path).extension() == ".tgz") {
    throw DataError("dataset path " + path +
                    " is a compressed tar file, whose images cannot be read in place; unpack it "
                    "(tar -xzf) and "
                    "give the folder, or recompress it as plain .tar shards");
  }
  throw DataError("dataset path " + path + " is a file of none of the kinds stoker reads; expected " +
                  data_formats_text());
}

// open_source once the split is known to be there (or is one of the trainer's readings).
std::unique_ptr<Source> open_paths(const std::string& path, Split split, bool clips = false) {
  try {
    std::vector<std::unique_ptr<Source>> parts;
    for (const std::string& one : paths_named(path)) parts.push_back(open_by_kind(one, split, clips));
    return concat_sources(std::move(parts), path);
  } catch (const std::bad_alloc&) {
    // Table sources, and array sources whose layout cannot be read in place, hold their data
    // in RAM; one that does not fit says so here, not as an out-of-memory of training. A source
    // whose header declares more than allocation_ceiling_bytes() throws bad_alloc before reading.
    rlimit limit{};
    const bool limited = getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
    throw DataError(fmt::format(
        "{} does not fit in memory: stoker holds compressed or chunked arrays and CSV tables in RAM as float32 (and "
        "class ids as int64), and {:.1f} GB are free{}; save the features with np.save, np.savez (not compressed) or "
        "h5py without chunks, which stoker maps and reads as needed, or train on a part of the rows",
        path, free_ram_bytes() / 1e9,
        limited ? fmt::format(" (ulimit -v allows this process {:.1f} GB)", static_cast<double>(limit.rlim_cur) / 1e9)
                : ""));
  }
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& path, const std::string& split) {
  check_split(path, split);  // the user's word in its message
  return open_paths(path, split_named(split).value_or(Split::kTrain));
}

std::unique_ptr<Source> open_clip_source(const std::string& path, const std::string& split) {
  check_split(path, split);
  return open_paths(path, split_named(split).value_or(Split::kTrain), true);
}

std::unique_ptr<Source> open_source(const std::string& path, Split split) {
  check_offered(path, split);
  return open_paths(path, split);
}

std::string default_transforms(const Source& source, int image_size) {
  if (std::string chain = source.default_transforms(); !chain.empty()) return chain;
  return fmt::format("RandomResizedCrop({}), RandomHorizontalFlip(0.5), Normalize", image_size);
}

}  // namespace stoker::data
