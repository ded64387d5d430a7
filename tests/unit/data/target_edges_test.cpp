// Keypoints and boxes at the edges of the image, against references computed here from
// torchvision's formulas (continuous coordinates: pixel i covers [i, i + 1), so the image
// spans [0, W] and a flip takes x to W - x): landmarks at x = 0, W - 1 and W through each
// transform that moves points, a point that a padded crop puts on the padding, and boxes that
// a step cuts and a later warp would bring back.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/target_geometry.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {
namespace target_edges {

struct Moved {
  double x, y;
  bool visible;
};

// Each (x, y) of a width x height source, visible, moved through `chain` as drawn for seed 1
// (with `edit` applied to the draw).
template <typename Edit>
std::vector<Moved> moved(const std::string& chain, int width, int height, const std::vector<std::array<double, 2>>& xy,
                         Edit edit) {
  const TransformSpec spec = parse_transforms(chain);
  SampleRng rng(1, 0, 0);
  SampleParams params = draw_params(spec, width, height, rng);
  edit(params);
  GeometryTargets targets;
  for (const auto& [x, y] : xy)
    targets.points.insert(targets.points.end(), {static_cast<float>(x), static_cast<float>(y), 1});
  move_targets(spec, {}, params, width, height, &targets);
  std::vector<Moved> out;
  for (size_t k = 0; k < targets.points.size(); k += 3)
    out.push_back({targets.points[k], targets.points[k + 1], targets.points[k + 2] != 0});
  return out;
}
std::vector<Moved> moved(const std::string& chain, int width, int height,
                         const std::vector<std::array<double, 2>>& xy) {
  return moved(chain, width, height, xy, [](SampleParams&) {});
}

void expect_moved(const std::vector<Moved>& got, const std::vector<Moved>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_NEAR(got[k].x, want[k].x, 1e-4) << what << ", point " << k;
    EXPECT_NEAR(got[k].y, want[k].y, 1e-4) << what << ", point " << k;
    EXPECT_EQ(got[k].visible, want[k].visible)
        << what << ", point " << k << " at (" << got[k].x << ", " << got[k].y << ")";
  }
}

// Landmarks on the left edge, the last pixel's centre and start, the right edge, and past it.
const std::vector<std::array<double, 2>> kAlongX = {{0, 3}, {8.5, 3}, {9, 3}, {10, 3}, {10.5, 3}};

TEST(TargetEdgesTest, AFlipKeepsAPointOnTheEdgeOnTheImage) {
  // 10 x 8, mirrored: x -> 10 - x, both edges on the image, past them not.
  expect_moved(moved("Resize((8, 10)), RandomHorizontalFlip(1.0)", 10, 8, kAlongX),
               {{10, 3, true}, {1.5, 3, true}, {1, 3, true}, {0, 3, true}, {-0.5, 3, false}}, "hflip");
  expect_moved(moved("Resize((8, 10)), RandomVerticalFlip(1.0)", 10, 8, {{4, 0}, {4, 7}, {4, 8}, {4, -0.5}}),
               {{4, 8, true}, {4, 1, true}, {4, 0, true}, {4, 8.5, false}}, "vflip");
}

TEST(TargetEdgesTest, AResizeScalesTheEdgesToTheOutputsEdges) {
  // 10 x 8 to 25 x 4: x * 2.5, y * 0.5; the right edge lands on the output's.
  expect_moved(moved("Resize((4, 25))", 10, 8, kAlongX),
               {{0, 1.5, true}, {21.25, 1.5, true}, {22.5, 1.5, true}, {25, 1.5, true}, {26.25, 1.5, false}}, "resize");
}

TEST(TargetEdgesTest, ACropShiftsByItsCorner) {
  // CenterCrop(6) of 10 x 8: left round((10 - 6) / 2) = 2, top round((8 - 6) / 2) = 1.
  expect_moved(moved("CenterCrop(6)", 10, 8, {{2, 1}, {8, 7}, {1.5, 3}, {8.5, 3}, {9, 3}}),
               {{0, 0, true}, {6, 6, true}, {-0.5, 2, false}, {6.5, 2, false}, {7, 2, false}}, "crop");
}

TEST(TargetEdgesTest, APointPastTheSourceIsNotVisibleOnAPaddedCropsPadding) {
  // CenterCrop(12) of 10 x 8 pads it as torchvision does, (12 - 10) // 2 = 1 left and
  // (12 - 8) // 2 = 2 on top: x + 1, y + 2. A point past the source lands on the padding.
  expect_moved(moved("CenterCrop(12)", 10, 8, {{0, 0}, {10, 8}, {-0.5, 3}, {10.5, 3}, {4, -1}, {4, 9.5}}),
               {{1, 2, true}, {11, 10, true}, {0.5, 5, false}, {11.5, 5, false}, {5, 1, false}, {5, 11.5, false}},
               "a larger CenterCrop");
  // Pad(3) then RandomCrop(16) of 10 x 10: the whole padded image, x + 3, y + 3.
  expect_moved(moved("Pad(3), RandomCrop(16)", 10, 10, {{0, 0}, {-2, 5}, {5, 11}}),
               {{3, 3, true}, {1, 8, false}, {8, 14, false}}, "Pad");
}

TEST(TargetEdgesTest, QuarterAndHalfTurnsMoveTheEdgesOntoTheEdges) {
  // RandomRotation turns counter-clockwise about the centre (5, 5) of a 10 x 10 output:
  // 90 degrees takes (x, y) to (5 + (y - 5), 5 - (x - 5)), -90 to (5 - (y - 5), 5 + (x - 5)),
  // 180 to (10 - x, 10 - y).
  const std::vector<std::array<double, 2>> edges = {{0, 3}, {9, 3}, {10, 3}, {3, 0}, {3, 10}, {0, 0}, {10, 10.5}};
  expect_moved(
      moved("Resize((10, 10)), RandomRotation((90, 90))", 10, 10, edges),
      {{3, 10, true}, {3, 1, true}, {3, 0, true}, {0, 7, true}, {10, 7, true}, {0, 10, true}, {10.5, 0, false}},
      "rotate 90");
  expect_moved(
      moved("Resize((10, 10)), RandomRotation((-90, -90))", 10, 10, edges),
      {{7, 0, true}, {7, 9, true}, {7, 10, true}, {10, 3, true}, {0, 3, true}, {10, 0, true}, {-0.5, 10, false}},
      "rotate -90");
  expect_moved(
      moved("Resize((10, 10)), RandomRotation((180, 180))", 10, 10, edges),
      {{10, 7, true}, {1, 7, true}, {0, 7, true}, {7, 10, true}, {7, 0, true}, {10, 10, true}, {0, -0.5, false}},
      "rotate 180");
}

TEST(TargetEdgesTest, AShearMovesEachRowByItsDistanceFromTheCentre) {
  // F.affine's shear of sx degrees along x: x + -tan(sx) (y - cy); 45 degrees on 10 x 10.
  expect_moved(
      moved("Resize((10, 10)), RandomAffine(0, shear=(45, 45))", 10, 10, {{0, 5}, {0, 0}, {10, 10}, {0, 10}, {10, 0}}),
      {{0, 5, true}, {5, 0, true}, {5, 10, true}, {-5, 10, false}, {15, 0, false}}, "shear");
}

struct Box {
  double x1, y1, x2, y2;
  bool valid;
};

Box moved_box(const std::string& chain, int width, int height, Box box, const SampleParams& params) {
  GeometryTargets targets;
  targets.boxes = {static_cast<float>(box.x1), static_cast<float>(box.y1), static_cast<float>(box.x2),
                   static_cast<float>(box.y2), 1};
  move_targets(parse_transforms(chain), {}, params, width, height, &targets);
  const auto& b = targets.boxes;
  return {b[0], b[1], b[2], b[3], b[4] != 0};
}

void expect_box(const Box& got, const Box& want, const std::string& what) {
  EXPECT_NEAR(got.x1, want.x1, 1e-4) << what;
  EXPECT_NEAR(got.y1, want.y1, 1e-4) << what;
  EXPECT_NEAR(got.x2, want.x2, 1e-4) << what;
  EXPECT_NEAR(got.y2, want.y2, 1e-4) << what;
  EXPECT_EQ(got.valid, want.valid) << what;
}

SampleParams drawn(const std::string& chain, int width, int height) {
  SampleRng rng(1, 0, 0);
  return draw_params(parse_transforms(chain), width, height, rng);
}

TEST(TargetEdgesTest, ABoxIsClippedAtEachStepNotOnlyAtTheEnd) {
  // CenterCrop(10) of 20 x 10 starts at x = 5; a translation by 4 then brings back what the
  // crop cut: clipped at the crop, [0, 2, 8, 6] is [0, 2, 3, 6] there, then [4, 2, 7, 6]
  // (clipped only at the end it would be [0, 2, 7, 6]).
  std::string chain = "CenterCrop(10), RandomAffine(0, translate=(0.5, 0.5))";
  SampleParams params = drawn(chain, 20, 10);
  params.affine = true;
  params.translate_x = 4;
  params.translate_y = 0;
  expect_box(moved_box(chain, 20, 10, {0, 2, 8, 6, true}, params), {4, 2, 7, 6, true}, "crop, then translate");

  // The source is a step too: a larger CenterCrop's padding shows none of a box's part past it.
  chain = "CenterCrop(12)";  // of 10 x 8: x + 1, y + 2
  expect_box(moved_box(chain, 10, 8, {-3, 1, 4, 5, true}, drawn(chain, 10, 8)), {1, 3, 5, 7, true}, "padded crop");

  // A quarter turn of a 10 x 6 output takes the corner box [0, 0, 2, 2] below the bottom edge:
  // (x, y) -> (5 + (y - 3), 3 - (x - 5)) gives [2, 6, 4, 8], clipped to nothing; RandomAffine's
  // quarter turn back (clockwise) does not bring it back.
  chain = "Resize((6, 10)), RandomRotation((90, 90)), RandomAffine((90, 90))";
  const Box gone = moved_box(chain, 10, 6, {0, 0, 2, 2, true}, drawn(chain, 10, 6));
  EXPECT_FALSE(gone.valid) << "left without area by the turn: " << gone.x1 << ", " << gone.y1 << ", " << gone.x2 << ", "
                           << gone.y2;
}

}  // namespace target_edges
}  // namespace
}  // namespace stoker::data
