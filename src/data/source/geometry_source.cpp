// with_geometry: keypoints and boxes held in memory for every sample of another source
// (arrays a script gives, aligned with its samples), attached to each read.
#include <fmt/format.h>

#include <utility>

#include "geometry_rows.h"
#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

GeometryRows::GeometryRows(std::vector<float> points, int points_per_row, std::vector<float> boxes, int boxes_per_row,
                           size_t rows, const char* unit)
    : points_(std::move(points)),
      boxes_(std::move(boxes)),
      point_values_(static_cast<size_t>(points_per_row) * 3),
      box_values_(static_cast<size_t>(boxes_per_row) * 5) {
  if (points_per_row < 0 || points_.size() != rows * point_values_) {
    throw UsageError(fmt::format("keypoints: {} values for {} {} of {} points (x, y, visible) each; give {}",
                                 points_.size(), rows, unit, points_per_row, rows * point_values_));
  }
  if (boxes_per_row < 0 || boxes_.size() != rows * box_values_) {
    throw UsageError(fmt::format("boxes: {} values for {} {} of {} boxes (x1, y1, x2, y2, valid) each; give {}",
                                 boxes_.size(), rows, unit, boxes_per_row, rows * box_values_));
  }
}

void GeometryRows::attach(size_t row, GeometryTargets* out) const {
  const auto points = points_.begin() + static_cast<std::ptrdiff_t>(row * point_values_);
  out->points.assign(points, points + static_cast<std::ptrdiff_t>(point_values_));
  const auto boxes = boxes_.begin() + static_cast<std::ptrdiff_t>(row * box_values_);
  out->boxes.assign(boxes, boxes + static_cast<std::ptrdiff_t>(box_values_));
}

namespace {

class GeometryView final : public SourceView {
 public:
  GeometryView(std::shared_ptr<const Source> inner, GeometryRows rows)
      : SourceView(std::move(inner)), rows_(std::move(rows)) {}

  bool has_geometry() const override { return true; }
  Status read(size_t index, SampleData* out) const override {
    Status status = SourceView::read(index, out);
    rows_.attach(index, &out->geometry);
    return status;
  }

 private:
  GeometryRows rows_;
};

}  // namespace

std::shared_ptr<const Source> with_geometry(std::shared_ptr<const Source> source, std::vector<float> points,
                                            int points_per_sample, std::vector<float> boxes, int boxes_per_sample) {
  GeometryRows rows(std::move(points), points_per_sample, std::move(boxes), boxes_per_sample, source->size(),
                    "samples");
  return std::make_shared<GeometryView>(std::move(source), std::move(rows));
}

}  // namespace stoker::data
