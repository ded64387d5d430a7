// Picks the source type from what a path is.
#include <fmt/format.h>
#include <glob.h>
#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <new>

#include "array_naming.h"
#include "array_source.h"
#include "brace_pattern.h"
#include "concat_source.h"
#include "stoker/core/error.h"
#include "stoker/core/process.h"
#include "stoker/data/formats.h"
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

// The kind a file's extension names (formats.h); kImageFolder, which no file is, for none.
FormatKind kind_of_file(const std::string& file) {
  const DataFormat* format = format_of_file(file);
  return format != nullptr ? format->kind : FormatKind::kImageFolder;
}

bool is_hdf5(const std::string& file) { return kind_of_file(file) == FormatKind::kHdf5; }

// True for "feats.h5:group": a group of an HDF5 file (open_hdf5 reads it).
bool names_hdf5_group(const std::string& path) {
  const auto [file, group] = split_hdf5_path(path);
  return !group.empty() && is_hdf5(file);
}

// The IDX file-name prefixes of `split`: t10k for a test split; for a directory given for
// validation, its t10k files if it has them, else its train files.
std::vector<std::string> idx_prefixes(const std::string& split) {
  if (is_test_split(split)) return {"t10k"};
  if (is_validation_file(split)) return {"t10k", "train"};
  return {split};
}

std::unique_ptr<Source> open_by_kind(const std::string& path, const std::string& split) {
  std::error_code ec;
  if (names_hdf5_group(path)) return open_hdf5(path, split);
  if (!fs::exists(path, ec)) throw DataError("dataset path " + path + " does not exist");
  if (fs::is_regular_file(path, ec)) {
    switch (kind_of_file(path)) {
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
      case FormatKind::kImageFolder:
      case FormatKind::kIdx:
        break;  // no file is either
    }
    if (path.ends_with(".tar.gz") || fs::path(path).extension() == ".tgz") {
      throw DataError("dataset path " + path +
                      " is a compressed tar file, whose images cannot be read in place; unpack it "
                      "(tar -xzf) and "
                      "give the folder, or recompress it as plain .tar shards");
    }
    throw DataError("dataset path " + path + " is a file of none of the kinds stoker reads; expected " +
                    data_formats_text());
  }
  for (const std::string& prefix : idx_prefixes(split)) {
    const std::string images = find_idx(path, prefix, "images-idx3-ubyte");
    if (images.empty()) continue;
    const std::string labels = find_idx(path, prefix, "labels-idx1-ubyte");
    if (labels.empty()) {
      throw DataError("found " + images + " but no " + prefix + "-labels-idx1-ubyte[.gz] beside it");
    }
    return open_idx(images, labels);
  }
  return open_image_folder(path);
}

// True when the one path `path` carries its own held-out split (has_test_split).
bool has_test_split_of(const std::string& path) {
  std::error_code ec;
  if (names_hdf5_group(path)) return hdf5_has_test_split(path);
  if (fs::is_directory(path, ec)) return !find_idx(path, "t10k", "images-idx3-ubyte").empty();
  if (!fs::is_regular_file(path, ec)) return false;
  switch (kind_of_file(path)) {
    case FormatKind::kNumpy:
      return fs::path(path).extension() == ".npz" && npz_has_test_split(path);
    case FormatKind::kTorch:
      return torch_file_has_test_split(path);
    case FormatKind::kHdf5:
      return hdf5_has_test_split(path);
    default:
      return false;
  }
}

// The files one glob pattern matches (glob(3), sorted), ":group" kept for HDF5 files; a name
// without * ? or [ is itself. Throws DataError for a pattern that matches nothing.
std::vector<std::string> glob_paths(const std::string& path, const std::string& as_given) {
  if (path.find_first_of("*?[") == std::string::npos) return {path};
  const auto [file, group] = split_hdf5_path(path);
  glob_t found{};
  const int rc = glob(file.c_str(), 0, nullptr, &found);
  std::vector<std::string> paths;
  for (size_t i = 0; rc == 0 && i < found.gl_pathc; ++i)
    paths.push_back(group.empty() ? found.gl_pathv[i] : std::string(found.gl_pathv[i]) + ":" + group);
  globfree(&found);
  if (paths.empty()) {
    throw DataError(
        fmt::format("dataset pattern {} matches no file; check the folder and the pattern (shards "
                    "of one dataset: 'data/emb_*.npy', 'shards/train-{{000000..000146}}.tar')",
                    file == as_given ? file : fmt::format("{} (from {})", file, as_given)));
  }
  return paths;
}

// The paths `path` names: itself when it exists; else its brace groups expanded
// (brace_pattern.h), then each name's glob pattern. A name without a pattern that does not
// exist is the error of the first such one.
std::vector<std::string> paths_named(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec)) return {path};
  if (!has_brace_group(path)) return glob_paths(path, path);
  std::vector<std::string> paths;
  for (const std::string& name : expand_braces(path)) {
    if (name.find_first_of("*?[") == std::string::npos && !fs::exists(split_hdf5_path(name).first, ec)) {
      throw DataError(
          fmt::format("dataset pattern {} names {}, which does not exist; check the range (the shards "
                      "there: ls {})",
                      path, name, fs::path(name).has_parent_path() ? fs::path(name).parent_path().string() : "."));
    }
    for (std::string& one : glob_paths(name, path)) paths.push_back(std::move(one));
  }
  return paths;
}

}  // namespace

std::unique_ptr<Source> open_source(const std::string& path, const std::string& split) {
  try {
    std::vector<std::unique_ptr<Source>> parts;
    for (const std::string& one : paths_named(path)) parts.push_back(open_by_kind(one, split));
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

std::string default_transforms(const Source& source, int image_size) {
  if (std::string chain = source.default_transforms(); !chain.empty()) return chain;
  return fmt::format("RandomResizedCrop({}), RandomHorizontalFlip(0.5), Normalize", image_size);
}

bool has_test_split(const std::string& pattern) {
  const std::vector<std::string> paths = paths_named(pattern);
  return std::all_of(paths.begin(), paths.end(), [](const std::string& path) { return has_test_split_of(path); });
}

}  // namespace stoker::data
