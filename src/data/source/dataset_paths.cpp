// What a dataset path names: pattern expansion and the kind of each path.
#include "dataset_paths.h"

#include <fmt/format.h>
#include <glob.h>

#include "array_naming.h"
#include "brace_pattern.h"
#include "stoker/core/error.h"
#include "stoker/data/split.h"

namespace stoker::data {

namespace fs = std::filesystem;

std::string find_idx(const fs::path& dir, std::string_view prefix, std::string_view what) {
  for (const char* suffix : {"", ".gz"}) {
    const fs::path candidate = dir / fmt::format("{}-{}{}", prefix, what, suffix);
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return "";
}

FormatKind kind_of_file(const std::string& file) {
  const DataFormat* format = format_of_file(file);
  return format != nullptr ? format->kind : FormatKind::kImageFolder;
}

bool names_hdf5_group(const std::string& path) {
  const auto [file, group] = split_hdf5_path(path);
  return !group.empty() && kind_of_file(file) == FormatKind::kHdf5;
}

FormatKind kind_of_path(const std::string& path) {
  if (names_hdf5_group(path)) return FormatKind::kHdf5;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (path.find("::") != std::string::npos) {  // open_clip's list of sources
      throw DataError("dataset path " + path +
                      " does not exist; '::' joins sources in open_clip's --train-data, and stoker reads one path or "
                      "pattern: name the shards as one, 'shards/{00000..00099}.tar' or 'shards/*.tar'");
    }
    throw DataError("dataset path " + path + " does not exist");
  }
  if (!fs::is_directory(path, ec)) return kind_of_file(path);
  for (const Split split : {Split::kTrain, Split::kTest}) {
    for (const std::string_view prefix : idx_prefixes(split)) {
      if (!find_idx(path, prefix, "images-idx3-ubyte").empty()) return FormatKind::kIdx;
    }
  }
  return FormatKind::kImageFolder;
}

namespace {

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

}  // namespace

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

}  // namespace stoker::data
