#include "data/transform/color_jitter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

// 23 pixels: not a multiple of the vector width, so tails are exercised too.
constexpr size_t kPixels = 23;
constexpr bool kPlanar = true;

// A colourful deterministic image in [0, 255], planar (CHW).
std::vector<float> colourful(int channels) {
  std::vector<float> v(kPixels * channels);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 97 + 31) % 256);
  return v;
}

float luma(const std::vector<float>& planes, size_t p) {
  return 0.299f * planes[p] + 0.587f * planes[kPixels + p] + 0.114f * planes[2 * kPixels + p];
}

SampleParams only(int op, double factor) {
  SampleParams p;
  switch (op) {
    case 0:
      p.brightness = factor;
      break;
    case 1:
      p.contrast = factor;
      break;
    case 2:
      p.saturation = factor;
      break;
    case 3:
      p.hue = factor;
      break;
    default:
      break;
  }
  return p;
}

TEST(ColorJitterTest, NeutralFactorsAreIdentity) {
  for (const int channels : {1, 3}) {
    const std::vector<float> before = colourful(channels);
    std::vector<float> v = before;
    SampleParams p;
    p.jitter_order = {2, 0, 3, 1};
    apply_color_jitter(v.data(), kPixels, channels, kPlanar, p);
    EXPECT_EQ(v, before);
  }
}

TEST(ColorJitterTest, BrightnessScalesAndClamps) {
  std::vector<float> v = colourful(3);
  const std::vector<float> before = v;
  apply_color_jitter(v.data(), kPixels, 3, kPlanar, only(0, 0.0));
  for (const float x : v) EXPECT_EQ(x, 0.0f);

  v = before;
  apply_color_jitter(v.data(), kPixels, 3, kPlanar, only(0, 1.5));
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_FLOAT_EQ(v[i], std::min(before[i] * 1.5f, 255.0f));
  }
}

TEST(ColorJitterTest, ContrastBlendsWithRoundedMeanGrey) {
  for (const int channels : {1, 3}) {
    std::vector<float> v = colourful(channels);
    const std::vector<float> before = v;
    double sum = 0;
    for (size_t p = 0; p < kPixels; ++p) sum += channels == 3 ? luma(before, p) : before[p];
    const auto mean = static_cast<float>(std::floor(sum / kPixels + 0.5));

    apply_color_jitter(v.data(), kPixels, channels, kPlanar, only(1, 0.0));
    for (const float x : v) EXPECT_FLOAT_EQ(x, mean);

    v = before;
    apply_color_jitter(v.data(), kPixels, channels, kPlanar, only(1, 1.8));
    for (size_t i = 0; i < v.size(); ++i) {
      const float expected = std::clamp(mean + 1.8f * (before[i] - mean), 0.0f, 255.0f);
      EXPECT_NEAR(v[i], expected, 1e-3);
    }
  }
}

TEST(ColorJitterTest, SaturationZeroIsGrey) {
  std::vector<float> v = colourful(3);
  const std::vector<float> before = v;
  apply_color_jitter(v.data(), kPixels, 3, kPlanar, only(2, 0.0));
  for (size_t p = 0; p < kPixels; ++p) {
    const float grey = luma(before, p);
    for (size_t c = 0; c < 3; ++c) EXPECT_NEAR(v[c * kPixels + p], grey, 1e-3);
  }
  // Saturation 2 pushes away from grey, clamped.
  v = before;
  apply_color_jitter(v.data(), kPixels, 3, kPlanar, only(2, 2.0));
  for (size_t p = 0; p < kPixels; ++p) {
    const float grey = luma(before, p);
    for (size_t c = 0; c < 3; ++c) {
      const size_t i = c * kPixels + p;
      EXPECT_NEAR(v[i], std::clamp(2 * before[i] - grey, 0.0f, 255.0f), 1e-3);
    }
  }
}

TEST(ColorJitterTest, HueRotates) {
  struct Case {
    float rgb[3];
    double shift;
    float expected[3];
  };
  const std::vector<Case> cases = {
      {{255, 0, 0}, 1.0 / 3, {0, 255, 0}},    // red -> green
      {{255, 0, 0}, -1.0 / 3, {0, 0, 255}},   // red -> blue
      {{0, 0, 255}, 1.0 / 3, {255, 0, 0}},    // blue -> red (wraps)
      {{200, 100, 50}, 0.5, {50, 150, 200}},  // complement keeps max, min
      {{90, 90, 90}, 0.25, {90, 90, 90}},     // grey has no hue
      {{255, 255, 0}, 1.0 / 6, {0, 255, 0}},  // yellow -> green
  };
  for (const Case& c : cases) {
    std::vector<float> v(c.rgb, c.rgb + 3);  // one pixel: planes of one float
    apply_color_jitter(v.data(), 1, 3, kPlanar, only(3, c.shift));
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(v[k], c.expected[k], 1e-3) << c.shift << " " << k;
  }
}

TEST(ColorJitterTest, HalfTurnTwiceIsIdentity) {
  std::vector<float> v = colourful(3);
  const std::vector<float> before = v;
  apply_color_jitter(v.data(), kPixels, 3, kPlanar, only(3, 0.5));
  EXPECT_NE(v, before);
  apply_color_jitter(v.data(), kPixels, 3, kPlanar, only(3, 0.5));
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], before[i], 1e-2) << i;
}

TEST(ColorJitterTest, GreyImagesIgnoreSaturationAndHue) {
  std::vector<float> v = colourful(1);
  const std::vector<float> before = v;
  SampleParams p;
  p.saturation = 0.0;
  p.hue = 0.3;
  apply_color_jitter(v.data(), kPixels, 1, kPlanar, p);
  EXPECT_EQ(v, before);
  p.brightness = 0.5;
  apply_color_jitter(v.data(), kPixels, 1, kPlanar, p);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_FLOAT_EQ(v[i], before[i] * 0.5f);
}

TEST(ColorJitterTest, AppliesInTheDrawnOrder) {
  // Brightness 2 then contrast 0 gives the mean of the brightened (clamped) image; the other
  // order gives twice the mean of the original.
  std::vector<float> v(3 * 4, 100.0f);  // 4 grey pixels, planar
  v[0] = v[4] = v[8] = 250.0f;          // one bright pixel that brightening clamps
  const std::vector<float> start = v;
  SampleParams p;
  p.brightness = 2.0;
  p.contrast = 0.0;

  p.jitter_order = {0, 1, 2, 3};
  apply_color_jitter(v.data(), 4, 3, kPlanar, p);
  // brightened: 255 and three 200s -> mean 213.75 -> 214
  EXPECT_FLOAT_EQ(v[5], 214.0f);

  v = start;
  p.jitter_order = {1, 0, 2, 3};
  apply_color_jitter(v.data(), 4, 3, kPlanar, p);
  // mean of 250, 100, 100, 100 = 137.5 -> 138 (PIL rounds half up), doubled = 255 (clamped)
  EXPECT_FLOAT_EQ(v[5], 255.0f);
}

TEST(ColorJitterTest, InterleavedMatchesPlanar) {
  const std::vector<float> planar_before = colourful(3);
  std::vector<float> interleaved(planar_before.size());
  for (size_t p = 0; p < kPixels; ++p) {
    for (size_t c = 0; c < 3; ++c) interleaved[3 * p + c] = planar_before[c * kPixels + p];
  }
  SampleParams params;
  params.brightness = 1.3;
  params.contrast = 0.7;
  params.saturation = 1.6;
  params.hue = -0.2;
  for (const auto& order : std::vector<std::array<int, 4>>{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 3, 0, 1}}) {
    params.jitter_order = order;
    std::vector<float> planar = planar_before;
    std::vector<float> hwc = interleaved;
    apply_color_jitter(planar.data(), kPixels, 3, kPlanar, params);
    apply_color_jitter(hwc.data(), kPixels, 3, !kPlanar, params);
    for (size_t p = 0; p < kPixels; ++p) {
      for (size_t c = 0; c < 3; ++c) {
        EXPECT_NEAR(hwc[3 * p + c], planar[c * kPixels + p], 1e-3) << p << " " << c;
      }
    }
  }
}

}  // namespace
}  // namespace stoker::data
