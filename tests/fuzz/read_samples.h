// What a fuzz target does with a source that opened: what training does with it, for every
// sample (read, targets, name), so that an index the opening accepted is also used.
#pragma once

#include <algorithm>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::fuzz {

inline void read_samples(const data::Source& source) {
  source.describe();
  source.check_class_ids(data::kMaxClasses);
  std::vector<float> targets(static_cast<size_t>(std::max(1, source.target_dim())));
  data::SampleData sample;
  for (size_t i = 0; i < source.size(); ++i) {
    source.name(i);
    source.targets(i, targets.data());
    source.read(i, &sample);
  }
}

}  // namespace stoker::fuzz
