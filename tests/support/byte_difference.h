// How one byte buffer differs from a stretch of another: for tests that hold stoker's pixels
// to a reference implementation's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace stoker::testing {

struct ByteDifference {
  int differing = 0;  // elements that are not equal
  int worst = 0;      // the largest absolute difference
  double share = 0;   // differing / size
};

// `ours` against theirs[offset, offset + ours.size()), which must be in range.
inline ByteDifference byte_difference(const std::vector<uint8_t>& ours, const std::vector<uint8_t>& theirs,
                                      size_t offset) {
  ByteDifference d;
  for (size_t i = 0; i < ours.size(); ++i) {
    const int delta = std::abs(static_cast<int>(ours[i]) - theirs[offset + i]);
    d.differing += delta != 0;
    d.worst = std::max(d.worst, delta);
  }
  d.share = ours.empty() ? 0 : static_cast<double>(d.differing) / static_cast<double>(ours.size());
  return d;
}

}  // namespace stoker::testing
