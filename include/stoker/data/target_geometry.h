// stoker/data/target_geometry.h — targets that follow a sample's geometry: keypoints and boxes
// moved by the crop, resize, padding, flips, rotation, affine and perspective its image went
// through, as torchvision.transforms.v2 moves its KeyPoints and BoundingBoxes.
//
// Coordinates are pixels of an image, origin at its top-left corner, x to the right and y
// down; pixel (i, j) covers [i, i + 1) x [j, j + 1), so its centre is (i + 0.5, j + 0.5), and
// the image spans [0, width] x [0, height], its edges included (to a millionth of a pixel).
// A horizontal flip takes x to width - x (torchvision.transforms.v2 takes a KeyPoint's x to
// width - 1 - x, its boxes' to width - x), so a point on an edge stays on the image.
//
// A target can be lost at the source image (past it a padded crop, Pad or BoxCrop shows
// fill), at the output of the crop and resize, and at each warp (RandomRotation, RandomAffine,
// RandomPerspective fill what they take from outside their input), in run order; the flips
// lose nothing. A point is visible while it lies on the image at each of these steps; points
// are never dropped: one that leaves (or was given not visible, or NaN) is marked not visible
// and keeps its coordinates. A box is clipped at each of these steps (as v2's kernels clamp
// at each crop and warp, and albumentations checks each transform): a step moves its four
// corners, and it becomes their enclosing box clipped to the step's image, so what a step cut
// off does not come back with a later warp; one left without area at any step is marked
// invalid. A mask (a label image the size of the sample's image) is resampled to the
// output with nearest: each output pixel's centre is taken back through the steps to the
// source, and the label of the source pixel it falls in is kept; where it falls outside the
// source (padding, a warp's corners) the label is 0.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {

struct GeometryTargets {
  std::vector<float> points;  // P x (x, y, visible): visible is 1 or 0
  std::vector<float> boxes;   // B x (x1, y1, x2, y2, valid): valid is 1 or 0
  // A label image (segmentation mask), row by row, mask_width x mask_height; empty: none.
  std::vector<uint8_t> mask;
  int mask_width = 0, mask_height = 0;
  bool empty() const { return points.empty() && boxes.empty() && mask.empty(); }
  void clear() {
    points.clear();
    boxes.clear();
    mask.clear();
    mask_width = mask_height = 0;
  }
};

// What moves targets besides the image's draws: the pairs of point indices a horizontal flip
// swaps (left and right eye, ...), each index below the points a sample has; and the float
// targets a horizontal flip negates (a head pose's yaw and roll: a mirrored face turns and
// tilts the other way), each index below the source's target_dim.
struct TargetGeometrySpec {
  std::vector<std::pair<int, int>> flip_pairs;
  std::vector<int> flip_negate;
};

// Throws UsageError, naming the transform and what to do, when `spec` holds one that targets
// cannot follow: ElasticTransform and the automatic augmentations (their warps are per pixel
// or drawn per operation).
void check_targets_can_follow(const TransformSpec& spec);

// Throws UsageError, naming the point, for flip pairs a flip cannot swap: a negative index, or
// a point in two pairs (each point swaps with one other; a chain of swaps would move a point
// to a third place). Indices past a sample's points are found by move_targets, which knows
// how many the sample has.
void check_flip_pairs(const TargetGeometrySpec& geometry);

// Why BoxCrop made no crop for a sample of a width x height source holding `targets` (drawn
// as `params`, whose subject is then empty): one line naming the box or the crop and what is
// wrong with it ("BoxCrop's box (10, 20, 10, 50) has no area"); "" when it made one, or the
// chain has no BoxCrop. The loader makes such a sample a bad sample with this reason.
std::string box_crop_problem(const TransformSpec& spec, const SampleParams& params, const GeometryTargets& targets,
                             int width, int height);

// Moves `targets`, given in the pixels of a width x height source, to the output of the
// sample `params` describes (drawn by draw_params for that source). Throws UsageError for a
// flip pair naming a point the sample does not have, and for a mask of another size than the
// source's.
void move_targets(const TransformSpec& spec, const TargetGeometrySpec& geometry, const SampleParams& params, int width,
                  int height, GeometryTargets* targets);

}  // namespace stoker::data
