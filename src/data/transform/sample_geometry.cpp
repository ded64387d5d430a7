// Where a sample's output came from in its source, and targets (points, boxes) moved along:
// the geometry its drawn parameters chose, step by step in the order the image runs them
// (sample_transformer.cpp): the crop or resize with its padding and horizontal flip, the
// vertical flip, then RandomRotation, RandomAffine and RandomPerspective (a RandomOrder of
// them in its drawn order).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "data/transform/warp.h"
#include "stoker/core/error.h"
#include "stoker/data/target_geometry.h"
#include "stoker/data/transform.h"

namespace stoker::data {

namespace {

// The inverse of a 2x3 matrix that maps points relative to the image's centre, as a map of
// points with the origin at the top-left corner of a width x height image.
std::array<double, 6> forward_of(const std::array<double, 6>& m, int width, int height) {
  const double det = m[0] * m[4] - m[1] * m[3];
  const double a = m[4] / det, b = -m[1] / det, d = -m[3] / det, e = m[0] / det;
  const double c = -(a * m[2] + b * m[5]), f = -(d * m[2] + e * m[5]);
  const double cx = width / 2.0, cy = height / 2.0;  // p_after = F (p_before - centre) + centre
  return {a, b, c + cx - a * cx - b * cy, d, e, f + cy - d * cx - e * cy};
}

struct Point {
  double x, y;
};

Point apply(const std::array<double, 6>& m, Point p) {
  return {m[0] * p.x + m[1] * p.y + m[2], m[3] * p.x + m[4] * p.y + m[5]};
}

// RandomPerspective's map of an output point before it to the point after it: the inverse of
// the homography its grid samples through (which takes a point after to the point before).
Point apply_perspective(const std::array<float, 8>& c, Point p) {
  // H = [[c0, c1, c2], [c3, c4, c5], [c6, c7, 1]]; its inverse by the adjugate.
  const double h[9] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], 1.0};
  const double inv[9] = {h[4] * h[8] - h[5] * h[7], h[2] * h[7] - h[1] * h[8], h[1] * h[5] - h[2] * h[4],
                         h[5] * h[6] - h[3] * h[8], h[0] * h[8] - h[2] * h[6], h[2] * h[3] - h[0] * h[5],
                         h[3] * h[7] - h[4] * h[6], h[1] * h[6] - h[0] * h[7], h[0] * h[4] - h[1] * h[3]};
  const double w = inv[6] * p.x + inv[7] * p.y + inv[8];
  return {(inv[0] * p.x + inv[1] * p.y + inv[2]) / w, (inv[3] * p.x + inv[4] * p.y + inv[5]) / w};
}

// The warps between the geometry and the write, in the order sample_transformer runs them.
class Warps {
 public:
  Warps(const TransformSpec& spec, const SampleParams& params) : spec_(spec), params_(params) {
    const int w = spec.out_width, h = spec.out_height;
    if (params.rotate) rotation_ = forward_of(inverse_affine(0, 0, -params.angle, 0, 0, 0, 0, 1), w, h);
    if (params.affine) affine_ = affine_forward(params, w, h);
    if (params.perspective) perspective_ = perspective_coeffs(params.corners, w, h);
  }

  Point operator()(Point p) const {
    bool order_done = false;
    for (const Step step : {Step::kRotation, Step::kAffine, Step::kPerspective}) {
      if (spec_.order.has(step)) {  // a RandomOrder: its members at the place of the first, drawn order
        if (order_done) continue;
        order_done = true;
        for (int k = 0; k < params_.order_size; ++k)
          p = run(static_cast<Step>(params_.order[static_cast<size_t>(k)]), p);
        continue;
      }
      p = run(step, p);
    }
    return p;
  }

 private:
  Point run(Step step, Point p) const {
    switch (step) {
      case Step::kRotation:
        return params_.rotate ? apply(rotation_, p) : p;
      case Step::kAffine:
        return params_.affine ? apply(affine_, p) : p;
      case Step::kPerspective:
        return params_.perspective ? apply_perspective(perspective_, p) : p;
      default:
        return p;  // not geometric
    }
  }

  const TransformSpec& spec_;
  const SampleParams& params_;
  std::array<double, 6> rotation_{}, affine_{};
  std::array<float, 8> perspective_{};
};

}  // namespace

CropRect source_box(const TransformSpec& spec, const SampleParams& params, int width, int height) {
  if (!params.copy) return params.crop;  // a box of the source, resampled to the output
  // A 1:1 window of the image padded by spec.pad and then pad_x / pad_y (SampleParams).
  CropRect box = params.crop;
  box.x -= spec.pad.left + params.pad_x;
  box.y -= spec.pad.top + params.pad_y;
  if (params.resized_width > 0) {  // a window of the image resized first: back to source pixels
    const double sx = static_cast<double>(width) / params.resized_width;
    const double sy = static_cast<double>(height) / params.resized_height;
    box = {box.x * sx, box.y * sy, box.width * sx, box.height * sy};
  }
  return box;
}

std::array<double, 6> affine_forward(const SampleParams& params, int out_w, int out_h) {
  if (!params.affine) return {1, 0, 0, 0, 1, 0};
  // The warp's matrix maps an output point to the input, both relative to the image's centre.
  return forward_of(inverse_affine(0, 0, params.affine_angle, params.translate_x, params.translate_y, params.shear_x,
                                   params.shear_y, params.affine_scale),
                    out_w, out_h);
}

void check_targets_can_follow(const TransformSpec& spec) {
  const char* cannot = spec.elastic.enabled()                             ? "ElasticTransform"
                       : spec.auto_augment.kind != AutoAugmentKind::kNone ? "the automatic augmentation"
                                                                          : nullptr;
  if (cannot != nullptr) {
    throw UsageError(
        fmt::format("keypoints and boxes cannot follow {} (its warp is drawn per pixel or per "
                    "operation); leave it out of a chain with geometric targets",
                    cannot));
  }
}

void move_targets(const TransformSpec& spec, const TargetGeometrySpec& geometry, const SampleParams& params, int width,
                  int height, GeometryTargets* targets) {
  const CropRect box = source_box(spec, params, width, height);
  const double out_w = spec.out_width, out_h = spec.out_height;
  const double sx = box.width > 0 ? out_w / box.width : 0, sy = box.height > 0 ? out_h / box.height : 0;
  const Warps warps(spec, params);
  const auto move = [&](double x, double y) {
    Point p{(x - box.x) * sx, (y - box.y) * sy};
    if (params.flip) p.x = out_w - p.x;
    if (params.vflip) p.y = out_h - p.y;
    return warps(p);
  };
  const auto inside = [&](Point p) { return p.x >= 0 && p.x < out_w && p.y >= 0 && p.y < out_h; };

  std::vector<float>& points = targets->points;
  for (size_t k = 0; k + 2 < points.size(); k += 3) {
    const Point p = move(points[k], points[k + 1]);
    points[k] = static_cast<float>(p.x);
    points[k + 1] = static_cast<float>(p.y);
    points[k + 2] = points[k + 2] != 0 && inside(p) ? 1.0f : 0.0f;
  }
  if (params.flip && !geometry.flip_pairs.empty()) {
    const auto count = static_cast<int>(points.size() / 3);
    for (const auto& [a, b] : geometry.flip_pairs) {
      if (a < 0 || b < 0 || a >= count || b >= count) {
        throw UsageError(fmt::format("flip_pairs names point {} and the sample has {} points (0 to {})",
                                     a < 0 || a >= count ? a : b, count, count - 1));
      }
      for (int c = 0; c < 3; ++c)
        std::swap(points[static_cast<size_t>(3 * a + c)], points[static_cast<size_t>(3 * b + c)]);
    }
  }

  std::vector<float>& boxes = targets->boxes;
  for (size_t k = 0; k + 4 < boxes.size(); k += 5) {
    const double x1 = boxes[k], y1 = boxes[k + 1], x2 = boxes[k + 2], y2 = boxes[k + 3];
    constexpr double kInf = std::numeric_limits<double>::infinity();
    double left = kInf, top = kInf, right = -kInf, bottom = -kInf;
    for (const Point corner : {Point{x1, y1}, Point{x2, y1}, Point{x1, y2}, Point{x2, y2}}) {
      const Point p = move(corner.x, corner.y);
      left = std::min(left, p.x);
      right = std::max(right, p.x);
      top = std::min(top, p.y);
      bottom = std::max(bottom, p.y);
    }
    left = std::clamp(left, 0.0, out_w), right = std::clamp(right, 0.0, out_w);
    top = std::clamp(top, 0.0, out_h), bottom = std::clamp(bottom, 0.0, out_h);
    boxes[k] = static_cast<float>(left);
    boxes[k + 1] = static_cast<float>(top);
    boxes[k + 2] = static_cast<float>(right);
    boxes[k + 3] = static_cast<float>(bottom);
    boxes[k + 4] = boxes[k + 4] != 0 && right > left && bottom > top ? 1.0f : 0.0f;
  }
}

}  // namespace stoker::data
