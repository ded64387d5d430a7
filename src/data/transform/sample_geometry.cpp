// Where a sample's output came from in its source, and targets (points, boxes, masks) moved
// along: the geometry its drawn parameters chose (the crop or resize with its padding), then
// each transform's map of output points (TransformOp::point_map: the flips, then the warps,
// RandomRotation, RandomAffine and RandomPerspective, a RandomOrder of them in its drawn order)
// in the order the image runs them.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "data/transform/ops/point_map.h"
#include "data/transform/ops/registry.h"
#include "data/transform/warp.h"
#include "stoker/core/error.h"
#include "stoker/data/target_geometry.h"
#include "stoker/data/transform.h"

namespace stoker::data {

namespace {

using ops::Point;
using ops::PointMap;

// The transforms' maps of output points for a sample, in run order: those fused into the
// geometry (the flips), then the warps, which fill what they take from outside the image (the
// registry runs every flip before every warp).
class PointMaps {
 public:
  PointMaps(const TransformSpec& spec, const SampleParams& params) {
    ops::for_each_in_run_order(spec, params, [&](const ops::TransformOp& op, const Step* /*step*/) {
      if (op.point_map == nullptr) return;
      const PointMap map = op.point_map(spec, params);
      if (!map.identity()) (map.fills() ? warps_ : flips_).push_back(map);
    });
  }

  // A point of the output before the flips, moved through every map, and whether it is on the
  // image after every map: inside the canvas at each warp's input (a warp fills what it takes
  // from outside, so a point the crop left out is not on the image wherever a warp then puts
  // it) and at the end.
  template <typename Inside>
  Point operator()(Point p, const Inside& inside, bool* on_image) const {
    for (const PointMap& map : flips_) p = map.forward(p);
    for (const PointMap& map : warps_) {
      if (!inside(p)) *on_image = false;
      p = map.forward(p);
    }
    if (!inside(p)) *on_image = false;
    return p;
  }
  // A point of the output after the warps, taken back through them: what each warp samples.
  Point back_through_warps(Point p) const {
    for (auto map = warps_.rbegin(); map != warps_.rend(); ++map) p = map->back(p);
    return p;
  }
  // A point taken back through the flips.
  Point back_through_flips(Point p) const {
    for (auto map = flips_.rbegin(); map != flips_.rend(); ++map) p = map->back(p);
    return p;
  }
  const std::vector<PointMap>& flips() const { return flips_; }
  const std::vector<PointMap>& warps() const { return warps_; }

 private:
  std::vector<PointMap> flips_, warps_;
};

// An axis-aligned box; it has area where right > left and bottom > top.
struct Box {
  double left, top, right, bottom;
};

// The box enclosing `b`'s four corners moved by `move`.
template <typename Move>
Box enclosing(const Box& b, const Move& move) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Box out{kInf, kInf, -kInf, -kInf};
  for (const Point corner :
       {Point{b.left, b.top}, Point{b.right, b.top}, Point{b.left, b.bottom}, Point{b.right, b.bottom}}) {
    const Point p = move(corner);
    out = {std::min(out.left, p.x), std::min(out.top, p.y), std::max(out.right, p.x), std::max(out.bottom, p.y)};
  }
  return out;
}

// The mask resampled to the output with nearest: each output pixel's centre taken back
// through the warps, the flips and the crop to the source pixel it falls in; 0 where it falls
// outside the cropped image before the warps (they fill there) or outside the source.
void move_mask(const CropRect& box, const PointMaps& maps, int out_w, int out_h, int width, int height,
               GeometryTargets* targets) {
  if (targets->mask_width != width || targets->mask_height != height) {
    throw UsageError(fmt::format("the mask is {}x{} and its image {}x{}; a mask is the size of its image",
                                 targets->mask_width, targets->mask_height, width, height));
  }
  std::vector<uint8_t> moved(static_cast<size_t>(out_w) * static_cast<size_t>(out_h), 0);
  const double sx = box.width / out_w, sy = box.height / out_h;
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      Point p = maps.back_through_warps({x + 0.5, y + 0.5});
      if (p.x < 0 || p.y < 0 || p.x >= out_w || p.y >= out_h) continue;  // the warps' fill: outside the crop
      p = maps.back_through_flips(p);
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
  // In the pixels of the image the geometry takes (BoxCrop's crop, if any), then the source's.
  const auto [image_w, image_h] = geometry_input_size(params, width, height);
  CropRect box = params.crop;  // a box of the image, resampled to the output
  if (params.copy) {
    // A 1:1 window of the image padded by spec.pad and then pad_x / pad_y (SampleParams).
    box.x -= spec.pad.left + params.pad_x;
    box.y -= spec.pad.top + params.pad_y;
    if (params.resized_width > 0) {  // a window of the image resized first: back to its pixels
      const double sx = static_cast<double>(image_w) / params.resized_width;
      const double sy = static_cast<double>(image_h) / params.resized_height;
      box = {box.x * sx, box.y * sy, box.width * sx, box.height * sy};
    }
  }
  box.x += params.subject.x;
  box.y += params.subject.y;
  return box;
}

std::array<double, 6> affine_forward(const SampleParams& params, int out_w, int out_h) {
  if (!params.affine) return {1, 0, 0, 0, 1, 0};
  // The warp's matrix maps an output point to the input, both relative to the image's centre.
  return ops::forward_of(inverse_affine(0, 0, params.affine_angle, params.translate_x, params.translate_y,
                                        params.shear_x, params.shear_y, params.affine_scale),
                         out_w, out_h);
}

void check_targets_can_follow(const TransformSpec& spec) {
  for (const ops::TransformOp* op : ops::registry()) {
    const char* cannot = op->refuses_targets != nullptr ? op->refuses_targets(spec) : nullptr;
    if (cannot != nullptr) {
      throw UsageError(
          fmt::format("keypoints and boxes cannot follow {} (its warp is drawn per pixel or per "
                      "operation); leave it out of a chain with geometric targets",
                      cannot));
    }
  }
}

void check_flip_pairs(const TargetGeometrySpec& geometry) {
  std::map<int, std::pair<int, int>> pair_of;  // each point named so far, and its pair
  for (const auto& pair : geometry.flip_pairs) {
    for (const int point : {pair.first, pair.second}) {
      if (point < 0) throw UsageError(fmt::format("flip_pairs names point {}; points are numbered from 0", point));
      const auto [named, first] = pair_of.emplace(point, pair);
      if (!first && pair.first != pair.second) {  // (p, p) names p twice and leaves it where it is
        throw UsageError(fmt::format(
            "flip_pairs names point {} in two pairs, ({}, {}) and ({}, {}); a flip swaps each point with one other",
            point, named->second.first, named->second.second, pair.first, pair.second));
      }
    }
  }
}

void move_targets(const TransformSpec& spec, const TargetGeometrySpec& geometry, const SampleParams& params, int width,
                  int height, GeometryTargets* targets) {
  const CropRect box = source_box(spec, params, width, height);
  const double out_w = spec.out_width, out_h = spec.out_height;
  const double sx = box.width > 0 ? out_w / box.width : 0, sy = box.height > 0 ? out_h / box.height : 0;
  const PointMaps maps(spec, params);
  const auto to_output = [&](Point p) { return Point{(p.x - box.x) * sx, (p.y - box.y) * sy}; };
  // On the image, its edges included (target_geometry.h), give or take a millionth of a pixel:
  // a quarter turn's cosine is not exactly 0 in floating point.
  constexpr double kEdge = 1e-6;
  const auto on = [](Point p, double w, double h) {
    return p.x >= -kEdge && p.x <= w + kEdge && p.y >= -kEdge && p.y <= h + kEdge;
  };
  const auto inside = [&](Point p) { return on(p, out_w, out_h); };

  // A point is visible while on the image at each step that can lose it: the source, each
  // warp's input and the output.
  std::vector<float>& points = targets->points;
  for (size_t k = 0; k + 2 < points.size(); k += 3) {
    const Point given{points[k], points[k + 1]};
    bool on_image = points[k + 2] != 0 && on(given, width, height);
    const Point p = maps(to_output(given), inside, &on_image);
    // A visible point lies on the output, [0, width] x [0, height], exactly.
    points[k] = static_cast<float>(on_image ? std::clamp(p.x, 0.0, out_w) : p.x);
    points[k + 1] = static_cast<float>(on_image ? std::clamp(p.y, 0.0, out_h) : p.y);
    points[k + 2] = on_image ? 1.0f : 0.0f;
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

  if (!targets->mask.empty()) move_mask(box, maps, spec.out_width, spec.out_height, width, height, targets);

  // A box is clipped at the same steps (the flips cannot lose any of it); invalid once left
  // without area at one.
  std::vector<float>& boxes = targets->boxes;
  for (size_t k = 0; k + 4 < boxes.size(); k += 5) {
    bool valid = boxes[k + 4] != 0;
    const auto clip = [&valid](Box b, double w, double h) {
      b = {std::clamp(b.left, 0.0, w), std::clamp(b.top, 0.0, h), std::clamp(b.right, 0.0, w),
           std::clamp(b.bottom, 0.0, h)};
      valid = valid && b.right > b.left && b.bottom > b.top;
      return b;
    };
    Box b = clip(enclosing(Box{boxes[k], boxes[k + 1], boxes[k + 2], boxes[k + 3]}, [](Point p) { return p; }), width,
                 height);
    b = clip(enclosing(b, to_output), out_w, out_h);
    for (const PointMap& flip : maps.flips()) b = enclosing(b, [&](Point p) { return flip.forward(p); });
    for (const PointMap& warp : maps.warps())
      b = clip(enclosing(b, [&](Point p) { return warp.forward(p); }), out_w, out_h);
    boxes[k] = static_cast<float>(b.left);
    boxes[k + 1] = static_cast<float>(b.top);
    boxes[k + 2] = static_cast<float>(b.right);
    boxes[k + 3] = static_cast<float>(b.bottom);
    boxes[k + 4] = valid ? 1.0f : 0.0f;
  }
}

}  // namespace stoker::data
