// with_clip_geometry: a row of keypoints and boxes per frame of every clip of a path's source.
#include "stoker/data/clip_geometry.h"

#include <fmt/format.h>

#include <span>
#include <utility>

#include "geometry_rows.h"
#include "source_view.h"
#include "stoker/core/error.h"

namespace stoker::data {

namespace {

class ClipGeometryView final : public SourceView {
 public:
  ClipGeometryView(std::shared_ptr<const Source> inner, GeometryRows rows, std::vector<size_t> first_row)
      : SourceView(std::move(inner)), rows_(std::move(rows)), first_row_(std::move(first_row)) {}

  bool has_geometry() const override { return true; }
  Status read(size_t index, SampleData* out) const override {
    Status status = SourceView::read(index, out);
    rows_.attach(first_row_[index], &out->geometry);
    return status;
  }
  Status read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    int count = 0;
    std::span<const int> chosen;  // valid until the read returns
    const FramePicker picking = [&](int n) {
      count = n;
      chosen = pick(n);
      return chosen;
    };
    Status status = SourceView::read_clip(index, picking, frames);
    if (!status.ok()) return status;
    const size_t rows = first_row_[index + 1] - first_row_[index];
    if (static_cast<size_t>(count) != rows) {
      return Status::failure(clip_rows_refusal(shown_name(index), rows_.has_boxes() ? "boxes" : "keypoints", rows,
                                               static_cast<size_t>(count)));
    }
    for (size_t k = 0; k < chosen.size() && k < frames->size(); ++k) {
      rows_.attach(first_row_[index] + static_cast<size_t>(chosen[k]), &(*frames)[k].geometry);
    }
    return status;
  }

 private:
  GeometryRows rows_;
  std::vector<size_t> first_row_;
};

}  // namespace

std::shared_ptr<const Source> with_clip_geometry(std::shared_ptr<const Source> source, std::vector<float> points,
                                                 int points_per_frame, std::vector<float> boxes, int boxes_per_frame,
                                                 std::vector<size_t> first_row) {
  if (!source->holds_clips()) throw UsageError("with_clip_geometry: " + source->describe() + " holds no clips");
  const size_t n = source->size();
  if (first_row.size() != n + 1 || first_row.front() != 0) {
    throw UsageError(
        fmt::format("with_clip_geometry: {} first rows for {} clips; give {}, from 0", first_row.size(), n, n + 1));
  }
  for (size_t i = 0; i < n; ++i) {
    if (first_row[i + 1] < first_row[i]) throw UsageError("with_clip_geometry: the first rows must not decrease");
  }
  GeometryRows rows(std::move(points), points_per_frame, std::move(boxes), boxes_per_frame, first_row.back(), "frames");
  return std::make_shared<ClipGeometryView>(std::move(source), std::move(rows), std::move(first_row));
}

std::vector<std::string> clip_frame_names(const Source& source, size_t index) {
  int count = 0;
  std::vector<SampleData> none;
  const Status status = source.read_clip(
      index,
      [&count](int n) {
        count = n;
        return std::span<const int>();
      },
      &none);
  if (!status.ok()) throw DataError(fmt::format("the frames of {}: {}", source.name(index), status.reason()));
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) names.push_back(source.frame_name(index, k));
  return names;
}

std::string clip_rows_refusal(const std::string& at, const std::string& what, size_t rows, size_t frames) {
  const bool boxes = what.find("oxes") != std::string::npos;
  return fmt::format("{} holds {} of {} rows beside its clip of {} frames; give one row per frame, {} with T = {}", at,
                     what, rows, frames, boxes ? "(T, 4)" : "(T, P, 2) or (T, P, 3)", frames);
}

std::string clip_points_refusal(const std::string& at, size_t points, size_t frames) {
  return fmt::format(
      "{} holds stoker.Keypoints of {} points beside its clip of {} frames; give each frame's points, (T, P, 2) or "
      "(T, P, 3) with T = {}",
      at, points, frames, frames);
}

std::string clip_mask_refusal(const std::string& at) {
  return at +
         " holds a stoker.Mask beside its clip, and masks follow single images only; read the frames as single "
         "images with their masks (no frames_per_clip), give the clip stoker.Boxes (T, 4) or stoker.Keypoints "
         "(T, P, 2), or leave the mask out";
}

}  // namespace stoker::data
