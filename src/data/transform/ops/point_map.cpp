// The maps of output points the geometric transforms give the targets (point_map.h).
#include "point_map.h"

#include <algorithm>

namespace stoker::data::ops {

PointMap PointMap::mirror_x(int size) {
  PointMap map;
  map.kind_ = Kind::kMirrorX;
  map.forward_[0] = map.back_[0] = size;
  return map;
}

PointMap PointMap::mirror_y(int size) {
  PointMap map;
  map.kind_ = Kind::kMirrorY;
  map.forward_[0] = map.back_[0] = size;
  return map;
}

PointMap PointMap::affine(const std::array<double, 6>& forward, const std::array<double, 6>& back, bool fills) {
  PointMap map;
  map.kind_ = Kind::kAffine;
  map.fills_ = fills;
  std::copy(forward.begin(), forward.end(), map.forward_.begin());
  std::copy(back.begin(), back.end(), map.back_.begin());
  return map;
}

PointMap PointMap::projective(const std::array<double, 9>& forward, const std::array<double, 9>& back) {
  PointMap map;
  map.kind_ = Kind::kProjective;
  map.fills_ = true;
  map.forward_ = forward;
  map.back_ = back;
  return map;
}

Point PointMap::apply(const std::array<double, 9>& m, Point p) const {
  switch (kind_) {
    case Kind::kMirrorX:
      return {m[0] - p.x, p.y};
    case Kind::kMirrorY:
      return {p.x, m[0] - p.y};
    case Kind::kAffine:
      return {m[0] * p.x + m[1] * p.y + m[2], m[3] * p.x + m[4] * p.y + m[5]};
    case Kind::kProjective: {
      const double w = m[6] * p.x + m[7] * p.y + m[8];
      return {(m[0] * p.x + m[1] * p.y + m[2]) / w, (m[3] * p.x + m[4] * p.y + m[5]) / w};
    }
    case Kind::kIdentity:
      break;
  }
  return p;
}

std::array<double, 6> forward_of(const std::array<double, 6>& m, int width, int height) {
  const double det = m[0] * m[4] - m[1] * m[3];
  const double a = m[4] / det, b = -m[1] / det, d = -m[3] / det, e = m[0] / det;
  const double c = -(a * m[2] + b * m[5]), f = -(d * m[2] + e * m[5]);
  const double cx = width / 2.0, cy = height / 2.0;  // p_after = F (p_before - centre) + centre
  return {a, b, c + cx - a * cx - b * cy, d, e, f + cy - d * cx - e * cy};
}

std::array<double, 6> at_corner(const std::array<double, 6>& m, int width, int height) {
  const double cx = width / 2.0, cy = height / 2.0;  // p' = M (p - centre) + centre
  return {m[0], m[1], m[2] + cx - m[0] * cx - m[1] * cy, m[3], m[4], m[5] + cy - m[3] * cx - m[4] * cy};
}

PointMap sampled_through(const std::array<double, 6>& m, int width, int height) {
  return PointMap::affine(forward_of(m, width, height), at_corner(m, width, height), true);
}

}  // namespace stoker::data::ops
