// GeometryRows: keypoints and boxes held in memory, one row of them per sample (with_geometry)
// or per frame of a clip (with_clip_geometry), attached to each read. Internal to the sources.
// Thread safety: immutable once made; attach() from any thread.
#pragma once

#include <cstddef>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::data {

class GeometryRows {
 public:
  // `rows` rows, each of `points_per_row` points (x, y, visible) and `boxes_per_row` boxes (x1,
  // y1, x2, y2, valid), row after row. Throws UsageError naming the counts (`unit`: what a row
  // is, "samples" or "frames") when the values do not fill them exactly.
  GeometryRows(std::vector<float> points, int points_per_row, std::vector<float> boxes, int boxes_per_row, size_t rows,
               const char* unit);

  // Row `row`'s points and boxes into `out`, replacing what it held.
  void attach(size_t row, GeometryTargets* out) const;
  bool has_boxes() const { return box_values_ > 0; }

 private:
  std::vector<float> points_;
  std::vector<float> boxes_;
  size_t point_values_;  // per row
  size_t box_values_;
};

}  // namespace stoker::data
