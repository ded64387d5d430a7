// RandomPerspective and ElasticTransform: torchvision's get_params draws, the grids their tensor
// implementations build (warp.h), and whole samples through SampleTransformer, on cases whose
// result is known by hand (identities, whole-pixel shifts).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "data/transform/auto_augment.h"
#include "data/transform/warp.h"
#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {
namespace perspective_elastic_test {

constexpr int kWarpW = 16;
constexpr int kWarpH = 12;

DecodedImage test_image() {
  DecodedImage d;
  d.image.reshape(kWarpW, kWarpH, 3);
  for (int y = 0; y < kWarpH; ++y) {
    for (int x = 0; x < kWarpW; ++x) {
      for (int c = 0; c < 3; ++c) d.image.row(y)[x * 3 + c] = static_cast<uint8_t>((x * 13 + y * 29 + c * 71) % 256);
    }
  }
  d.crop = {0, 0, kWarpW, kWarpH};
  return d;
}

// The chain on the 16 x 12 image (geometry none), uint8 NCHW, for sample `index`.
std::vector<uint8_t> run(const std::string& chain, uint64_t index, SampleParams* drawn = nullptr) {
  TransformSpec spec = parse_transforms(chain + ", ToUint8");
  spec.out_width = kWarpW;
  spec.out_height = kWarpH;
  SampleRng rng(5, 0, index);
  const SampleParams params = draw_params(spec, kWarpW, kWarpH, rng);
  if (drawn != nullptr) *drawn = params;
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer transformer;
  transformer.run(out.data(), test_image(), params, spec);
  return out;
}

TEST(PerspectiveTest, CornersAreTheImageCornersCoefficientsAreTheIdentity) {
  const std::array<int, 8> corners{0, 0, kWarpW - 1, 0, kWarpW - 1, kWarpH - 1, 0, kWarpH - 1};
  const std::array<float, 8> c = perspective_coeffs(corners, kWarpW, kWarpH);
  const std::array<float, 8> identity{1, 0, 0, 0, 1, 0, 0, 0};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(c[i], identity[i], 1e-6) << i;
  // Every corner moved one pixel right: the output at x samples the input at x - 1.
  const std::array<int, 8> shifted{1, 0, kWarpW, 0, kWarpW, kWarpH - 1, 1, kWarpH - 1};
  const std::array<float, 8> s = perspective_coeffs(shifted, kWarpW, kWarpH);
  const std::array<float, 8> shift{1, 0, -1, 0, 1, 0, 0, 0};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(s[i], shift[i], 1e-6) << i;
}

TEST(PerspectiveTest, GetParamsDrawsWithinTorchvisionsBounds) {
  // distortion_scale 0.5 on 16 x 12: x within int(0.5 * 8) = 4 of its side, y within 3.
  const TransformSpec spec = [] {
    TransformSpec s = parse_transforms("RandomPerspective(0.5, p=1.0)");
    s.out_width = kWarpW;
    s.out_height = kWarpH;
    return s;
  }();
  std::set<int> top_left_x;
  for (uint64_t i = 0; i < 500; ++i) {
    SampleRng rng(9, 0, i);
    const SampleParams p = draw_params(spec, kWarpW, kWarpH, rng);
    ASSERT_TRUE(p.perspective);
    const std::array<int, 8>& c = p.corners;
    for (const int x : {c[0], c[6]}) EXPECT_TRUE(x >= 0 && x <= 4) << x;
    for (const int x : {c[2], c[4]}) EXPECT_TRUE(x >= kWarpW - 5 && x <= kWarpW - 1) << x;
    for (const int y : {c[1], c[3]}) EXPECT_TRUE(y >= 0 && y <= 3) << y;
    for (const int y : {c[5], c[7]}) EXPECT_TRUE(y >= kWarpH - 4 && y <= kWarpH - 1) << y;
    top_left_x.insert(c[0]);
  }
  EXPECT_EQ(top_left_x, (std::set<int>{0, 1, 2, 3, 4}));
  // p = 0.25 runs on about a quarter of the samples.
  TransformSpec quarter = spec;
  quarter.perspective.p = 0.25;
  int ran = 0;
  for (uint64_t i = 0; i < 4000; ++i) {
    SampleRng rng(9, 0, i);
    ran += draw_params(quarter, kWarpW, kWarpH, rng).perspective ? 1 : 0;
  }
  EXPECT_NEAR(ran / 4000.0, 0.25, 0.03);
}

TEST(PerspectiveTest, NoDistortionIsTheImageAndAShiftIsAShift) {
  const std::vector<uint8_t> image = run("none", 0);
  SampleParams drawn;
  // distortion_scale 0: the corners are the image's, the warp the identity (nearest and bilinear).
  EXPECT_EQ(run("RandomPerspective(0.0, p=1.0, interpolation=nearest)", 0, &drawn), image);
  EXPECT_TRUE(drawn.perspective);
  EXPECT_EQ(run("RandomPerspective(0.0, p=1.0)", 1), image);
  // A perspective that is a whole-pixel shift right, on the uint8 planes: column 0 the fill.
  std::vector<uint8_t> planes(image.begin(), image.end());
  std::vector<uint8_t> out(planes.size());
  std::vector<float> gx, gy;
  perspective_grid(perspective_coeffs({1, 0, kWarpW, 0, kWarpW, kWarpH - 1, 1, kWarpH - 1}, kWarpW, kWarpH), kWarpW,
                   kWarpH, &gx, &gy);
  warp_grid(gx.data(), gy.data(), filled_warp(Interpolation::kNearest, {9, 8, 7}), planes.data(), out.data(), kWarpW,
            kWarpH, 3);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < kWarpH; ++y) {
      const size_t row = (static_cast<size_t>(c) * kWarpH + y) * kWarpW;
      EXPECT_EQ(out[row], 9 - c);
      for (int x = 1; x < kWarpW; ++x) ASSERT_EQ(out[row + x], planes[row + x - 1]) << c << " " << y << " " << x;
    }
  }
}

TEST(PerspectiveTest, OffInEvaluationAndReadsBack) {
  const TransformSpec spec = parse_transforms("RandomPerspective(0.3, p=0.75, interpolation=nearest, fill=(1, 2, 3))");
  EXPECT_EQ(spec.describe(),
            "none \xC2\xB7 RandomPerspective(0.3, p=0.75, interpolation=nearest, fill=(1, 2, 3)) \xE2\x86\x92 float32 "
            "NCHW");
  EXPECT_FALSE(eval_transform(spec).perspective.enabled());
  // Inside RandomApply its own p and RandomApply's multiply.
  EXPECT_DOUBLE_EQ(parse_transforms("RandomApply([RandomPerspective(p=0.5)], p=0.5)").perspective.p, 0.25);
  EXPECT_EQ(stoker::testing::usage_error_text([] { parse_transforms("RandomPerspective(1.5)"); }),
            "RandomPerspective distortion_scale must be in [0, 1] (got 1.5)");
}

TEST(ElasticTest, NoDisplacementIsTheImage) {
  const std::vector<uint8_t> image = run("none", 0);
  EXPECT_EQ(run("ElasticTransform(alpha=0.0)", 0), image);
  EXPECT_EQ(run("ElasticTransform(alpha=0.0, sigma=0.0, interpolation=nearest)", 0), image);
}

TEST(ElasticTest, DisplacementsUnderHalfAPixelKeepNearestsPixels) {
  // x moves by at most alpha / height * width / 2 pixels (alpha / height in grid units of 2 /
  // width): 0.7 / 12 * 8 = 0.47 pixels, and y by 0.7 / 16 * 6 = 0.26: nearest rounds back.
  const std::vector<uint8_t> image = run("none", 0);
  for (uint64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(run("ElasticTransform(alpha=0.7, sigma=0.0, interpolation=nearest)", i), image) << i;
  }
  // Strong displacements move pixels, differently per sample, the same for the same sample.
  const std::vector<uint8_t> a = run("ElasticTransform(alpha=200.0, sigma=1.0)", 1);
  EXPECT_NE(a, image);
  EXPECT_NE(a, run("ElasticTransform(alpha=200.0, sigma=1.0)", 2));
  EXPECT_EQ(a, run("ElasticTransform(alpha=200.0, sigma=1.0)", 1));
}

TEST(ElasticTest, GridIsTheIdentityPlusTheScaledBlurredNoise) {
  ElasticSpec spec;
  spec.on = true;
  spec.alpha_x = 6;
  spec.alpha_y = 8;
  spec.sigma_x = spec.sigma_y = 0;
  std::vector<float> gx, gy, scratch;
  elastic_grid(spec, 42, 4, 3, &gx, &gy, &scratch);
  ASSERT_EQ(gx.size(), 12U);
  // The noise: the same SampleRng stream, x's 12 values then y's, each in [-1, 1).
  SampleRng noise(42, 0x454C4153u, 0);
  for (int i = 0; i < 12; ++i) {
    const float n = static_cast<float>(noise.uniform()) * 2.0f - 1.0f;
    const float identity = static_cast<float>((2.0 * (i % 4) + 1 - 4) / 4);
    EXPECT_FLOAT_EQ(gx[static_cast<size_t>(i)], identity + n * 6.0f / 3.0f) << i;  // alpha_x / height
  }
  for (int i = 0; i < 12; ++i) {
    const float n = static_cast<float>(noise.uniform()) * 2.0f - 1.0f;
    const float identity = static_cast<float>((2.0 * (i / 4) + 1 - 3) / 3);
    EXPECT_FLOAT_EQ(gy[static_cast<size_t>(i)], identity + n * 8.0f / 4.0f) << i;  // alpha_y / width
  }
  // Blurred, the noise is smoother: the mean absolute step between neighbours shrinks.
  spec.alpha_x = spec.alpha_y = 1;
  spec.sigma_x = spec.sigma_y = 2;
  elastic_grid(spec, 42, 32, 32, &gx, &gy, &scratch);
  std::vector<float> rx, ry;
  ElasticSpec raw = spec;
  raw.sigma_x = raw.sigma_y = 0;
  elastic_grid(raw, 42, 32, 32, &rx, &ry, &scratch);
  std::vector<float> ix, iy;  // the identity grid: no displacement
  ElasticSpec none = spec;
  none.alpha_x = none.alpha_y = 0;
  elastic_grid(none, 42, 32, 32, &ix, &iy, &scratch);
  double smooth = 0, rough = 0;
  for (size_t i = 1; i < gx.size(); ++i) {
    smooth += std::abs((gx[i] - ix[i]) - (gx[i - 1] - ix[i - 1]));
    rough += std::abs((rx[i] - ix[i]) - (rx[i - 1] - ix[i - 1]));
  }
  EXPECT_LT(smooth, rough / 4);
}

TEST(ElasticTest, ParsesDescribesAndRefuses) {
  using stoker::testing::usage_error_text;
  const TransformSpec spec = parse_transforms("ElasticTransform(alpha=(20.0, 30.0), sigma=[3.0], fill=7)");
  EXPECT_EQ(spec.elastic.alpha_x, 20);
  EXPECT_EQ(spec.elastic.alpha_y, 30);
  EXPECT_EQ(spec.elastic.sigma_y, 3);
  EXPECT_EQ(spec.describe(),
            "none \xC2\xB7 ElasticTransform(alpha=(20, 30), sigma=3, fill=7) \xE2\x86\x92 float32 NCHW");
  EXPECT_FALSE(eval_transform(spec).elastic.enabled());
  EXPECT_EQ(parse_transforms("RandomApply([ElasticTransform()], p=0.3)").elastic.apply_p, 0.3);
  EXPECT_EQ(usage_error_text([] { parse_transforms("ElasticTransform(alpha=-1.0)"); }),
            "ElasticTransform alpha must be >= 0 and finite (got -1)");
  EXPECT_EQ(usage_error_text([] { parse_transforms("ElasticTransform(sigma=(0.0, 2.0))"); }),
            "ElasticTransform sigma must be both in (0, 100], or both 0 for unblurred noise (got (0, 2))");
}

}  // namespace perspective_elastic_test
}  // namespace
}  // namespace stoker::data
