// What .npz archives and HDF5 files share: the names that mark features and targets, the
// split suffixes (split.h), and turning a feature and a target array into SampleArrays.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "array_source.h"
#include "npy.h"
#include "row_reader.h"
#include "stoker/data/split.h"

namespace stoker::data {

inline constexpr std::array<const char*, 6> kFeatureNames{"x", "X", "features", "data", "inputs", "images"};
inline constexpr std::array<const char*, 6> kTargetNames{"y", "Y", "labels", "targets", "label", "target"};

// The first of `names` + `suffix` found among `keys`.
std::optional<std::string> first_named(const std::vector<std::string>& keys, const std::array<const char*, 6>& names,
                                       const std::string& suffix);

// The (features, targets) array names among `keys` for the first of `suffixes` under which
// both are present.
std::optional<std::pair<std::string, std::string>> array_pair(const std::vector<std::string>& keys,
                                                              const std::vector<std::string>& suffixes);

// The user splits (split.h) whose (features, targets) pair is among `keys`: kTrain always,
// then kVal and kTest where their suffixes name one.
std::vector<Split> splits_among(const std::vector<std::string>& keys);

// The names looked for under `suffixes`, for messages: "x, X, features, data, inputs, images
// (or with _train)".
std::string names_looked_for(const std::array<const char*, 6>& names, const std::vector<std::string>& suffixes);

// "feats.h5:train/emb" -> {"feats.h5", "train/emb"}: an HDF5 file and a group in it (no
// leading or trailing '/'). A path that exists, or has no ".h5:"/".hdf5:", is all file.
std::pair<std::string, std::string> split_hdf5_path(const std::string& path);

// Turns parsed feature and target arrays into SampleArrays: uint8 (N, H, W), (N, H, W, C) and
// (N, C, H, W) features are images, others feature vectors; integral (N,) targets class ids,
// float ones regression targets. With `x_file` (the map `x.data` views), C-ordered features
// and channels-last images are read in place instead of copied. With `x_rows` (then `x` is its
// layout, `data` empty), they are read through it row by row as the loader asks (channels-first
// images, which are transposed, are read through it at once). Throws DataError naming the
// arrays.
SampleArrays to_sample_arrays(const NpyArray& x, const NpyArray& y, std::string origin,
                              std::shared_ptr<const MappedFile> x_file = nullptr,
                              std::shared_ptr<const RowReader> x_rows = nullptr);

// Throws DataError naming both arrays unless `x` (features) and `y` (targets) have one row per
// sample each. Headers suffice (parse_npy_header): to_sample_arrays checks this too.
void check_one_row_per_sample(const NpyArray& x, const NpyArray& y);

}  // namespace stoker::data
