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
#include <vector>

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

// A 2x3 matrix that maps points relative to the image's centre, as a map of points with the
// origin at the top-left corner of a width x height image.
std::array<double, 6> at_corner(const std::array<double, 6>& m, int width, int height) {
  const double cx = width / 2.0, cy = height / 2.0;  // p' = M (p - centre) + centre
  return {m[0], m[1], m[2] + cx - m[0] * cx - m[1] * cy, m[3], m[4], m[5] + cy - m[3] * cx - m[4] * cy};
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
  Warps(const TransformSpec& spec, const SampleParams& params) : params_(params) {
    const int w = spec.out_width, h = spec.out_height;
    if (params.rotate) {  // F.rotate passes -angle to the matrix
      const auto m = inverse_affine(0, 0, -params.angle, 0, 0, 0, 0, 1);
      rotation_ = forward_of(m, w, h);
      rotation_back_ = at_corner(m, w, h);
    }
    if (params.affine) {
      const auto m = inverse_affine(0, 0, params.affine_angle, params.translate_x, params.translate_y, params.shear_x,
                                    params.shear_y, params.affine_scale);
      affine_ = forward_of(m, w, h);
      affine_back_ = at_corner(m, w, h);
    }
    if (params.perspective) perspective_ = perspective_coeffs(params.corners, w, h);
    bool order_done = false;  // a RandomOrder: its members at the place of the first, in the drawn order
    for (const Step step : {Step::kRotation, Step::kAffine, Step::kPerspective}) {
      if (!spec.order.has(step)) {
        steps_.push_back(step);
      } else if (!order_done) {
        order_done = true;
        for (int k = 0; k < params.order_size; ++k)
          steps_.push_back(static_cast<Step>(params.order[static_cast<size_t>(k)]));
      }
    }
  }

  // A point of the output before the warps, moved through them.
  Point operator()(Point p) const {
    for (const Step step : steps_) p = run(step, p);
    return p;
  }
  // A point of the output after the warps, taken back through them: what each warp samples.
  Point back(Point p) const {
    for (auto step = steps_.rbegin(); step != steps_.rend(); ++step) p = run_back(*step, p);
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

  Point run_back(Step step, Point p) const {
    switch (step) {
      case Step::kRotation:
        return params_.rotate ? apply(rotation_back_, p) : p;
      case Step::kAffine:
        return params_.affine ? apply(affine_back_, p) : p;
      case Step::kPerspective: {
        if (!params_.perspective) return p;
        const auto& c = perspective_;  // the homography from a point after to the point before
        const double w = c[6] * p.x + c[7] * p.y + 1.0;
        return {(c[0] * p.x + c[1] * p.y + c[2]) / w, (c[3] * p.x + c[4] * p.y + c[5]) / w};
      }
      default:
        return p;
    }
  }

  const SampleParams& params_;
  std::vector<Step> steps_;
  std::array<double, 6> rotation_{}, affine_{}, rotation_back_{}, affine_back_{};
  std::array<float, 8> perspective_{};
};

// The mask resampled to the output with nearest: each output pixel's centre taken back
// through the warps, the flips and the crop to the source pixel it falls in; 0 where it falls
// outside the cropped image before the warps (they fill there) or outside the source.
void move_mask(const CropRect& box, const Warps& warps, const SampleParams& params, int out_w, int out_h, int width,
               int height, GeometryTargets* targets) {
  if (targets->mask_width != width || targets->mask_height != height) {
    throw UsageError(fmt::format("the mask is {}x{} and its image {}x{}; a mask is the size of its image",
                                 targets->mask_width, targets->mask_height, width, height));
  }
  std::vector<uint8_t> moved(static_cast<size_t>(out_w) * static_cast<size_t>(out_h), 0);
  const double sx = box.width / out_w, sy = box.height / out_h;
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      Point p = warps.back({x + 0.5, y + 0.5});
      if (p.x < 0 || p.y < 0 || p.x >= out_w || p.y >= out_h) continue;  // the warps' fill: outside the crop
      if (params.vflip) p.y = out_h - p.y;
      if (params.flip) p.x = out_w - p.x;
      const double u = std::floor(box.x + p.x * sx), v = std::floor(box.y + p.y * sy);
      if (u < 0 || v < 0 || u >= width || v >= height) continue;
      moved[static_cast<size_t>(y) * static_cast<size_t>(out_w) + static_cast<size_t>(x)] =
          targets->mask[static_cast<size_t>(v) * static_cast<size_t>(width) + static_cast<size_t>(u)];
    }
  }
  targets->mask = std::move(moved);
  targets->mask_width = out_w;
  targets->mask_height = out_h;
}

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

  if (!targets->mask.empty()) move_mask(box, warps, params, spec.out_width, spec.out_height, width, height, targets);

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
