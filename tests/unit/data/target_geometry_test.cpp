// Keypoints and boxes follow the geometry: hand-computed cases for each geometric transform,
// and a bright block rendered through the real transformer lands where its centre is moved.
#include "stoker/data/target_geometry.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/rng.h"
#include "stoker/data/image.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/counting_source.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {
namespace target_geometry {

// Moves one visible point of a width x height source through `chain` with `params`.
std::vector<float> moved_point(const std::string& chain, const SampleParams& params, int width, int height, float x,
                               float y, TargetGeometrySpec geometry = {}) {
  GeometryTargets targets;
  targets.points = {x, y, 1};
  move_targets(parse_transforms(chain), geometry, params, width, height, &targets);
  return targets.points;
}

SampleParams drawn(const std::string& chain, int width, int height, uint64_t seed = 1) {
  SampleRng rng(seed, 0, 0);
  return draw_params(parse_transforms(chain), width, height, rng);
}

TEST(TargetGeometryTest, AResizeScalesEachAxis) {
  const std::string chain = "Resize((10, 20))";  // (height, width)
  EXPECT_EQ(moved_point(chain, drawn(chain, 40, 20), 40, 20, 10, 4), (std::vector<float>{5, 2, 1}));
  GeometryTargets box;
  box.boxes = {0, 0, 40, 20, 1};
  move_targets(parse_transforms(chain), {}, drawn(chain, 40, 20), 40, 20, &box);
  EXPECT_EQ(box.boxes, (std::vector<float>{0, 0, 20, 10, 1}));
}

TEST(TargetGeometryTest, ACropShiftsAndPaddingCountsAndAPointOutsideIsNotVisible) {
  const std::string chain = "RandomCrop(4, padding=2)";
  SampleParams params;
  params.copy = true;
  params.crop = {1, 1, 4, 4};  // in the padded 10 x 10 image: the source's (-1, -1) corner
  EXPECT_EQ(moved_point(chain, params, 6, 6, 0.5f, 0.5f), (std::vector<float>{1.5f, 1.5f, 1}));
  EXPECT_EQ(moved_point(chain, params, 6, 6, 4.5f, 0.5f), (std::vector<float>{5.5f, 1.5f, 0}))
      << "past the crop: kept, not visible";
}

TEST(TargetGeometryTest, ARandomResizedCropMapsItsBoxOntoTheOutput) {
  const std::string chain = "RandomResizedCrop(8)";
  SampleParams params;
  params.crop = {10, 20, 16, 32};  // a 16 x 32 box of the source at (10, 20), resampled to 8 x 8
  EXPECT_EQ(moved_point(chain, params, 100, 100, 14, 28), (std::vector<float>{2, 2, 1}));
  EXPECT_EQ(moved_point(chain, params, 100, 100, 9, 28), (std::vector<float>{-0.5f, 2, 0}));
}

TEST(TargetGeometryTest, FlipsMirrorAndSwapTheFlipPairs) {
  SampleParams params = drawn("Resize((10, 10))", 10, 10);
  params.flip = true;
  TargetGeometrySpec pairs;
  pairs.flip_pairs = {{0, 1}};
  GeometryTargets eyes;
  eyes.points = {2, 3, 1, 7, 3, 1};  // left eye, right eye
  move_targets(parse_transforms("Resize((10, 10)), RandomHorizontalFlip()"), pairs, params, 10, 10, &eyes);
  EXPECT_EQ(eyes.points, (std::vector<float>{3, 3, 1, 8, 3, 1})) << "mirrored, then the pair swapped";
  params.flip = false;
  params.vflip = true;
  EXPECT_EQ(moved_point("Resize((10, 10)), RandomVerticalFlip()", params, 10, 10, 2, 3), (std::vector<float>{2, 7, 1}));
  pairs.flip_pairs = {{0, 2}};
  params.flip = true;
  EXPECT_THROW(move_targets(parse_transforms("Resize((10, 10))"), pairs, params, 10, 10, &eyes), UsageError);
}

TEST(TargetGeometryTest, FlipPairsNamingAPointTwiceAreRefusedByTheLoader) {
  // (36, 45) then (36, 42) would send 42's point to 36, 45's to 42 and 36's to 45.
  const auto refusal = [](std::vector<std::pair<int, int>> pairs) {
    TargetGeometrySpec geometry;
    geometry.flip_pairs = std::move(pairs);
    return testing::usage_error_text([&] { check_flip_pairs(geometry); });
  };
  EXPECT_EQ(refusal({{36, 45}, {39, 42}, {0, 0}}), "<no UsageError>");
  EXPECT_EQ(refusal({{36, 45}, {36, 42}}),
            "flip_pairs names point 36 in two pairs, (36, 45) and (36, 42); a flip swaps each point with one other");
  EXPECT_EQ(refusal({{0, 16}, {16, 1}}),
            "flip_pairs names point 16 in two pairs, (0, 16) and (16, 1); a flip swaps each point with one other");
  EXPECT_EQ(refusal({{0, -1}}), "flip_pairs names point -1; points are numbered from 0");

  LoaderOptions options;
  options.transform = parse_transforms("RandomHorizontalFlip(), ToUint8");
  options.target_geometry.flip_pairs = {{0, 1}, {1, 2}};
  const auto images = std::make_shared<testing::CountingSource>(4);
  const std::vector<float> points(4 * 3 * 3, 1.0f);
  EXPECT_EQ(testing::usage_error_text([&] { Loader(with_geometry(images, points, 3, {}, 0), options); }),
            "flip_pairs names point 1 in two pairs, (0, 1) and (1, 2); a flip swaps each point with one other");
}

TEST(TargetGeometryTest, RotationAndAffineTurnAboutTheCentre) {
  SampleParams params = drawn("Resize((10, 10))", 10, 10);
  params.rotate = true;
  params.angle = 90;  // counter-clockwise: right of the centre goes above it
  const std::vector<float> turned = moved_point("Resize((10, 10)), RandomRotation((90, 90))", params, 10, 10, 7, 5);
  EXPECT_NEAR(turned[0], 5, 1e-5);
  EXPECT_NEAR(turned[1], 3, 1e-5);
  params.rotate = false;
  params.affine = true;
  params.translate_x = 2;
  params.translate_y = -1;
  EXPECT_EQ(moved_point("Resize((10, 10)), RandomAffine(0, translate=(0.3, 0.3))", params, 10, 10, 3, 3),
            (std::vector<float>{5, 2, 1}));
}

TEST(TargetGeometryTest, ABoxBecomesTheBoxOfItsMovedCornersClampedOrInvalid) {
  SampleParams params = drawn("Resize((10, 10))", 10, 10);
  params.rotate = true;
  params.angle = 90;
  GeometryTargets targets;
  targets.boxes = {6,  4,  9,  5,  1,   // right of the centre, wide: tall above it once turned
                   -5, -5, -1, -1, 1};  // outside the image: empty once clamped
  move_targets(parse_transforms("Resize((10, 10)), RandomRotation((90, 90))"), {}, params, 10, 10, &targets);
  const std::vector<float> expected{4, 1, 5, 4, 1, 0, 10, 0, 10, 0};
  ASSERT_EQ(targets.boxes.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) EXPECT_NEAR(targets.boxes[k], expected[k], 1e-4) << k;
}

TEST(TargetGeometryTest, ElasticAndTheAutomaticAugmentationsAreRefused) {
  const auto refusal = [](const char* chain) {
    return testing::usage_error_text([&] { check_targets_can_follow(parse_transforms(chain)); });
  };
  EXPECT_EQ(refusal("RandomResizedCrop(32), RandomRotation(10), RandomAffine(5), RandomPerspective()"),
            "<no UsageError>");
  EXPECT_EQ(refusal("RandomResizedCrop(32), ElasticTransform()"),
            "keypoints and boxes cannot follow ElasticTransform (its warp is drawn per pixel or per operation); "
            "leave it out of a chain with geometric targets");
  EXPECT_NE(refusal("RandomResizedCrop(32), TrivialAugmentWide()").find("cannot follow the automatic augmentation"),
            std::string::npos);
  EXPECT_NE(refusal("RandomResizedCrop(32), AugMix(), ElasticTransform()").find("cannot follow ElasticTransform"),
            std::string::npos);
}

// A 40 x 30 dark image with a bright 3 x 3 block at (x, y): its centre is (x + 1.5, y + 1.5).
Image block_at(int x, int y) {
  Image image;
  image.reshape(40, 30, 3);
  for (int r = 0; r < 30; ++r) {
    for (int c = 0; c < 40 * 3; ++c) image.row(r)[c] = 0;
  }
  for (int r = y; r < y + 3; ++r) {
    for (int c = x; c < x + 3; ++c) {
      for (int k = 0; k < 3; ++k) image.row(r)[c * 3 + k] = 255;
    }
  }
  return image;
}

// The centre of the bright part of a uint8 NCHW output's first plane, or (-1, -1) when none.
std::array<double, 2> bright_centre(const std::vector<uint8_t>& out, int width, int height) {
  int peak = 0;
  for (int i = 0; i < width * height; ++i) peak = std::max<int>(peak, out[static_cast<size_t>(i)]);
  double sx = 0, sy = 0, weight = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const int v = out[static_cast<size_t>(y * width + x)];
      if (peak == 0 || v * 2 < peak) continue;
      sx += v * (x + 0.5);
      sy += v * (y + 0.5);
      weight += v;
    }
  }
  if (weight == 0) return {-1, -1};
  return {sx / weight, sy / weight};
}

TEST(TargetGeometryTest, ABlockRenderedThroughEachTransformLandsWhereItsCentreIsMoved) {
  const char* chains[] = {
      "RandomResizedCrop(24, scale=(0.5, 1.0)), RandomHorizontalFlip()",
      "Resize(28), RandomCrop(24, padding=4), RandomVerticalFlip()",
      "Resize((24, 24)), RandomRotation(45, interpolation=nearest)",
      "Resize((24, 24)), RandomAffine(20, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=10, interpolation=nearest)",
      "Resize((24, 24)), RandomPerspective(0.4, p=1.0, interpolation=nearest)",
      ("Resize((24, 24)), RandomOrder([RandomRotation(30, interpolation=nearest), "
       "RandomAffine(0, translate=(0.2, 0.2), interpolation=nearest)])"),
  };
  SampleTransformer transformer;
  int checked = 0;
  for (const char* chain : chains) {
    TransformSpec spec = parse_transforms(std::string(chain) + ", ToUint8");
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      const Image image = block_at(14, 11);
      SampleRng rng(seed, 0, 7);
      const SampleParams params = draw_params(spec, 40, 30, rng);
      std::vector<uint8_t> out(spec.sample_bytes());
      transformer.run(out.data(), image, resampled_region(params, 40, 30), params, spec);
      GeometryTargets targets;
      targets.points = {15.5f, 12.5f, 1};
      move_targets(spec, {}, params, 40, 30, &targets);
      const auto seen = bright_centre(out, spec.out_width, spec.out_height);
      if (targets.points[2] == 0 || seen[0] < 0) continue;  // moved off the output: nothing to see
      const bool near_edge = targets.points[0] < 2 || targets.points[1] < 2 || targets.points[0] > spec.out_width - 2 ||
                             targets.points[1] > spec.out_height - 2;
      if (near_edge) continue;  // a block cut by the edge has its centre elsewhere
      EXPECT_NEAR(seen[0], targets.points[0], 1.0) << chain << ", seed " << seed;
      EXPECT_NEAR(seen[1], targets.points[1], 1.0) << chain << ", seed " << seed;
      ++checked;
    }
  }
  EXPECT_GE(checked, 50) << "too few draws kept the block in view to check";
}

TEST(TargetGeometryTest, TheLoaderMovesEachSamplesTargetsWithItsImage) {
  // 8 x 8 samples, each with one keypoint at (1 + i % 4, 2) and one box, flipped every time.
  const auto images = std::make_shared<testing::CountingSource>(12);
  std::vector<float> points, boxes;
  for (int i = 0; i < 12; ++i) {
    points.insert(points.end(), {1.0f + static_cast<float>(i % 4), 2, 1});
    boxes.insert(boxes.end(), {0, 0, 3, 4, 1});
  }
  LoaderOptions options;
  options.batch_size = 5;
  options.workers = 3;
  options.sampler.shuffle = true;
  options.transform = parse_transforms("RandomHorizontalFlip(1.0), Grayscale, ToUint8");
  Loader loader(with_geometry(images, points, 1, boxes, 1), options);
  loader.start_epoch(0);
  int seen = 0;
  while (Batch batch = loader.next()) {
    for (int s = 0; s < batch.size(); ++s, ++seen) {
      const uint64_t i = batch.indices()[s];
      EXPECT_EQ(batch.geometry(s).points, (std::vector<float>{8 - (1.0f + static_cast<float>(i % 4)), 2, 1}));
      EXPECT_EQ(batch.geometry(s).boxes, (std::vector<float>{5, 0, 8, 4, 1}));
    }
  }
  EXPECT_EQ(seen, 12);
  options.transform = parse_transforms("ElasticTransform(), Grayscale, ToUint8");
  EXPECT_THROW(Loader(with_geometry(images, points, 1, boxes, 1), options), UsageError);
  EXPECT_THROW(with_geometry(images, {1, 2}, 1, boxes, 1), UsageError) << "one point short";
}

TEST(TargetGeometryTest, AMaskIsResampledWithNearestAndZeroWhereNoSourceShows) {
  GeometryTargets targets;
  targets.mask_width = targets.mask_height = 4;
  for (uint8_t v = 0; v < 16; ++v) targets.mask.push_back(v);  // label r * 4 + c
  const std::string chain = "Resize((2, 2)), RandomHorizontalFlip()";
  SampleParams params = drawn(chain, 4, 4);
  params.flip = true;
  move_targets(parse_transforms(chain), {}, params, 4, 4, &targets);
  // Output pixel centres (0.5, 1.5) x 2 land on source pixels 1 and 3; flipped, columns swap.
  EXPECT_EQ(targets.mask, (std::vector<uint8_t>{7, 5, 15, 13}));
  EXPECT_EQ(targets.mask_width, 2);

  GeometryTargets padded;
  padded.mask_width = padded.mask_height = 2;
  padded.mask = {1, 2, 3, 4};
  SampleParams crop;
  crop.copy = true;
  crop.crop = {0, 0, 3, 3};  // the top-left 3 x 3 of the 2 x 2 image padded by 1 on each side
  move_targets(parse_transforms("RandomCrop(3, padding=1)"), {}, crop, 2, 2, &padded);
  EXPECT_EQ(padded.mask, (std::vector<uint8_t>{0, 0, 0, 0, 1, 2, 0, 3, 4}));
  GeometryTargets wrong;
  wrong.mask_width = wrong.mask_height = 3;
  wrong.mask.assign(9, 1);
  EXPECT_THROW(move_targets(parse_transforms("RandomCrop(3, padding=1)"), {}, crop, 2, 2, &wrong), UsageError);
}

TEST(TargetGeometryTest, AMaskMovesAsAnImageSampledWithNearestMoves) {
  // An image whose every channel holds the mask's labels, run through chains that sample it
  // with nearest (1:1 crops, flips, warps with interpolation=nearest): its output is the mask.
  const char* chains[] = {
      "RandomCrop(24, padding=4), RandomHorizontalFlip(), RandomVerticalFlip()",
      "CenterCrop(24), RandomRotation(40, interpolation=nearest)",
      "CenterCrop(24), RandomAffine(20, translate=(0.1, 0.1), shear=10, interpolation=nearest)",
      "CenterCrop(24), RandomPerspective(0.4, p=1.0, interpolation=nearest)",
  };
  Image image;
  image.reshape(30, 26, 3);
  std::vector<uint8_t> labels;
  for (int r = 0; r < 26; ++r) {
    for (int c = 0; c < 30; ++c) {
      const auto label = static_cast<uint8_t>(1 + (r * 7 + c * 3) % 250);
      labels.push_back(label);
      for (int k = 0; k < 3; ++k) image.row(r)[c * 3 + k] = label;
    }
  }
  SampleTransformer transformer;
  for (const char* chain : chains) {
    const TransformSpec spec = parse_transforms(std::string(chain) + ", ToUint8");
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      SampleRng rng(seed, 0, 3);
      const SampleParams params = draw_params(spec, 30, 26, rng);
      std::vector<uint8_t> out(spec.sample_bytes());
      transformer.run(out.data(), image, resampled_region(params, 30, 26), params, spec);
      GeometryTargets targets;
      targets.mask = labels;
      targets.mask_width = 30;
      targets.mask_height = 26;
      move_targets(spec, {}, params, 30, 26, &targets);
      ASSERT_EQ(targets.mask.size(), static_cast<size_t>(24 * 24));
      int differ = 0;
      for (size_t i = 0; i < targets.mask.size(); ++i) differ += targets.mask[i] != out[i];  // channel 0 (NCHW)
      EXPECT_LE(differ, 3) << chain << ", seed " << seed << ": a tie between two pixels may round either way";
    }
  }
}

}  // namespace target_geometry
}  // namespace
}  // namespace stoker::data
