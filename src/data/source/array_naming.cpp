// The array naming shared by .npz archives and HDF5 files, and to_sample_arrays.
#include "array_naming.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "stoker/core/error.h"

namespace stoker::data {

std::optional<std::string> first_named(const std::vector<std::string>& keys, const std::array<const char*, 6>& names,
                                       const std::string& suffix) {
  for (const char* name : names) {
    const std::string wanted = name + suffix;
    if (std::find(keys.begin(), keys.end(), wanted) != keys.end()) return wanted;
  }
  return std::nullopt;
}

namespace {

// uint8 images into a.pixels, (N, H, W, C): (N, C, H, W) is transposed to the layout decoders write.
void to_pixels(const NpyArray& x, bool channels_first, SampleArrays* a) {
  std::vector<uint8_t> pixels = npy_to_uint8(x);
  if (!channels_first) {
    a->pixels = std::move(pixels);
    return;
  }
  a->pixels.resize(pixels.size());
  const size_t plane = static_cast<size_t>(a->width) * static_cast<size_t>(a->height);
  const auto c = static_cast<size_t>(a->channels);
  for (size_t n = 0; n < a->count; ++n) {
    for (size_t k = 0; k < c; ++k) {
      for (size_t p = 0; p < plane; ++p) a->pixels[(n * plane + p) * c + k] = pixels[(n * c + k) * plane + p];
    }
  }
}

// Every row of `rows`, as stored, one after the other. Throws DataError with the first row that
// cannot be read.
std::vector<uint8_t> all_rows(const RowReader& rows) {
  const NpyArray& layout = rows.layout();
  const auto row_bytes = static_cast<size_t>(layout.row_size()) * static_cast<size_t>(layout.itemsize);
  std::vector<uint8_t> all(static_cast<size_t>(layout.rows()) * row_bytes);
  for (size_t i = 0; i < static_cast<size_t>(layout.rows()); ++i) {
    if (Status status = rows.read(i, all.data() + i * row_bytes); !status.ok()) throw DataError(status.reason());
  }
  return all;
}

}  // namespace

void check_one_row_per_sample(const NpyArray& x, const NpyArray& y) {
  if (x.shape.empty()) throw DataError(x.name + " is a scalar; expected one row per sample");
  if (y.shape.empty() || y.rows() != x.rows()) {
    throw DataError(fmt::format("{} has {} rows and {} has {}; they must have one row per sample each", x.name,
                                x.rows(), y.name, y.shape.empty() ? 0 : y.rows()));
  }
}

SampleArrays to_sample_arrays(const NpyArray& x, const NpyArray& y, std::string origin,
                              std::shared_ptr<const MappedFile> x_file, std::shared_ptr<const RowReader> x_rows) {
  SampleArrays a;
  a.origin = std::move(origin);
  a.item = x.name;
  check_one_row_per_sample(x, y);
  a.count = static_cast<size_t>(x.rows());

  const auto& s = x.shape;
  const bool bytes = (x.kind == 'u' || x.kind == 'b') && x.itemsize == 1;
  const bool channels_last = s.size() == 4 && (s[3] == 1 || s[3] == 3);
  const bool channels_first = s.size() == 4 && !channels_last && (s[1] == 1 || s[1] == 3);
  const bool in_place = x_file != nullptr && !(x.fortran_order && s.size() > 1);
  if (bytes && (s.size() == 3 || channels_last || channels_first)) {  // images
    a.height = static_cast<int>(channels_first ? s[2] : s[1]);
    a.width = static_cast<int>(channels_first ? s[3] : s[2]);
    a.channels = s.size() == 3 ? 1 : static_cast<int>(channels_first ? s[1] : s[3]);
    if (x_rows && !channels_first) {
      a.rows = std::move(x_rows);
    } else if (x_rows) {
      std::vector<uint8_t> all = all_rows(*x_rows);
      NpyArray held = x;
      held.data = all;
      to_pixels(held, channels_first, &a);
    } else if (in_place && !channels_first) {
      a.in_place = x;
      a.mapping = std::move(x_file);
    } else {
      to_pixels(x, channels_first, &a);
    }
  } else {
    const int64_t d = x.row_size();
    if (d < 1 || d > (int64_t{1} << 24)) {
      throw DataError(fmt::format("{} has shape ({}): {} values per sample, expected 1..16,777,216", x.name,
                                  fmt::join(x.shape, ", "), d));
    }
    a.feature_count = static_cast<int>(d);
    if (s.size() > 2) a.feature_shape.assign(s.begin() + 1, s.end());
    if (x_rows) {
      a.rows = std::move(x_rows);
    } else if (in_place) {
      a.in_place = x;
      a.mapping = std::move(x_file);
    } else {
      a.features = npy_to_float(x);
    }
  }

  if (y.integral() && y.row_size() == 1) {
    a.labels = npy_to_int64(y);
  } else if (y.integral()) {
    throw DataError(
        fmt::format("{} has shape ({}) of {}: class ids must be one integer per sample; for several "
                    "regression targets store floats",
                    y.name, fmt::join(y.shape, ", "), y.dtype_text()));
  } else {
    a.target_dim = static_cast<int>(y.row_size());
    a.targets = npy_to_float(y);
  }
  return a;
}

std::optional<std::pair<std::string, std::string>> array_pair(const std::vector<std::string>& keys,
                                                              const std::vector<std::string>& suffixes) {
  for (const std::string& suffix : suffixes) {
    const auto x = first_named(keys, kFeatureNames, suffix);
    const auto y = first_named(keys, kTargetNames, suffix);
    if (x && y) return std::make_pair(*x, *y);
  }
  return std::nullopt;
}

std::vector<Split> splits_among(const std::vector<std::string>& keys) {
  std::vector<Split> splits;
  for (const SplitDeclaration& d : split_declarations()) {
    if (d.split == Split::kTrain || array_pair(keys, split_suffixes(d.split))) splits.push_back(d.split);
  }
  return splits;
}

std::string names_looked_for(const std::array<const char*, 6>& names, const std::vector<std::string>& suffixes) {
  std::vector<std::string> marked;
  for (const std::string& suffix : suffixes) {
    if (!suffix.empty()) marked.push_back(suffix);
  }
  const bool plain = std::find(suffixes.begin(), suffixes.end(), "") != suffixes.end();
  if (plain) {
    if (marked.empty()) return fmt::format("{}", fmt::join(names, ", "));
    return fmt::format("{} (or with {})", fmt::join(names, ", "), fmt::join(marked, ", "));
  }
  return fmt::format("{} (with the suffix {})", fmt::join(names, ", "), fmt::join(marked, ", "));
}

std::pair<std::string, std::string> split_hdf5_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return {path, ""};
  for (const char* ext : {".h5:", ".hdf5:"}) {
    const size_t at = path.rfind(ext);
    if (at == std::string::npos) continue;
    const size_t colon = at + std::string_view(ext).size() - 1;
    std::string group = path.substr(colon + 1);
    while (!group.empty() && group.front() == '/') group.erase(group.begin());
    while (!group.empty() && group.back() == '/') group.pop_back();
    return {path.substr(0, colon), group};
  }
  return {path, ""};
}

}  // namespace stoker::data
