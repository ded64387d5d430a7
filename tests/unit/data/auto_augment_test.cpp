// The automatic augmentations' draws and operations, and RandomErasing, on their own and in
// SampleTransformer. (How each operation compares with torchvision's own is the integration
// test auto_augment_torchvision_test.cpp.)
#include "data/transform/auto_augment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "data/transform/random_erasing.h"
#include "stoker/core/rng.h"
#include "stoker/data/transform.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

constexpr int kW = 32;
constexpr int kH = 24;

// A photo-like uint8 image in planes.
std::vector<uint8_t> planes(int channels) { return testing::to_planes(testing::make_photo_like(kW, kH, channels, 7)); }

std::vector<uint8_t> applied(AugmentOp op, float magnitude, std::vector<uint8_t> image, int channels,
                             const AutoAugmentSpec& spec = {}) {
  std::vector<uint8_t> scratch;
  apply_augment_op(op, magnitude, spec, &image, &scratch, kW, kH, channels);
  return image;
}

TEST(AutoAugmentOpsTest, PixelOperationsDoWhatTheySay) {
  const std::vector<uint8_t> image = planes(3);
  EXPECT_EQ(applied(AugmentOp::kIdentity, 0, image, 3), image);
  const std::vector<uint8_t> inverted = applied(AugmentOp::kInvert, 0, image, 3);
  for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(inverted[i], 255 - image[i]) << i;
  EXPECT_EQ(applied(AugmentOp::kInvert, 0, inverted, 3), image);

  const std::vector<uint8_t> four_bits = applied(AugmentOp::kPosterize, 4, image, 3);
  for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(four_bits[i], image[i] & 0xF0) << i;
  EXPECT_EQ(applied(AugmentOp::kPosterize, 8, image, 3), image);

  const std::vector<uint8_t> solarized = applied(AugmentOp::kSolarize, 128, image, 3);
  for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(solarized[i], image[i] >= 128 ? 255 - image[i] : image[i]);
  EXPECT_EQ(applied(AugmentOp::kSolarize, 255.5f, image, 3),
            image);  // nothing reaches the threshold

  // Brightness: x * (1 + m), truncated and clamped.
  const std::vector<uint8_t> darker = applied(AugmentOp::kBrightness, -0.5f, image, 3);
  for (size_t i = 0; i < image.size(); ++i) ASSERT_EQ(darker[i], image[i] / 2) << i;
  const std::vector<uint8_t> brighter = applied(AugmentOp::kBrightness, 0.9f, image, 3);
  for (size_t i = 0; i < image.size(); ++i) {
    ASSERT_EQ(brighter[i], static_cast<uint8_t>(std::min(1.9f * image[i], 255.0f))) << i;
  }
  // Colour -1 is the grey image in every channel; a grey image has no colour to change.
  const std::vector<uint8_t> grey = applied(AugmentOp::kColor, -1, image, 3);
  const size_t plane = static_cast<size_t>(kW) * kH;
  for (size_t i = 0; i < plane; ++i) {
    ASSERT_EQ(grey[i], grey[plane + i]);
    ASSERT_EQ(grey[i], grey[2 * plane + i]);
  }
  const std::vector<uint8_t> one = planes(1);
  EXPECT_EQ(applied(AugmentOp::kColor, 0.9f, one, 1), one);
}

TEST(AutoAugmentOpsTest, AutoContrastAndEqualizeStretchEachChannel) {
  std::vector<uint8_t> image = planes(3);
  // Squeeze the first channel into [100, 150]: AutoContrast brings it back to [0, 255].
  const size_t plane = static_cast<size_t>(kW) * kH;
  for (size_t i = 0; i < plane; ++i) image[i] = static_cast<uint8_t>(100 + image[i] * 50 / 255);
  const std::vector<uint8_t> stretched = applied(AugmentOp::kAutoContrast, 0, image, 3);
  EXPECT_EQ(*std::min_element(stretched.begin(), stretched.begin() + plane), 0);
  EXPECT_EQ(*std::max_element(stretched.begin(), stretched.begin() + plane), 255);
  // A flat plane stays as it is.
  std::vector<uint8_t> flat(plane * 3, 77);
  EXPECT_EQ(applied(AugmentOp::kAutoContrast, 0, flat, 3), flat);
  EXPECT_EQ(applied(AugmentOp::kEqualize, 0, flat, 3), flat);

  // Equalize: a flat histogram is already equal; two values go to the ends of the range.
  std::vector<uint8_t> ramp(plane * 3);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<uint8_t>(i % 256);  // 3 of each value per plane
  EXPECT_EQ(applied(AugmentOp::kEqualize, 0, ramp, 3), ramp);
  std::vector<uint8_t> two(plane * 3);
  for (size_t i = 0; i < two.size(); ++i) two[i] = i % 2 == 0 ? 50 : 200;
  const std::vector<uint8_t> ends = applied(AugmentOp::kEqualize, 0, two, 3);
  for (size_t i = 0; i < two.size(); ++i) ASSERT_EQ(ends[i], two[i] == 50 ? 0 : 255) << i;
}

TEST(AutoAugmentOpsTest, TranslationsShiftByWholePixelsAndFillTheRest) {
  const std::vector<uint8_t> image = planes(3);
  for (const bool bilinear : {false, true}) {
    AutoAugmentSpec spec;
    spec.interpolation = bilinear ? Interpolation::kBilinear : Interpolation::kNearest;
    // 5.9 truncates to 5, as int(magnitude) does: whole pixels, so both interpolations agree.
    const std::vector<uint8_t> right = applied(AugmentOp::kTranslateX, 5.9f, image, 3, spec);
    const std::vector<uint8_t> up = applied(AugmentOp::kTranslateY, -3, image, 3, spec);
    for (int c = 0; c < 3; ++c) {
      for (int y = 0; y < kH; ++y) {
        for (int x = 0; x < kW; ++x) {
          const auto at = [&](int xx, int yy) { return (static_cast<size_t>(c) * kH + yy) * kW + xx; };
          ASSERT_EQ(right[at(x, y)], x < 5 ? 0 : image[at(x - 5, y)]) << bilinear << " " << x << "," << y;
          ASSERT_EQ(up[at(x, y)], y >= kH - 3 ? 0 : image[at(x, y + 3)]) << bilinear << " " << x << "," << y;
        }
      }
    }
    spec.has_fill = true;
    spec.fill = {10, 20, 30};
    const std::vector<uint8_t> filled = applied(AugmentOp::kTranslateX, -2, image, 3, spec);
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(filled[(static_cast<size_t>(c) * kH + 4) * kW + kW - 1], spec.fill[static_cast<size_t>(c)]);
    }
  }
  // No movement, no change; a half turn twice is the image again (nearest, even sizes).
  EXPECT_EQ(applied(AugmentOp::kRotate, 0, image, 3), image);
  EXPECT_EQ(applied(AugmentOp::kShearX, 0, image, 3), image);
  EXPECT_EQ(applied(AugmentOp::kRotate, 180, applied(AugmentOp::kRotate, 180, image, 3), 3), image);
}

TEST(AutoAugmentDrawTest, TrivialAugmentWidePicksEveryOperationAlike) {
  AutoAugmentSpec spec;
  spec.kind = AutoAugmentKind::kTrivialAugmentWide;
  std::array<int, kAugmentSpaceOps> counts{};
  int negative = 0;
  int signed_ops = 0;
  constexpr int kDraws = 28000;
  for (int i = 0; i < kDraws; ++i) {
    SampleRng rng(3, 0, static_cast<uint64_t>(i));
    SampleParams params;
    draw_auto_augment(spec, 224, 224, rng, &params);
    ASSERT_EQ(params.augment_steps, 1);
    const auto op = static_cast<AugmentOp>(params.augment[0].op);
    ASSERT_LT(params.augment[0].op, kAugmentSpaceOps);
    ++counts[params.augment[0].op];
    const float m = params.augment[0].magnitude;
    if (op == AugmentOp::kRotate) {
      ++signed_ops;
      negative += m < 0;
      ASSERT_LE(std::abs(m), 135.0f);
    }
    if (op == AugmentOp::kPosterize) {
      ASSERT_TRUE(m >= 2 && m <= 8) << m;
    }
    if (op == AugmentOp::kIdentity || op == AugmentOp::kEqualize) {
      ASSERT_EQ(m, 0);
    }
  }
  for (int op = 0; op < kAugmentSpaceOps; ++op) {
    EXPECT_NEAR(counts[static_cast<size_t>(op)], kDraws / kAugmentSpaceOps, 200)
        << augment_op_name(static_cast<AugmentOp>(op));
  }
  EXPECT_NEAR(static_cast<double>(negative) / signed_ops, 0.5, 0.05);
}

TEST(AutoAugmentDrawTest, RandAugmentAndAutoAugment) {
  AutoAugmentSpec ra;
  ra.kind = AutoAugmentKind::kRandAugment;
  ra.num_ops = 3;
  ra.magnitude = 30;  // the last bin: the strongest magnitudes of the space
  SampleRng rng(5, 0, 0);
  SampleParams params;
  for (int i = 0; i < 200; ++i) {
    draw_auto_augment(ra, 200, 100, rng, &params);
    ASSERT_EQ(params.augment_steps, 3);
    for (int s = 0; s < 3; ++s) {
      const SampleParams::AugmentStep& step = params.augment[static_cast<size_t>(s)];
      const float m = std::abs(step.magnitude);
      switch (static_cast<AugmentOp>(step.op)) {
        case AugmentOp::kRotate:
          ASSERT_FLOAT_EQ(m, 30.0f);
          break;
        case AugmentOp::kTranslateX:
          ASSERT_FLOAT_EQ(m, 150.0f / 331.0f * 200);
          break;
        case AugmentOp::kTranslateY:
          ASSERT_FLOAT_EQ(m, 150.0f / 331.0f * 100);
          break;
        case AugmentOp::kPosterize:
          ASSERT_EQ(m, 4.0f);
          break;
        case AugmentOp::kSolarize:
          ASSERT_EQ(m, 0.0f);
          break;
        default:
          break;
      }
    }
  }
  ra.num_ops = 0;
  draw_auto_augment(ra, 200, 100, rng, &params);
  EXPECT_EQ(params.augment_steps, 0);

  // AutoAugment's ImageNet policy: every step of 25 sub-policies applies with its own
  // probability; overall the share of steps that run is their mean p, 0.62.
  AutoAugmentSpec aa;
  aa.kind = AutoAugmentKind::kAutoAugment;
  int steps = 0;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    SampleRng r(9, 1, static_cast<uint64_t>(i));
    draw_auto_augment(aa, 64, 64, r, &params);
    ASSERT_LE(params.augment_steps, 2);
    steps += params.augment_steps;
    for (int s = 0; s < params.augment_steps; ++s) {
      const auto op = static_cast<AugmentOp>(params.augment[static_cast<size_t>(s)].op);
      ASSERT_TRUE(op != AugmentOp::kTranslateX && op != AugmentOp::kTranslateY && op != AugmentOp::kIdentity &&
                  op != AugmentOp::kBrightness)
          << augment_op_name(op) << " is not in the ImageNet policy";
    }
  }
  EXPECT_NEAR(static_cast<double>(steps) / (2.0 * kDraws), 0.62, 0.01);
}

TEST(AutoAugmentDrawTest, AugMixDrawsChainsAndWeightsThatSumToOne) {
  AutoAugmentSpec spec;
  spec.kind = AutoAugmentKind::kAugMix;
  std::array<int, 4> depths{};  // chain depths 1..3 when chain_depth is -1
  std::array<int, 15> ops{};
  double image_share = 0;
  constexpr int kDraws = 4000;
  for (int i = 0; i < kDraws; ++i) {
    SampleRng rng(3, 0, static_cast<uint64_t>(i));
    SampleParams p;
    draw_auto_augment(spec, 90, 60, rng, &p);
    ASSERT_EQ(p.chains, 3);
    float sum = 0;
    for (int c = 0; c <= p.chains; ++c) {
      ASSERT_GE(p.mix_weight[static_cast<size_t>(c)], 0.0f);
      sum += p.mix_weight[static_cast<size_t>(c)];
    }
    ASSERT_NEAR(sum, 1.0f, 1e-5f);
    image_share += p.mix_weight[0];
    int steps = 0;
    for (int c = 0; c < p.chains; ++c) {
      const int depth = p.chain_length[static_cast<size_t>(c)];
      ASSERT_GE(depth, 1);
      ASSERT_LE(depth, 3);
      ++depths[static_cast<size_t>(depth)];
      steps += depth;
    }
    ASSERT_EQ(p.augment_steps, steps);
    for (int s = 0; s < steps; ++s) {
      const auto& step = p.augment[static_cast<size_t>(s)];
      ++ops[step.op];
      const auto op = static_cast<AugmentOp>(step.op);
      const float m = std::abs(step.magnitude);
      // severity 3: bins 0..2 of 10, so at most 2/9 of each range
      if (op == AugmentOp::kRotate || op == AugmentOp::kTranslateX) {  // 30 degrees; 90 / 3 pixels
        ASSERT_LE(m, 30.0f * 2 / 9 + 1e-4f);
      }
      if (op == AugmentOp::kPosterize) {
        ASSERT_GE(m, 3.0f);  // 4, 4, 3 bits
      }
      if (op == AugmentOp::kSolarize) {
        ASSERT_GE(m, 255.0f * 7 / 9 - 1e-3f);
      }
    }
  }
  // Dirichlet(1, 1): the image's share is uniform, mean 1/2.
  EXPECT_NEAR(image_share / kDraws, 0.5, 0.02);
  EXPECT_NEAR(depths[1], kDraws, kDraws * 0.1);  // 3 chains x 4000 draws, a third each
  EXPECT_NEAR(depths[3], kDraws, kDraws * 0.1);
  // The 13 operations of AugMix's space, alike; never Identity or Invert.
  EXPECT_EQ(ops[static_cast<size_t>(AugmentOp::kIdentity)], 0);
  EXPECT_EQ(ops[static_cast<size_t>(AugmentOp::kInvert)], 0);
  for (int i = 0; i < aug_mix_ops(true); ++i) EXPECT_GT(ops[static_cast<size_t>(aug_mix_op(i))], 500);

  spec.all_ops = false;  // without the colour operations; fixed depth
  spec.chain_depth = 2;
  spec.mixture_width = 5;
  for (int i = 0; i < 500; ++i) {
    SampleRng rng(4, 0, static_cast<uint64_t>(i));
    SampleParams p;
    draw_auto_augment(spec, 90, 60, rng, &p);
    ASSERT_EQ(p.chains, 5);
    ASSERT_EQ(p.augment_steps, 10);
    for (int s = 0; s < 10; ++s) {
      const auto op = static_cast<AugmentOp>(p.augment[static_cast<size_t>(s)].op);
      ASSERT_TRUE(op != AugmentOp::kBrightness && op != AugmentOp::kColor && op != AugmentOp::kContrast &&
                  op != AugmentOp::kSharpness);
    }
  }
}

TEST(AutoAugmentOpsTest, AugMixSumsTheImageAndItsChainsAndTruncates) {
  std::vector<uint8_t> image = planes(3);
  const std::vector<uint8_t> original = image;
  SampleParams p;
  p.chains = 2;
  p.chain_length = {1, 2};
  p.augment_steps = 3;
  p.augment[0] = {static_cast<uint8_t>(AugmentOp::kPosterize), 0};  // bits 0: black
  p.augment[1] = {static_cast<uint8_t>(AugmentOp::kSolarize), 0};   // every value inverted
  p.augment[2] = {static_cast<uint8_t>(AugmentOp::kPosterize), 8};  // unchanged
  p.mix_weight = {0.5f, 0.2f, 0.3f};
  std::vector<uint8_t> chain, scratch;
  std::vector<float> mix;
  apply_aug_mix(p, AutoAugmentSpec{}, &image, &chain, &scratch, &mix, kW, kH, 3);
  for (size_t i = 0; i < image.size(); ++i) {
    const float v = original[i];
    const float expected = 0.5f * v + 0.2f * 0.0f + 0.3f * (255.0f - v);
    ASSERT_EQ(image[i], static_cast<uint8_t>(expected)) << i;  // truncated, as .to(uint8)
  }
}

TEST(AutoAugmentDrawTest, MagnitudesAreTorchvisionsSpaces) {
  // TrivialAugmentWide: 31 bins up to 0.99 / 32 px / 135 degrees; Posterize 8..2 bits.
  const auto ta = [](AugmentOp op, int bin) {
    return augment_magnitude(AutoAugmentKind::kTrivialAugmentWide, op, bin, 31, 224, 224);
  };
  EXPECT_FLOAT_EQ(ta(AugmentOp::kShearX, 30), 0.99f);
  EXPECT_FLOAT_EQ(ta(AugmentOp::kTranslateY, 15), 16.0f);
  EXPECT_FLOAT_EQ(ta(AugmentOp::kRotate, 30), 135.0f);
  EXPECT_EQ(ta(AugmentOp::kPosterize, 0), 8.0f);
  EXPECT_EQ(ta(AugmentOp::kPosterize, 30), 2.0f);
  EXPECT_EQ(ta(AugmentOp::kPosterize, 12), 6.0f);  // 8 - round(12 / 5)
  EXPECT_EQ(ta(AugmentOp::kSolarize, 0), 255.0f);
  EXPECT_EQ(ta(AugmentOp::kSolarize, 30), 0.0f);
  EXPECT_EQ(ta(AugmentOp::kEqualize, 7), 0.0f);
  // AutoAugment: 10 bins, Posterize 8..4 bits.
  EXPECT_EQ(augment_magnitude(AutoAugmentKind::kAutoAugment, AugmentOp::kPosterize, 8, 10, 32, 32), 4.0f);
  EXPECT_FLOAT_EQ(augment_magnitude(AutoAugmentKind::kAutoAugment, AugmentOp::kRotate, 9, 10, 32, 32), 30.0f);
}

TEST(RandomErasingTest, BoxesFollowScaleRatioAndProbability) {
  RandomErasingSpec spec;
  spec.p = 0.5;
  int erased = 0;
  constexpr int kDraws = 4000;
  for (int i = 0; i < kDraws; ++i) {
    SampleRng rng(11, 0, static_cast<uint64_t>(i));
    SampleParams params;
    draw_random_erasing(spec, 100, 80, rng, &params);
    if (!params.erase) continue;
    ++erased;
    const double area = static_cast<double>(params.erase_width) * params.erase_height / (100.0 * 80.0);
    EXPECT_GE(area, 0.02 * 0.8) << i;  // rounding the sides moves the area a little
    EXPECT_LE(area, 0.33 * 1.2) << i;
    const double ratio = static_cast<double>(params.erase_height) / params.erase_width;  // h / w, as torchvision
    EXPECT_GE(ratio, 0.3 * 0.7) << i;
    EXPECT_LE(ratio, 3.3 / 0.7) << i;
    EXPECT_LT(params.erase_height, 80);
    EXPECT_LT(params.erase_width, 100);
    EXPECT_LE(params.erase_top + params.erase_height, 80);
    EXPECT_LE(params.erase_left + params.erase_width, 100);
  }
  EXPECT_NEAR(static_cast<double>(erased) / kDraws, 0.5, 0.03);
  spec.p = 0;
  SampleRng rng(1, 2, 3);
  const SampleRng before = rng;
  SampleParams params;
  draw_random_erasing(spec, 100, 80, rng, &params);
  EXPECT_FALSE(params.erase);
  EXPECT_EQ(SampleRng(before).next_u64(), rng.next_u64()) << "p = 0 draws nothing";
}

// A 16x12 grey-to-colour image through SampleTransformer with an identity geometry.
std::vector<uint8_t> transformed(const TransformSpec& spec, const SampleParams& params) {
  const Image image = testing::make_photo_like(spec.out_width, spec.out_height, 3, 2);
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer transformer;
  transformer.run(out.data(), image, {0, 0, static_cast<double>(spec.out_width), static_cast<double>(spec.out_height)},
                  params, spec);
  return out;
}

TEST(RandomErasingTest, WritesTheValueInTheOutputsUnits) {
  TransformSpec spec = parse_transforms("none, Normalize, RandomErasing(1, value=(0, 1, -1))");
  spec.out_width = 16;
  spec.out_height = 12;
  SampleParams params;
  params.erase = true;
  params.erase_top = 2;
  params.erase_left = 3;
  params.erase_height = 4;
  params.erase_width = 5;
  const auto inside = [&](int x, int y) { return y >= 2 && y < 6 && x >= 3 && x < 8; };

  TransformSpec plain_spec = spec;
  plain_spec.erasing = RandomErasingSpec{};
  const std::vector<uint8_t> plain_bytes = transformed(plain_spec, SampleParams{});
  std::vector<float> plain(plain_bytes.size() / 4);
  std::memcpy(plain.data(), plain_bytes.data(), plain_bytes.size());
  const std::vector<uint8_t> bytes = transformed(spec, params);
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 12; ++y) {
      for (int x = 0; x < 16; ++x) {
        const size_t at = (static_cast<size_t>(c) * 12 + y) * 16 + x;
        ASSERT_EQ(out[at], inside(x, y) ? spec.erasing.value[static_cast<size_t>(c)] : plain[at]) << c << y << x;
      }
    }
  }

  // uint8 (Normalize left to the device): the value mapped back to pixels, mean + value * std.
  spec.dtype = DType::kUint8;
  spec.layout = Layout::kNHWC;
  const std::vector<uint8_t> pixels = transformed(spec, params);
  const std::array<int, 3> expected{static_cast<int>(std::lround(255 * 0.485)),
                                    static_cast<int>(std::lround(255 * (0.456 + 0.224))),
                                    static_cast<int>(std::lround(255 * (0.406 - 0.225)))};
  for (int c = 0; c < 3; ++c) EXPECT_EQ(pixels[(3 * 16 + 4) * 3 + c], expected[static_cast<size_t>(c)]) << c;

  // value=random: noise of mean 0 and deviation 1, reproducible from the drawn seed.
  spec = parse_transforms("none, RandomErasing(1, scale=(0.5, 0.5), value=random)");
  spec.out_width = 64;
  spec.out_height = 64;
  SampleRng rng(4, 0, 0);
  const SampleParams drawn = draw_params(spec, 64, 64, rng);
  ASSERT_TRUE(drawn.erase);
  const std::vector<uint8_t> noisy_bytes = transformed(spec, drawn);
  EXPECT_EQ(transformed(spec, drawn), noisy_bytes);
  std::vector<float> noisy(noisy_bytes.size() / 4);
  std::memcpy(noisy.data(), noisy_bytes.data(), noisy_bytes.size());
  double sum = 0;
  double squares = 0;
  int n = 0;
  for (int c = 0; c < 3; ++c) {
    for (int y = drawn.erase_top; y < drawn.erase_top + drawn.erase_height; ++y) {
      for (int x = drawn.erase_left; x < drawn.erase_left + drawn.erase_width; ++x) {
        const double v = noisy[(static_cast<size_t>(c) * 64 + y) * 64 + x];
        sum += v;
        squares += v * v;
        ++n;
      }
    }
  }
  EXPECT_NEAR(sum / n, 0.0, 0.06);
  EXPECT_NEAR(std::sqrt(squares / n - (sum / n) * (sum / n)), 1.0, 0.05);
}

TEST(AutoAugmentTransformerTest, RunsTheDrawnStepsOnTheRoundedImage) {
  // Invert through SampleTransformer equals 255 minus the plain output, rounded to uint8 first.
  TransformSpec spec = parse_transforms("none, AutoAugment, ToUint8");
  spec.out_width = 16;
  spec.out_height = 12;
  SampleParams params;
  params.augment_steps = 2;
  params.augment[0] = {static_cast<uint8_t>(AugmentOp::kInvert), 0};
  params.augment[1] = {static_cast<uint8_t>(AugmentOp::kPosterize), 6};
  TransformSpec plain_spec = spec;
  plain_spec.auto_augment = AutoAugmentSpec{};
  const std::vector<uint8_t> plain = transformed(plain_spec, SampleParams{});
  for (const Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
    spec.layout = layout;
    plain_spec.layout = layout;
    const std::vector<uint8_t> out = transformed(spec, params);
    const std::vector<uint8_t> base = transformed(plain_spec, SampleParams{});
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], (255 - base[i]) & 0xFC) << i;
  }
  EXPECT_EQ(plain.size(), spec.sample_bytes());
}

}  // namespace
}  // namespace stoker::data
