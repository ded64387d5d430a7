// The largest absolute difference between two networks' parameters, in order (same
// architecture): how the torch tests say "these weights are the same".
#pragma once

#include <algorithm>

#include "train/torch/model/models.h"

namespace stoker::testing {

inline double max_difference(train::Network& a, train::Network& b) {
  double worst = 0;
  const auto pa = a.parameters(), pb = b.parameters();
  for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, (pa[i] - pb[i]).abs().max().item<double>());
  return worst;
}

}  // namespace stoker::testing
