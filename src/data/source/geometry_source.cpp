// with_geometry: keypoints and boxes held in memory for every sample of another source
// (arrays a script gives, aligned with its samples), attached to each read.
#include <fmt/format.h>

#include <utility>

#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

class GeometryView final : public SourceView {
 public:
  GeometryView(std::shared_ptr<const Source> inner, std::vector<float> points, int points_per_sample,
               std::vector<float> boxes, int boxes_per_sample)
      : SourceView(std::move(inner)),
        points_(std::move(points)),
        boxes_(std::move(boxes)),
        point_values_(static_cast<size_t>(points_per_sample) * 3),
        box_values_(static_cast<size_t>(boxes_per_sample) * 5) {}

  bool has_geometry() const override { return true; }
  Status read(size_t index, SampleData* out) const override {
    Status status = SourceView::read(index, out);
    const auto points = points_.begin() + static_cast<std::ptrdiff_t>(index * point_values_);
    out->geometry.points.assign(points, points + static_cast<std::ptrdiff_t>(point_values_));
    const auto boxes = boxes_.begin() + static_cast<std::ptrdiff_t>(index * box_values_);
    out->geometry.boxes.assign(boxes, boxes + static_cast<std::ptrdiff_t>(box_values_));
    return status;
  }

 private:
  std::vector<float> points_;
  std::vector<float> boxes_;
  size_t point_values_;
  size_t box_values_;
};

}  // namespace

std::shared_ptr<const Source> with_geometry(std::shared_ptr<const Source> source, std::vector<float> points,
                                            int points_per_sample, std::vector<float> boxes, int boxes_per_sample) {
  const size_t n = source->size();
  if (points_per_sample < 0 || points.size() != n * static_cast<size_t>(points_per_sample) * 3) {
    throw UsageError(fmt::format("keypoints: {} values for {} samples of {} points (x, y, visible) each; give {}",
                                 points.size(), n, points_per_sample, n * static_cast<size_t>(points_per_sample) * 3));
  }
  if (boxes_per_sample < 0 || boxes.size() != n * static_cast<size_t>(boxes_per_sample) * 5) {
    throw UsageError(fmt::format("boxes: {} values for {} samples of {} boxes (x1, y1, x2, y2, valid) each; give {}",
                                 boxes.size(), n, boxes_per_sample, n * static_cast<size_t>(boxes_per_sample) * 5));
  }
  return std::make_shared<GeometryView>(std::move(source), std::move(points), points_per_sample, std::move(boxes),
                                        boxes_per_sample);
}

}  // namespace stoker::data
