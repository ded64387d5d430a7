// Small checks shared by the tests of data sources.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::testing {

inline void expect_has(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << text;
}

// The feature vector of sample `index` (a source holding feature vectors); fails the test
// when the read fails or the sample's feature count differs from the source's.
inline std::vector<float> features_of(const data::Source& source, size_t index) {
  data::SampleData sample;
  EXPECT_TRUE(source.read(index, &sample).ok());
  EXPECT_EQ(sample.feature_count, source.feature_count());
  std::vector<float> values(static_cast<size_t>(sample.feature_count));  // the row may lie at any address
  std::memcpy(values.data(), sample.bytes.data(), std::min(sample.bytes.size(), values.size() * sizeof(float)));
  return values;
}

// The target_dim() float targets of sample `index`.
inline std::vector<float> targets_of(const data::Source& source, size_t index) {
  std::vector<float> targets(static_cast<size_t>(source.target_dim()));
  source.targets(index, targets.data());
  return targets;
}

}  // namespace stoker::testing
