#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

TransformSpec training_spec() {
  TransformSpec spec;  // RandomResizedCrop(224), default scale and ratio
  spec.hflip.p = 0.5;
  spec.jitter = {0.4, 0.4, 0.4, 0.1};
  return spec;
}

void expect_same_params(const SampleParams& a, const SampleParams& b) {
  EXPECT_EQ(a.crop.x, b.crop.x);
  EXPECT_EQ(a.crop.y, b.crop.y);
  EXPECT_EQ(a.crop.width, b.crop.width);
  EXPECT_EQ(a.crop.height, b.crop.height);
  EXPECT_EQ(a.flip, b.flip);
  EXPECT_EQ(a.jitter_order, b.jitter_order);
  EXPECT_EQ(a.brightness, b.brightness);
  EXPECT_EQ(a.contrast, b.contrast);
  EXPECT_EQ(a.saturation, b.saturation);
  EXPECT_EQ(a.hue, b.hue);
}

// The documented algorithm (torchvision 0.14 get_params + the draw order of transform.h),
// written out again from the description, drawing from the same kind of SampleRng.
SampleParams reference_params(const TransformSpec& spec, int width, int height, SampleRng& rng) {
  SampleParams p;
  const RandomResizedCropSpec& rrc = spec.random_resized_crop;
  const double area = double(width) * height;
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target = area * rng.uniform(rrc.scale_min, rrc.scale_max);
    const double aspect = std::exp(rng.uniform(std::log(rrc.ratio_min), std::log(rrc.ratio_max)));
    const double w = std::nearbyint(std::sqrt(target * aspect));
    const double h = std::nearbyint(std::sqrt(target / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const double i = double(rng.below(uint64_t(height - h + 1)));
      const double j = double(rng.below(uint64_t(width - w + 1)));
      p.crop = {j, i, w, h};
      found = true;
    }
  }
  if (!found) {
    const double in_ratio = double(width) / height;
    double w = width;
    double h = height;
    if (in_ratio < rrc.ratio_min) h = std::nearbyint(w / rrc.ratio_min);
    if (in_ratio > rrc.ratio_max) w = std::nearbyint(h * rrc.ratio_max);
    p.crop = {double((width - int(w)) / 2), double((height - int(h)) / 2), w, h};
  }
  if (spec.hflip.p > 0) p.flip = rng.uniform() < spec.hflip.p;
  if (spec.jitter.enabled()) {
    std::array<int, 4> order{0, 1, 2, 3};
    for (int i = 3; i >= 1; --i) std::swap(order[i], order[rng.below(i + 1)]);
    p.jitter_order = order;
    const auto& j = spec.jitter;
    if (j.brightness > 0) p.brightness = rng.uniform(std::max(0.0, 1 - j.brightness), 1 + j.brightness);
    if (j.contrast > 0) p.contrast = rng.uniform(std::max(0.0, 1 - j.contrast), 1 + j.contrast);
    if (j.saturation > 0) p.saturation = rng.uniform(std::max(0.0, 1 - j.saturation), 1 + j.saturation);
    if (j.hue > 0) p.hue = rng.uniform(-j.hue, j.hue);
  }
  return p;
}

// RandomApply([T], p): one bernoulli(p) at T's place, then T's own draws only when it says yes.
// Checked for each transform it takes: the share applied is p, a skipped sample draws the coin
// alone, and an applied one draws what T alone would after the coin.
TEST(DrawParamsTest, RandomApplyDrawsOneChanceThenTheTransformsOwn) {
  struct Kind {
    const char* name;
    void (*enable)(TransformSpec*, double apply_p);
    bool (*ran)(const SampleParams&);
  };
  const std::vector<Kind> kinds = {
      {"ColorJitter",
       [](TransformSpec* s, double p) {
         s->jitter.brightness = s->jitter.hue = 0.3;
         s->jitter.apply_p = p;
       },
       [](const SampleParams& d) { return !d.jitter_skipped; }},
      {"GaussianBlur",
       [](TransformSpec* s, double p) {
         s->blur.kernel_w = s->blur.kernel_h = 5;
         s->blur.apply_p = p;
       },
       [](const SampleParams& d) { return d.blur_sigma > 0; }},
      {"RandomRotation",
       [](TransformSpec* s, double p) {
         s->rotation.max_degrees = 20;
         s->rotation.apply_p = p;
       },
       [](const SampleParams& d) { return d.rotate; }},
      {"RandomAffine",
       [](TransformSpec* s, double p) {
         s->affine.max_degrees = 20;
         s->affine.scale = true;
         s->affine.scale_min = 0.5;
         s->affine.apply_p = p;
       },
       [](const SampleParams& d) { return d.affine; }},
  };
  for (const Kind& kind : kinds) {
    SCOPED_TRACE(kind.name);
    TransformSpec sometimes, always;
    sometimes.geometry = always.geometry = Geometry::kNone;
    kind.enable(&sometimes, 0.3);
    kind.enable(&always, 1);
    int ran = 0;
    constexpr int kSamples = 2000;
    for (uint64_t i = 0; i < kSamples; ++i) {
      SampleRng r(11, 0, i), coin(11, 0, i);
      const SampleParams drawn = draw_params(sometimes, 64, 48, r);
      const bool yes = coin.bernoulli(0.3);
      EXPECT_EQ(kind.ran(drawn), yes) << "sample " << i;
      if (yes) {
        ++ran;
        const SampleParams alone = draw_params(always, 64, 48, coin);
        EXPECT_EQ(drawn.angle, alone.angle);
        EXPECT_EQ(drawn.affine_angle, alone.affine_angle);
        EXPECT_EQ(drawn.affine_scale, alone.affine_scale);
        EXPECT_EQ(drawn.brightness, alone.brightness);
        EXPECT_EQ(drawn.hue, alone.hue);
        EXPECT_EQ(drawn.jitter_order, alone.jitter_order);
        EXPECT_EQ(drawn.blur_sigma, alone.blur_sigma);
      }
      EXPECT_EQ(r.next_u64(), coin.next_u64()) << "sample " << i << ": the coin, and the transform's draws if it ran";
    }
    EXPECT_NEAR(static_cast<double>(ran) / kSamples, 0.3, 0.04);
    // p = 1 (no RandomApply) draws no coin: what the chain drew before RandomApply existed.
    SampleRng r(11, 0, 5), same(11, 0, 5);
    const SampleParams drawn = draw_params(always, 64, 48, r);
    EXPECT_TRUE(kind.ran(drawn));
    draw_params(always, 64, 48, same);
    EXPECT_EQ(r.next_u64(), same.next_u64());
  }
}

TEST(DrawParamsTest, SameSeedSameParams) {
  const TransformSpec spec = training_spec();
  int differing = 0;
  for (uint64_t i = 0; i < 50; ++i) {
    SampleRng a(42, 3, i);
    SampleRng b(42, 3, i);
    const SampleParams pa = draw_params(spec, 640, 480, a);
    expect_same_params(pa, draw_params(spec, 640, 480, b));
    SampleRng other(43, 3, i);
    differing += draw_params(spec, 640, 480, other).crop.x != pa.crop.x;
  }
  EXPECT_GT(differing, 40);
}

TEST(DrawParamsTest, MatchesReferenceAlgorithm) {
  struct Case {
    int width, height;
    TransformSpec spec;
  };
  TransformSpec narrow_scale = training_spec();
  narrow_scale.random_resized_crop.scale_min = 0.9;
  narrow_scale.random_resized_crop.ratio_min = 0.2;
  narrow_scale.random_resized_crop.ratio_max = 5;
  TransformSpec no_jitter;
  no_jitter.jitter = {};
  TransformSpec partial_jitter = training_spec();
  partial_jitter.jitter = {0, 1.5, 0, 0.5};
  const std::vector<Case> cases = {
      {640, 480, training_spec()}, {500, 500, training_spec()}, {37, 1203, training_spec()}, {300, 200, narrow_scale},
      {1000, 10, training_spec()}, {64, 64, no_jitter},         {800, 600, partial_jitter},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.width << "x" << c.height);
    for (uint64_t i = 0; i < 200; ++i) {
      SampleRng rng(7, 1, i);
      SampleRng ref_rng(7, 1, i);
      const SampleParams got = draw_params(c.spec, c.width, c.height, rng);
      expect_same_params(got, reference_params(c.spec, c.width, c.height, ref_rng));
      EXPECT_EQ(rng.next_u64(), ref_rng.next_u64()) << "same number of draws";
    }
  }
}

TEST(DrawParamsTest, FixedSeedGolden) {
  // One sample worked through by hand from the algorithm: the first attempt's draws decide.
  TransformSpec spec;
  spec.hflip.p = 0;
  SampleRng draws(1234, 0, 0);
  const double fraction = draws.uniform(0.08, 1.0);
  const double aspect = std::exp(draws.uniform(std::log(0.75), std::log(4.0 / 3.0)));
  const double w = std::nearbyint(std::sqrt(640.0 * 480 * fraction * aspect));
  const double h = std::nearbyint(std::sqrt(640.0 * 480 * fraction / aspect));
  ASSERT_TRUE(w <= 640 && h <= 480) << "pick another seed: the first attempt fails";
  const double top = double(draws.below(uint64_t(480 - h + 1)));
  const double left = double(draws.below(uint64_t(640 - w + 1)));

  SampleRng rng(1234, 0, 0);
  const SampleParams p = draw_params(spec, 640, 480, rng);
  EXPECT_EQ(p.crop.x, left);
  EXPECT_EQ(p.crop.y, top);
  EXPECT_EQ(p.crop.width, w);
  EXPECT_EQ(p.crop.height, h);
  EXPECT_FALSE(p.flip);
  EXPECT_EQ(p.jitter_order, (std::array<int, 4>{0, 1, 2, 3}));
  EXPECT_EQ(p.brightness, 1.0);
  EXPECT_EQ(p.hue, 0.0);
}

TEST(DrawParamsTest, CropDistribution) {
  const TransformSpec spec = training_spec();
  constexpr int kSide = 500;
  constexpr int kDraws = 2000;
  double sum = 0;
  for (uint64_t i = 0; i < kDraws; ++i) {
    SampleRng rng(99, 0, i);
    const SampleParams p = draw_params(spec, kSide, kSide, rng);
    const double fraction = p.crop.width * p.crop.height / (kSide * kSide);
    // Rounding w and h moves the area by under 1% at this size.
    EXPECT_GE(fraction, 0.08 * 0.99);
    EXPECT_LE(fraction, 1.0);
    EXPECT_GE(p.crop.x, 0);
    EXPECT_GE(p.crop.y, 0);
    EXPECT_LE(p.crop.x + p.crop.width, kSide);
    EXPECT_LE(p.crop.y + p.crop.height, kSide);
    const double aspect = p.crop.width / p.crop.height;
    EXPECT_GE(aspect, 0.75 * 0.98);
    EXPECT_LE(aspect, 4.0 / 3.0 * 1.02);
    sum += fraction;
  }

  // Expected mean area fraction by simulating the same algorithm with another generator.
  // It is below the 0.54 of U(0.08, 1) alone (about 0.48 for a square image): big crops of
  // extreme aspect do not fit, and their redraws favour smaller areas.
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double sim_sum = 0;
  constexpr int kSimulated = 200000;
  for (int n = 0; n < kSimulated; ++n) {
    double fraction = 1.0;  // fallback for a square image: the whole image
    for (int attempt = 0; attempt < 10; ++attempt) {
      const double target = 0.08 + 0.92 * unit(gen);
      const double aspect = std::exp(std::log(0.75) + (std::log(4.0 / 3.0) - std::log(0.75)) * unit(gen));
      const double w = std::nearbyint(std::sqrt(target * aspect) * kSide);
      const double h = std::nearbyint(std::sqrt(target / aspect) * kSide);
      if (w <= kSide && h <= kSide) {
        fraction = w * h / (kSide * kSide);
        break;
      }
    }
    sim_sum += fraction;
  }
  const double expected = sim_sum / kSimulated;
  EXPECT_GT(expected, 0.4);
  EXPECT_LT(expected, 0.54);
  // Standard error of 2000 draws is about 0.006.
  EXPECT_NEAR(sum / kDraws, expected, 0.025);
}

TEST(DrawParamsTest, FallbackForExtremeAspect) {
  // 1000x10: every attempt asks for >= 800 px at aspect <= 4/3, so h >= 24 > 10. Fallback:
  // in_ratio 100 > 4/3, so h = 10, w = round(10 * 4/3) = 13, centred.
  TransformSpec spec;
  for (uint64_t i = 0; i < 20; ++i) {
    SampleRng rng(1, 0, i);
    const SampleParams wide = draw_params(spec, 1000, 10, rng);
    EXPECT_EQ(wide.crop.width, 13);
    EXPECT_EQ(wide.crop.height, 10);
    EXPECT_EQ(wide.crop.x, (1000 - 13) / 2);
    EXPECT_EQ(wide.crop.y, 0);
    const SampleParams tall = draw_params(spec, 10, 1000, rng);
    EXPECT_EQ(tall.crop.width, 10);
    EXPECT_EQ(tall.crop.height, 13);
    EXPECT_EQ(tall.crop.x, 0);
    EXPECT_EQ(tall.crop.y, (1000 - 13) / 2);
  }
  // A 1x1 image still gets a 1x1 crop.
  SampleRng rng(1, 0, 0);
  const SampleParams tiny = draw_params(spec, 1, 1, rng);
  EXPECT_EQ(tiny.crop.width, 1);
  EXPECT_EQ(tiny.crop.height, 1);
}

TEST(DrawParamsTest, ResizeCenterCropMapsBackToSource) {
  TransformSpec spec;
  spec.geometry = Geometry::kResizeCenterCrop;
  spec.resize.shorter = 256;
  spec.out_width = spec.out_height = 224;
  SampleRng rng(1, 0, 0);

  // 500x375 -> Resize(256): 341x256 (int(256 * 500 / 375) = 341). Crop left = round(58.5) = 58
  // (half to even), top = 16.
  SampleParams p = draw_params(spec, 500, 375, rng);
  const double sx = 500.0 / 341;
  const double sy = 375.0 / 256;
  EXPECT_DOUBLE_EQ(p.crop.x, 58 * sx);
  EXPECT_DOUBLE_EQ(p.crop.y, 16 * sy);
  EXPECT_DOUBLE_EQ(p.crop.width, 224 * sx);
  EXPECT_DOUBLE_EQ(p.crop.height, 224 * sy);

  // Portrait 300x451 -> 256x384 (int(384.85)); left 16, top = round(80) = 80.
  p = draw_params(spec, 300, 451, rng);
  EXPECT_DOUBLE_EQ(p.crop.x, 16 * 300.0 / 256);
  EXPECT_DOUBLE_EQ(p.crop.y, 80 * 451.0 / 384);

  // 301x256: resized 301x256, left = round(38.5) = 38, not 39.
  p = draw_params(spec, 301, 256, rng);
  EXPECT_DOUBLE_EQ(p.crop.x, 38);
  EXPECT_DOUBLE_EQ(p.crop.y, 16);
  EXPECT_DOUBLE_EQ(p.crop.width, 224);

  // A crop that fits in one axis: the box (here of an image Resize keeps at its size).
  spec.out_width = 300;
  p = draw_params(spec, 512, 256, rng);
  EXPECT_DOUBLE_EQ(p.crop.x, 106);
  EXPECT_DOUBLE_EQ(p.crop.width, 300);
  EXPECT_FALSE(p.copy);
  // Larger than the resized image: padded with zeros, as torchvision's center_crop pads, (300 -
  // 256) / 2 = 22 on the left and top, the whole image resized first and copied.
  spec.out_height = 300;
  p = draw_params(spec, 256, 256, rng);
  EXPECT_TRUE(p.copy);
  EXPECT_EQ(p.pad_x, 22);
  EXPECT_EQ(p.pad_y, 22);
  EXPECT_DOUBLE_EQ(p.crop.width, 300);
  EXPECT_EQ(p.resized_width, 0);  // Resize(256) keeps a 256x256 image as it is
  p = draw_params(spec, 512, 640, rng);
  EXPECT_TRUE(p.copy);
  EXPECT_EQ(p.resized_width, 256);
  EXPECT_EQ(p.resized_height, 320);
  EXPECT_EQ(p.pad_x, 22);
  EXPECT_EQ(p.pad_y, 0);
  EXPECT_DOUBLE_EQ(p.crop.y, 10);  // round((320 - 300) / 2)
}

TEST(DrawParamsTest, ResizedSizeIsTorchvisions) {
  ResizeSpec shorter;
  shorter.shorter = 256;
  EXPECT_EQ(resized_size(shorter, 500, 375), (std::array<int, 2>{341, 256}));  // int(341.33)
  EXPECT_EQ(resized_size(shorter, 375, 500), (std::array<int, 2>{256, 341}));
  EXPECT_EQ(resized_size(shorter, 300, 451), (std::array<int, 2>{256, 384}));  // int(384.85)
  EXPECT_EQ(resized_size(shorter, 100, 100), (std::array<int, 2>{256, 256}));
  ResizeSpec fixed;
  fixed.height = 30;
  fixed.width = 40;
  EXPECT_EQ(resized_size(fixed, 500, 375), (std::array<int, 2>{40, 30}));
  EXPECT_EQ(resized_size(ResizeSpec{}, 500, 375), (std::array<int, 2>{500, 375}));
  EXPECT_EQ(resized_size(shorter, 0, 0), (std::array<int, 2>{0, 0}));
  // max_size caps the longer side: 341 > 300, so 300 and int(300 * 256 / 341) = 225.
  shorter.max_size = 300;
  EXPECT_EQ(resized_size(shorter, 500, 375), (std::array<int, 2>{300, 225}));
  EXPECT_EQ(resized_size(shorter, 375, 500), (std::array<int, 2>{225, 300}));
  EXPECT_EQ(resized_size(shorter, 300, 300), (std::array<int, 2>{256, 256}));  // under the cap
}

// A Resize before RandomCrop: the window is drawn in the resized image (the same draws as a
// RandomCrop of an image that size), then given as the source box it covers, or, reaching
// into the padding, as the window in the whole resized image.
TEST(DrawParamsTest, ResizeThenRandomCropDrawsInTheResizedImage) {
  const TransformSpec spec = parse_transforms("Resize(256), RandomCrop(224), RandomHorizontalFlip()");
  const TransformSpec at_resized = parse_transforms("RandomCrop(224), RandomHorizontalFlip()");
  const double sx = 500.0 / 341, sy = 375.0 / 256;
  std::set<int> lefts;
  for (uint64_t i = 0; i < 200; ++i) {
    SampleRng rng(7, 0, i), same(7, 0, i);
    const SampleParams p = draw_params(spec, 500, 375, rng);
    const SampleParams q = draw_params(at_resized, 341, 256, same);
    EXPECT_FALSE(p.copy);  // no padding: always a box of the source
    EXPECT_EQ(p.resized_width, 0);
    EXPECT_DOUBLE_EQ(p.crop.x, q.crop.x * sx);
    EXPECT_DOUBLE_EQ(p.crop.y, q.crop.y * sy);
    EXPECT_DOUBLE_EQ(p.crop.width, 224 * sx);
    EXPECT_DOUBLE_EQ(p.crop.height, 224 * sy);
    EXPECT_LE(p.crop.x + p.crop.width, 500 + 1e-9);
    EXPECT_LE(p.crop.y + p.crop.height, 375 + 1e-9);
    EXPECT_EQ(p.flip, q.flip);
    lefts.insert(static_cast<int>(q.crop.x));
  }
  EXPECT_GT(lefts.size(), 50u);  // 0..117 drawn, not a fixed offset

  // A Resize to the image's own size: the 1:1 copy of the image, no resample.
  const TransformSpec same_size = parse_transforms("Resize(28), RandomCrop(24)");
  SampleRng rng(1, 0, 0);
  const SampleParams p = draw_params(same_size, 28, 28, rng);
  EXPECT_TRUE(p.copy);
  EXPECT_EQ(p.resized_width, 0);
}

TEST(DrawParamsTest, ResizeThenPaddedRandomCropResizesTheWholeImageOnlyForPaddedWindows) {
  const TransformSpec spec = parse_transforms("Resize((40, 40)), RandomCrop(32, padding=4)");
  const TransformSpec at_resized = parse_transforms("RandomCrop(32, padding=4)");
  int boxes = 0, padded = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    SampleRng rng(3, 1, i), same(3, 1, i);
    const SampleParams p = draw_params(spec, 100, 80, rng);
    const SampleParams q = draw_params(at_resized, 40, 40, same);
    const bool inside = q.crop.x >= 4 && q.crop.y >= 4 && q.crop.x + 32 <= 44 && q.crop.y + 32 <= 44;
    if (inside) {  // the window's box of the 100 x 80 source
      ++boxes;
      EXPECT_FALSE(p.copy);
      EXPECT_DOUBLE_EQ(p.crop.x, (q.crop.x - 4) * 2.5);
      EXPECT_DOUBLE_EQ(p.crop.y, (q.crop.y - 4) * 2.0);
      EXPECT_DOUBLE_EQ(p.crop.width, 32 * 2.5);
      EXPECT_DOUBLE_EQ(p.crop.height, 32 * 2.0);
    } else {  // the window in the resized image, padded
      ++padded;
      EXPECT_TRUE(p.copy);
      EXPECT_EQ(p.resized_width, 40);
      EXPECT_EQ(p.resized_height, 40);
      EXPECT_EQ(p.crop.x, q.crop.x);
      EXPECT_EQ(p.crop.y, q.crop.y);
    }
  }
  // Offsets 0..16 per axis, inside for 4..12: 81 of 289 windows (28 %) are boxes.
  EXPECT_GT(boxes, 40);
  EXPECT_GT(padded, 150);
}

TEST(DrawParamsTest, ResizeThenRandomResizedCropDrawsInTheResizedImage) {
  const TransformSpec spec = parse_transforms("Resize(300), RandomResizedCrop(224)");
  const TransformSpec at_resized = parse_transforms("RandomResizedCrop(224)");
  for (uint64_t i = 0; i < 100; ++i) {
    SampleRng rng(5, 0, i), same(5, 0, i);
    const SampleParams p = draw_params(spec, 600, 400, rng);  // resized to 450 x 300
    const SampleParams q = draw_params(at_resized, 450, 300, same);
    EXPECT_FALSE(p.copy);
    EXPECT_DOUBLE_EQ(p.crop.x, q.crop.x * 600 / 450);
    EXPECT_DOUBLE_EQ(p.crop.y, q.crop.y * 400 / 300);
    EXPECT_DOUBLE_EQ(p.crop.width, q.crop.width * 600 / 450);
    EXPECT_DOUBLE_EQ(p.crop.height, q.crop.height * 400 / 300);
  }
}

TEST(DrawParamsTest, DrawsOnlyWhatIsEnabled) {
  TransformSpec spec;
  spec.geometry = Geometry::kNone;
  SampleRng rng(3, 0, 0);
  SampleRng untouched(3, 0, 0);
  const SampleParams p = draw_params(spec, 320, 200, rng);
  EXPECT_EQ(p.crop.width, 320);
  EXPECT_EQ(p.crop.height, 200);
  EXPECT_FALSE(p.flip);
  EXPECT_EQ(rng.next_u64(), untouched.next_u64()) << "no draws for kNone without flip/jitter";

  spec.geometry = Geometry::kResizeCenterCrop;
  spec.hflip.p = 1;
  SampleRng one_draw(3, 0, 0);
  EXPECT_TRUE(draw_params(spec, 320, 200, one_draw).flip);
  SampleRng expected(3, 0, 0);
  expected.next_u64();
  EXPECT_EQ(one_draw.next_u64(), expected.next_u64()) << "one draw for the flip";

  // RandomVerticalFlip and RandomGrayscale: one draw each, only when asked for.
  spec.hflip.p = 0;
  spec.vflip.p = 1;
  spec.random_grayscale.p = 1;
  SampleRng two_draws(3, 0, 0);
  const SampleParams q = draw_params(spec, 320, 200, two_draws);
  EXPECT_TRUE(q.vflip);
  EXPECT_TRUE(q.grayscale);
  EXPECT_FALSE(q.flip);
  SampleRng after_two(3, 0, 0);
  after_two.next_u64();
  after_two.next_u64();
  EXPECT_EQ(two_draws.next_u64(), after_two.next_u64()) << "one draw each";

  // RandomRotation: one uniform in [min, max].
  spec.vflip.p = spec.random_grayscale.p = 0;
  spec.rotation.min_degrees = -10;
  spec.rotation.max_degrees = 30;
  float lowest = 90, highest = -90;
  for (uint64_t i = 0; i < 400; ++i) {
    SampleRng r(6, 0, i), same(6, 0, i);
    const SampleParams drawn = draw_params(spec, 320, 200, r);
    EXPECT_TRUE(drawn.rotate);
    EXPECT_EQ(drawn.angle, static_cast<float>(same.uniform(-10, 30)));
    EXPECT_EQ(r.next_u64(), same.next_u64()) << "one draw";
    lowest = std::min(lowest, drawn.angle);
    highest = std::max(highest, drawn.angle);
  }
  EXPECT_GE(lowest, -10);
  EXPECT_LT(lowest, -8);

  // RandomAffine, after RandomRotation: the angle, then with translate two shifts rounded to
  // whole pixels within ±fraction × the output's size, with scale a factor, with shear the x
  // and (four values) the y shear; nothing else.
  spec.affine.min_degrees = -5;
  spec.affine.max_degrees = 5;
  spec.affine.translate = true;
  spec.affine.translate_x = 0.1;
  spec.affine.translate_y = 0.25;
  spec.affine.scale = true;
  spec.affine.scale_min = 0.8;
  spec.affine.scale_max = 1.2;
  spec.affine.shear = spec.affine.shear_y = true;
  spec.affine.shear_x_min = -3;
  spec.affine.shear_x_max = 3;
  spec.affine.shear_y_min = 1;
  spec.affine.shear_y_max = 2;
  int widest = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    SampleRng r(7, 0, i), same(7, 0, i);
    const SampleParams drawn = draw_params(spec, 320, 200, r);
    same.uniform(-10, 30);  // the rotation's
    EXPECT_TRUE(drawn.affine);
    EXPECT_EQ(drawn.affine_angle, static_cast<float>(same.uniform(-5, 5)));
    const double max_dx = 0.1 * spec.out_width, max_dy = 0.25 * spec.out_height;
    EXPECT_EQ(drawn.translate_x, static_cast<int>(std::nearbyint(same.uniform(-max_dx, max_dx))));
    EXPECT_EQ(drawn.translate_y, static_cast<int>(std::nearbyint(same.uniform(-max_dy, max_dy))));
    EXPECT_LE(std::abs(drawn.translate_x), static_cast<int>(std::lround(max_dx)));
    widest = std::max(widest, std::abs(drawn.translate_x));
    EXPECT_EQ(drawn.affine_scale, static_cast<float>(same.uniform(0.8, 1.2)));
    EXPECT_EQ(drawn.shear_x, static_cast<float>(same.uniform(-3, 3)));
    EXPECT_EQ(drawn.shear_y, static_cast<float>(same.uniform(1, 2)));
    EXPECT_EQ(r.next_u64(), same.next_u64()) << "six draws";
  }
  EXPECT_GE(widest, static_cast<int>(0.1 * spec.out_width) - 1);
  // Without translate, scale and shear: the angle alone, the rest as F.affine's identity.
  spec.affine = AffineSpec{};
  spec.affine.max_degrees = 3;
  {
    SampleRng r(7, 0, 1), same(7, 0, 1);
    const SampleParams drawn = draw_params(spec, 320, 200, r);
    same.uniform(-10, 30);
    EXPECT_EQ(drawn.affine_angle, static_cast<float>(same.uniform(0, 3)));
    EXPECT_EQ(drawn.translate_x, 0);
    EXPECT_EQ(drawn.affine_scale, 1);
    EXPECT_EQ(drawn.shear_x, 0);
    EXPECT_EQ(r.next_u64(), same.next_u64()) << "one draw";
  }
  spec.affine = AffineSpec{};

  // GaussianBlur: one uniform sigma in [min, max], drawn after RandomGrayscale's.
  spec.rotation = RotationSpec{};
  spec.blur.kernel_w = spec.blur.kernel_h = 5;
  for (uint64_t i = 0; i < 50; ++i) {
    SampleRng r(8, 0, i), same(8, 0, i);
    const SampleParams drawn = draw_params(spec, 320, 200, r);
    EXPECT_EQ(drawn.blur_sigma, static_cast<float>(same.uniform(0.1, 2.0)));
    EXPECT_EQ(r.next_u64(), same.next_u64()) << "one draw";
  }
  EXPECT_LE(highest, 30);
  EXPECT_GT(highest, 28);
  spec.vflip.p = spec.random_grayscale.p = 0.5;
  int vflips = 0, greys = 0;
  for (uint64_t i = 0; i < 400; ++i) {
    SampleRng r(5, 0, i);
    const SampleParams drawn = draw_params(spec, 320, 200, r);
    vflips += drawn.vflip;
    greys += drawn.grayscale;
  }
  EXPECT_GT(vflips, 150);
  EXPECT_LT(vflips, 250);
  EXPECT_GT(greys, 150);
  EXPECT_LT(greys, 250);
}

// The colour operations: one bernoulli each, in ColorOp's order, after GaussianBlur's sigma and
// before RandomErasing; an operation that is off draws nothing.
TEST(DrawParamsTest, ColorOperationsDrawOneChanceEachAfterTheBlur) {
  TransformSpec spec;
  spec.geometry = Geometry::kNone;
  spec.out_width = 32;
  spec.out_height = 24;
  spec.blur.kernel_w = spec.blur.kernel_h = 3;
  spec.color_ops[static_cast<size_t>(ColorOp::kPosterize)] = {0.3, 4};
  spec.color_ops[static_cast<size_t>(ColorOp::kEqualize)] = {0.7, 0};
  spec.erasing.p = 0.5;
  std::array<int, 2> ran{};
  constexpr int kSamples = 2000;
  for (uint64_t i = 0; i < kSamples; ++i) {
    SampleRng r(9, 0, i), same(9, 0, i);
    const SampleParams drawn = draw_params(spec, 32, 24, r);
    EXPECT_EQ(drawn.blur_sigma, static_cast<float>(same.uniform(0.1, 2.0)));
    const bool posterize = same.bernoulli(0.3);
    const bool equalize = same.bernoulli(0.7);
    EXPECT_EQ(drawn.color_ops, (posterize ? 1u << 1 : 0u) | (equalize ? 1u << 5 : 0u));
    ran[0] += posterize;
    ran[1] += equalize;
    EXPECT_EQ(drawn.erase, same.bernoulli(0.5)) << "RandomErasing's chance follows them";
  }
  EXPECT_NEAR(ran[0] / static_cast<double>(kSamples), 0.3, 0.04);
  EXPECT_NEAR(ran[1] / static_cast<double>(kSamples), 0.7, 0.04);
  // Off: no draw, nothing runs; the draws before them are those of a chain without them.
  TransformSpec without = spec;
  without.color_ops = {};
  for (uint64_t i = 0; i < 50; ++i) {
    SampleRng a(10, 0, i), b(10, 0, i);
    const SampleParams with_ops = draw_params(spec, 32, 24, a);
    const SampleParams plain = draw_params(without, 32, 24, b);
    EXPECT_EQ(plain.color_ops, 0);
    EXPECT_EQ(with_ops.blur_sigma, plain.blur_sigma);
  }
}

TEST(DrawParamsTest, FlipAndJitterRanges) {
  TransformSpec spec = training_spec();
  spec.geometry = Geometry::kNone;
  int flips = 0;
  std::set<std::array<int, 4>> orders;
  constexpr int kDraws = 4000;
  for (uint64_t i = 0; i < kDraws; ++i) {
    SampleRng rng(11, 2, i);
    const SampleParams p = draw_params(spec, 100, 100, rng);
    flips += p.flip;
    std::array<int, 4> sorted = p.jitter_order;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::array<int, 4>{0, 1, 2, 3}));
    orders.insert(p.jitter_order);
    EXPECT_GE(p.brightness, 0.6);
    EXPECT_LT(p.brightness, 1.4);
    EXPECT_GE(p.contrast, 0.6);
    EXPECT_LT(p.contrast, 1.4);
    EXPECT_GE(p.saturation, 0.6);
    EXPECT_LT(p.saturation, 1.4);
    EXPECT_GE(p.hue, -0.1);
    EXPECT_LT(p.hue, 0.1);
  }
  EXPECT_NEAR(double(flips) / kDraws, 0.5, 0.04);
  EXPECT_EQ(orders.size(), 24u) << "every permutation of the four operations occurs";

  // Disabled components keep neutral factors; brightness 1.5 draws from [0, 2.5).
  spec.jitter = {1.5, 0, 0, 0};
  for (uint64_t i = 0; i < 100; ++i) {
    SampleRng rng(11, 3, i);
    const SampleParams p = draw_params(spec, 100, 100, rng);
    EXPECT_GE(p.brightness, 0.0);
    EXPECT_LT(p.brightness, 2.5);
    EXPECT_EQ(p.contrast, 1.0);
    EXPECT_EQ(p.saturation, 1.0);
    EXPECT_EQ(p.hue, 0.0);
  }
}

}  // namespace
}  // namespace stoker::data
