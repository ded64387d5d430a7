// .npz archives and .npy files -> an ArraySource (open_arrays).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>

#include "array_naming.h"
#include "array_source.h"
#include "npy.h"
#include "stoker/core/error.h"
#include "stoker/core/mapped_file.h"
#include "stoker/core/process.h"
#include "zip_archive.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> npz_keys(const ZipArchive& zip) {
  std::vector<std::string> keys;
  for (const auto& m : zip.members()) {
    if (m.name.size() > 4 && m.name.ends_with(".npy")) keys.push_back(m.name.substr(0, m.name.size() - 4));
  }
  return keys;
}

std::unique_ptr<Source> open_npz(const std::string& path, Split split) {
  const ZipArchive zip(path);
  const std::vector<std::string> keys = npz_keys(zip);
  const std::vector<std::string> suffixes = split_suffixes(split);
  const auto pair = array_pair(keys, suffixes);
  if (!pair) {
    throw DataError(
        fmt::format("{} holds the arrays [{}]; expected features named {} and targets named {}; save "
                    "with np.savez(path, x=..., y=...)",
                    path, fmt::join(keys, ", "), names_looked_for(kFeatureNames, suffixes),
                    names_looked_for(kTargetNames, suffixes)));
  }
  const auto member = [&](const std::string& key) -> const ZipArchive::Member& { return *zip.find(key + ".npy"); };
  // np.savez stores members uncompressed: the features are read in place from the archive's
  // map. A np.savez_compressed member is inflated into memory.
  const ZipArchive::Member& x_member = member(pair->first);
  const ZipArchive::Member& y_member = member(pair->second);
  // The headers first: arrays that disagree are named before anything is inflated.
  constexpr size_t kHeaderBytes = 1 << 20;
  std::vector<uint8_t> y_bytes = zip.extract_prefix(y_member, kHeaderBytes);  // all of a y this small
  check_one_row_per_sample(parse_npy_header(zip.extract_prefix(x_member, kHeaderBytes), path + ":" + pair->first),
                           parse_npy_header(y_bytes, path + ":" + pair->second));
  const bool stored = x_member.method == 0;
  if (const double free = stored ? 0 : free_ram_bytes(); !stored && static_cast<double>(x_member.size) > 0.9 * free) {
    throw DataError(
        fmt::format("{}:{} inflates to {:.1f} GB, more than the {:.1f} GB of memory free; save it with "
                    "np.savez (uncompressed arrays are read in place, not into memory)",
                    path, pair->first, static_cast<double>(x_member.size) / 1e9, free / 1e9));
  }
  const std::vector<uint8_t> x_bytes = stored ? std::vector<uint8_t>{} : zip.extract(x_member);
  const NpyArray x =
      parse_npy(stored ? zip.stored(x_member) : std::span<const uint8_t>(x_bytes), path + ":" + pair->first);
  if (y_bytes.size() < y_member.size) y_bytes = zip.extract(y_member);
  const NpyArray y = parse_npy(y_bytes, path + ":" + pair->second);
  const std::string origin = fmt::format("arrays {} ({}, {})", path, pair->first, pair->second);
  return make_array_source(to_sample_arrays(x, y, origin, stored ? zip.file() : nullptr));
}

// Sibling target files of a features .npy: one name token swapped (x -> y, features -> labels).
std::vector<fs::path> target_candidates(const fs::path& features) {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kSwaps{{"x", {"y"}},
                                                                                    {"X", {"y", "Y"}},
                                                                                    {"features", {"labels", "targets"}},
                                                                                    {"data", {"labels", "targets"}},
                                                                                    {"inputs", {"targets", "labels"}},
                                                                                    {"images", {"labels"}}};
  const std::string stem = features.stem().string();
  std::vector<fs::path> out;
  size_t start = 0;
  while (start <= stem.size()) {
    size_t end = stem.find_first_of("_-.", start);
    if (end == std::string::npos) end = stem.size();
    const std::string token = stem.substr(start, end - start);
    for (const auto& [from, tos] : kSwaps) {
      if (token != from) continue;
      for (const std::string& to : tos) {
        out.push_back(features.parent_path() / (stem.substr(0, start) + to + stem.substr(end) + ".npy"));
      }
    }
    start = end + 1;
  }
  return out;
}

// The targets file open_npy reads beside `features`: the first of its candidates that is a file.
std::optional<fs::path> targets_beside(const fs::path& features) {
  for (const fs::path& p : target_candidates(features)) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
  }
  return std::nullopt;
}

std::unique_ptr<Source> open_npy(const std::string& path) {
  const std::optional<fs::path> found = targets_beside(path);
  if (!found) {
    const std::vector<fs::path> candidates = target_candidates(path);
    std::vector<std::string> names;
    for (const auto& p : candidates) names.push_back(p.filename().string());
    throw DataError(
        fmt::format("{}: no targets beside it{}; name the features x.npy and the targets y.npy (or X_train.npy "
                    "/ y_train.npy, "
                    "features.npy / labels.npy), or put both in one .npz",
                    path, names.empty() ? "" : fmt::format(" (looked for {})", fmt::join(names, ", "))));
  }
  auto x_file = std::make_shared<const MappedFile>(path);  // the features are read in place
  const MappedFile y_file(found->string());
  const NpyArray x = parse_npy(x_file->bytes(), path);
  const NpyArray y = parse_npy(y_file.bytes(), found->string());
  return make_array_source(
      to_sample_arrays(x, y, fmt::format("arrays {} + {}", path, found->filename().string()), std::move(x_file)));
}

}  // namespace

std::unique_ptr<Source> open_arrays(const std::string& path, Split split) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError("dataset file " + path + " does not exist");
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".npz") return open_npz(path, split);
  if (ext == ".npy") {
    if (split != Split::kTrain && split != Split::kValidationFile) {
      throw DataError(fmt::format("{} is an .npy file, which holds one split; give the {} data's own path", path,
                                  split == Split::kVal ? "validation" : "test"));
    }
    return open_npy(path);
  }
  throw DataError("dataset file " + path + " is not an .npz or .npy file");
}

std::vector<Split> npz_splits(const std::string& path) { return splits_among(npz_keys(ZipArchive(path))); }

std::vector<CommandInput> data_inputs(const std::string& data, const std::string& what) {
  std::vector<CommandInput> inputs{{data, what}};
  if (data.empty() || fs::path(data).extension() != ".npy") return inputs;
  if (const std::optional<fs::path> targets = targets_beside(data)) {
    inputs.push_back({targets->string(), what + "'s targets"});
  }
  return inputs;
}

}  // namespace stoker::data
