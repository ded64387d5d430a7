// Picks the source type from what a path is.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <new>
#include <thread>

#include "concat_source.h"
#include "dataset_paths.h"
#include "stoker/core/error.h"
#include "stoker/core/process.h"
#include "stoker/data/formats.h"
#include "stoker/data/open_progress.h"
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

// Throws DataError unless a path kind_of_path calls kImageFolder is a folder.
void check_image_folder(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return;
  if (path.ends_with(".tar.gz") || fs::path(path).extension() == ".tgz") {
    throw DataError("dataset path " + path +
                    " is a compressed tar file, whose images cannot be read in place; unpack it "
                    "(tar -xzf) and "
                    "give the folder, or recompress it as plain .tar shards");
  }
  throw DataError("dataset path " + path + " is a file of none of the kinds stoker reads; expected " +
                  data_formats_text());
}

// Marks the open's checks passed (OpenProgress::mark_checked) in the progress reported to.
void mark_checked() {
  if (OpenProgress* progress = current_open_progress()) progress->mark_checked();
}

std::unique_ptr<Source> open_by_kind(const std::string& path, Split split, bool clips) {
  const FormatKind kind = kind_of_path(path);
  if (kind == FormatKind::kImageFolder) check_image_folder(path);
  mark_checked();
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
  return clips ? open_clip_folder(path) : open_image_folder(path);
}

// Shards indexed at once: each index reads its headers page by page, and a disk or a network
// file system serves reads in flight together in about the time of one.
constexpr size_t kShardIndexThreads = 8;

// The sources of `paths`, in order. Shards are indexed by several threads; the first failure
// in the paths' order is thrown, as when they are opened one after another.
std::vector<std::unique_ptr<Source>> open_each(const std::vector<std::string>& paths, Split split, bool clips) {
  std::vector<std::unique_ptr<Source>> parts(paths.size());
  const bool shards = std::all_of(paths.begin(), paths.end(),
                                  [](const std::string& p) { return kind_of_path(p) == FormatKind::kWebDataset; });
  OpenProgress* const progress = current_open_progress();
  if (paths.size() < 2) {
    if (!paths.empty()) parts[0] = open_by_kind(paths[0], split, clips);  // a folder reports its own listing
    return parts;
  }
  if (progress != nullptr) {
    progress->shards = true;
    progress->parts = paths.size();
    progress->mark_checked();  // each file's own checks come as it is opened
  }
  const auto open_one = [&](size_t i) {
    parts[i] = open_by_kind(paths[i], split, clips);
    if (progress != nullptr) {
      progress->files += parts[i]->size();
      ++progress->parts_done;
    }
  };
  if (!shards) {
    for (size_t i = 0; i < paths.size(); ++i) open_one(i);
    return parts;
  }
  std::vector<std::exception_ptr> errors(paths.size());
  std::atomic<size_t> next{0};
  const auto index = [&] {
    for (size_t i; (i = next.fetch_add(1)) < paths.size();) {
      try {
        open_one(i);
      } catch (...) {
        errors[i] = std::current_exception();
        next.store(paths.size());  // the shards before it are taken already: they end, and no others start
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(paths.size(), kShardIndexThreads); ++t) threads.emplace_back(index);
  index();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return parts;
}

// open_source once the split is known to be there (or is one of the trainer's readings).
std::unique_ptr<Source> open_paths(const std::string& path, Split split, bool clips = false) {
  try {
    return concat_sources(open_each(paths_named(path), split, clips), path);
  } catch (const std::bad_alloc&) {
    // Table sources, array sources whose layout cannot be read from the file, and every source's
    // targets are held in RAM; one that does not fit says so here, not as an out-of-memory of training. A source
    // whose header declares more than allocation_ceiling_bytes() throws bad_alloc before reading.
    rlimit limit{};
    const bool limited = getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
    throw DataError(fmt::format(
        "{} does not fit in memory: stoker holds compressed .npz arrays, Fortran-ordered arrays, CSV tables and every "
        "file's targets in RAM (features as float32, class ids as int64), and {:.1f} GB are free{}; save the features "
        "with np.save, np.savez (not compressed) or h5py, which stoker reads from the file as needed, or train on a "
        "part of the rows",
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
