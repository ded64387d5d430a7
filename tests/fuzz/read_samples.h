// What a fuzz target does with a source that opened: what training does with it, for every
// sample (read, targets, name, the cells of a list's other columns, a clip's first, middle and
// last frames and their names), so that an index the opening accepted is also used.
#pragma once

#include <algorithm>
#include <span>
#include <string_view>
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
    source.shown_name(i);
    source.targets(i, targets.data());
    source.read(i, &sample);
    if (const data::SourceColumns* columns = source.columns(); columns != nullptr && sample.extra) {
      size_t bytes = 0;  // every cell's bytes, read: an out-of-bounds view shows under ASan
      const std::string_view* cells = data::extra_cells(sample.extra);
      for (size_t c = 0; c < columns->extra.size(); ++c) {
        for (char ch : cells[c]) bytes += static_cast<unsigned char>(ch) != 0 ? 1 : 0;
      }
      (void)bytes;
    }
    if (source.holds_clips()) {
      std::vector<int> chosen;
      std::vector<data::SampleData> frames;
      source.read_clip(
          i,
          [&chosen](int count) {
            chosen = {0, count / 2, count - 1};
            return std::span<const int>(chosen);
          },
          &frames);
      for (const int k : chosen) source.frame_name(i, k);
    }
  }
}

}  // namespace stoker::fuzz
