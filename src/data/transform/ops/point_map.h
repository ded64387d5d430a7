// How a geometric transform moves the points of a sample's output, for the targets that follow
// the image (stoker/data/target_geometry.h): each such entry's point_map (registry.h) gives one
// for the sample, forward (a point before the transform to where it lands) and back (a point
// after it to the point it samples). Coordinates are output pixels, origin at the top-left
// corner. The flips are fused into the geometry and do not fill; the warps after them fill
// what they take from outside the image (a mask is 0 there).
//
// Thread safety: values; pure functions. Errors: none.
#pragma once

#include <array>

namespace stoker::data::ops {

struct Point {
  double x, y;
};

class PointMap {
 public:
  PointMap() = default;  // the identity: the transform did not run for the sample
  // A flip of a `size`-pixel axis, x (or y) to size - x, either way; does not fill.
  static PointMap mirror_x(int size);
  static PointMap mirror_y(int size);
  // A 2x3 matrix each way, row by row: p' = M (x, y, 1).
  static PointMap affine(const std::array<double, 6>& forward, const std::array<double, 6>& back, bool fills);
  // A homography each way, row by row, (x, y) divided by the third coordinate; fills.
  static PointMap projective(const std::array<double, 9>& forward, const std::array<double, 9>& back);

  bool identity() const { return kind_ == Kind::kIdentity; }
  bool fills() const { return fills_; }
  Point forward(Point p) const { return apply(forward_, p); }
  Point back(Point p) const { return apply(back_, p); }

 private:
  enum class Kind { kIdentity, kMirrorX, kMirrorY, kAffine, kProjective };
  Point apply(const std::array<double, 9>& m, Point p) const;

  Kind kind_ = Kind::kIdentity;
  bool fills_ = false;
  std::array<double, 9> forward_{}, back_{};  // a mirror: its size in [0]
};

// The inverse of a 2x3 matrix that maps points relative to the image's centre, as a map of
// points with the origin at the top-left corner of a width x height image.
std::array<double, 6> forward_of(const std::array<double, 6>& m, int width, int height);
// A 2x3 matrix that maps points relative to the image's centre, as a map of points with the
// origin at the top-left corner of a width x height image.
std::array<double, 6> at_corner(const std::array<double, 6>& m, int width, int height);
// The map of a warp that samples through `m` (inverse_affine's matrix, relative to the
// centre of the width x height output): forward its inverse, back `m` itself; fills.
PointMap sampled_through(const std::array<double, 6>& m, int width, int height);

}  // namespace stoker::data::ops
