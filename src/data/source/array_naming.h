// What .npz archives and HDF5 files share: the names that mark features and targets, the
// train/test suffixes, and turning a feature and a target array into SampleArrays.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "array_source.h"
#include "npy.h"

namespace stoker::data {

inline constexpr std::array<const char*, 6> kFeatureNames{"x",    "X",      "features",
                                                          "data", "inputs", "images"};
inline constexpr std::array<const char*, 6> kTargetNames{"y",       "Y",     "labels",
                                                         "targets", "label", "target"};

// The first of `names` + `suffix` found among `keys`.
std::optional<std::string> first_named(const std::vector<std::string>& keys,
                                       const std::array<const char*, 6>& names,
                                       const std::string& suffix);

// True for the split names that mean the test arrays ("t10k", "test").
bool is_test_split(const std::string& split);

// The name suffixes that mark `split`'s arrays, in the order they are tried: "_test" for a
// test split, else "_train" and then "" (plain names).
std::vector<std::string> split_suffixes(const std::string& split);

// The (features, targets) array names of `split` among `keys`, if both are present, trying
// split_suffixes(split) in order.
std::optional<std::pair<std::string, std::string>> array_pair(const std::vector<std::string>& keys,
                                                              const std::string& split);

// Turns parsed feature and target arrays into SampleArrays: uint8 (N, H, W), (N, H, W, C) and
// (N, C, H, W) features are images, others feature vectors; integral (N,) targets class ids,
// float ones regression targets. Throws DataError naming the arrays.
SampleArrays to_sample_arrays(const NpyArray& x, const NpyArray& y, std::string origin);

}  // namespace stoker::data
