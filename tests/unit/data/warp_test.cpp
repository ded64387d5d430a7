// The warp's vector paths against one pixel at a time: warp.h promises that the lanes do, per
// pixel, the float32 operations of the plain per-pixel code in its order, so the bytes must
// be equal, not close. (How the warp compares with torchvision itself is the integration test
// auto_augment_torchvision_test.cpp.)
#include "data/transform/warp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "data/transform/u8_cast.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

// grid_sample of _gen_affine_grid's grid, one output pixel at a time, written from
// torchvision's formulas: the reference the vector code is held to.
std::vector<uint8_t> reference_warp(const std::array<double, 6>& matrix, const AutoAugmentSpec& spec,
                                    const std::vector<uint8_t>& in, int width, int height, int channels) {
  const float half_w = 0.5f * static_cast<float>(width);
  const float half_h = 0.5f * static_cast<float>(height);
  std::array<float, 6> theta{};
  for (size_t i = 0; i < 6; ++i) theta[i] = static_cast<float>(matrix[i]);
  const float r00 = theta[0] / half_w, r10 = theta[1] / half_w, r20 = theta[2] / half_w;
  const float r01 = theta[3] / half_h, r11 = theta[4] / half_h, r21 = theta[5] / half_h;
  const auto fw = static_cast<float>(width);
  const auto fh = static_cast<float>(height);
  const auto clamp_far = [](float v) {
    constexpr float kFar = 4194304.0f;  // 2^22, as the warp clamps
    return std::min(std::max(v, -kFar), kFar);
  };
  const size_t plane = static_cast<size_t>(width) * height;
  std::vector<uint8_t> out(in.size());
  for (int j = 0; j < height; ++j) {
    for (int k = 0; k < width; ++k) {
      const float x = (-half_w + 0.5f) + static_cast<float>(k);
      const float y = -half_h + 0.5f + static_cast<float>(j);
      const float gx = x * r00 + y * r10 + r20;
      const float gy = x * r01 + y * r11 + r21;
      const float ix = clamp_far(((gx + 1.0f) * fw - 1.0f) / 2.0f);
      const float iy = clamp_far(((gy + 1.0f) * fh - 1.0f) / 2.0f);
      const size_t at = static_cast<size_t>(j) * width + k;
      for (int c = 0; c < channels; ++c) {
        const uint8_t* src = in.data() + c * plane;
        const float fill = spec.has_fill ? spec.fill[static_cast<size_t>(c)] : 0.0f;
        if (spec.interpolation == Interpolation::kNearest) {
          const auto xn = static_cast<int>(round_even(ix));
          const auto yn = static_cast<int>(round_even(iy));
          const bool on = xn >= 0 && xn < width && yn >= 0 && yn < height;
          out[c * plane + at] = on ? src[yn * width + xn] : round_u8(fill);
          continue;
        }
        const auto x0 = static_cast<int>(std::floor(ix));
        const auto y0 = static_cast<int>(std::floor(iy));
        const float we = ix - static_cast<float>(x0), ea = 1.0f - we;
        const float no = iy - static_cast<float>(y0), so = 1.0f - no;
        const std::array<float, 4> weight{so * ea, so * we, no * ea, no * we};
        const std::array<std::array<int, 2>, 4> tap{{{x0, y0}, {x0 + 1, y0}, {x0, y0 + 1}, {x0 + 1, y0 + 1}}};
        float v = 0;
        float mask = 0;  // grid_sample of an image of ones
        for (size_t t = 0; t < 4; ++t) {
          const auto [xx, yy] = tap[t];
          if (xx < 0 || xx >= width || yy < 0 || yy >= height) continue;  // zero padding
          v += weight[t] * static_cast<float>(src[yy * width + xx]);
          mask += weight[t];
        }
        if (spec.has_fill) v = v * mask + (1.0f - mask) * fill;
        out[c * plane + at] = round_u8(v);
      }
    }
  }
  return out;
}

struct WarpCase {
  int width;
  int height;
  int channels;
  std::array<double, 6> matrix;
};

// Rotations, shears, scales and translations of every size up to 13 and a few larger ones,
// plus matrices that throw the grid far off the image.
std::vector<WarpCase> warp_cases() {
  std::mt19937 gen(2026);
  std::uniform_real_distribution<double> angle(-180, 180), shear(-40, 40), scale(0.5, 2.0), shift(-8, 8);
  std::vector<WarpCase> cases;
  const std::vector<std::array<int, 2>> sizes{{1, 1}, {2, 1}, {1, 3},  {3, 3},   {4, 4},   {5, 2},   {7, 9},
                                              {8, 8}, {9, 4}, {13, 6}, {16, 17}, {31, 12}, {64, 48}, {97, 70}};
  for (const auto& [w, h] : sizes) {
    for (const int channels : {1, 3}) {
      for (int i = 0; i < 6; ++i) {
        cases.push_back({w, h, channels,
                         inverse_affine(shift(gen), shift(gen), angle(gen), shift(gen), shift(gen),
                                        i % 2 == 0 ? shear(gen) : 0.0, i % 3 == 0 ? shear(gen) : 0.0, scale(gen))});
      }
      cases.push_back({w, h, channels, inverse_affine(0, 0, 90, 0, 0, 0, 0)});        // exact quarter turn
      cases.push_back({w, h, channels, inverse_affine(0, 0, 0, 0.5, -0.5, 0, 0)});    // half-pixel taps
      cases.push_back({w, h, channels, inverse_affine(0, 0, 10, 1e6, 0, 0, 0)});      // all off the image
      cases.push_back({w, h, channels, inverse_affine(0, 0, 30, 0, 0, 0, 0, 1e-4)});  // 10,000× zoom out
    }
  }
  return cases;
}

std::vector<uint8_t> random_planes(std::mt19937& gen, size_t n) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(byte(gen));
  return v;
}

void expect_same_as_reference(const AutoAugmentSpec& spec) {
  std::mt19937 gen(7);
  int checked = 0;
  for (const WarpCase& wc : warp_cases()) {
    const size_t n = static_cast<size_t>(wc.width) * wc.height * static_cast<size_t>(wc.channels);
    const std::vector<uint8_t> in = random_planes(gen, n);
    std::vector<uint8_t> out(n, 0xAB);
    warp(wc.matrix, spec, in.data(), out.data(), wc.width, wc.height, wc.channels);
    const std::vector<uint8_t> want = reference_warp(wc.matrix, spec, in, wc.width, wc.height, wc.channels);
    const auto first = std::mismatch(out.begin(), out.end(), want.begin());
    ASSERT_TRUE(first.first == out.end())
        << wc.width << "x" << wc.height << "x" << wc.channels << ": byte " << (first.first - out.begin()) << " is "
        << int{*first.first} << ", the per-pixel warp gives " << int{*first.second};
    ++checked;
  }
  EXPECT_EQ(checked, 280);  // 14 sizes × 2 channel counts × 10 matrices
}

TEST(WarpTest, NearestEqualsThePerPixelWarp) {
  AutoAugmentSpec spec;
  spec.interpolation = Interpolation::kNearest;
  expect_same_as_reference(spec);
}

TEST(WarpTest, BilinearEqualsThePerPixelWarp) {
  AutoAugmentSpec spec;
  spec.interpolation = Interpolation::kBilinear;
  expect_same_as_reference(spec);
}

TEST(WarpTest, WithAFillEqualsThePerPixelWarp) {
  for (const Interpolation interpolation : {Interpolation::kNearest, Interpolation::kBilinear}) {
    AutoAugmentSpec spec;
    spec.interpolation = interpolation;
    spec.has_fill = true;
    spec.fill = {17.4f, 200.6f, 128.5f};  // fractions, so the mask blend's rounding shows
    expect_same_as_reference(spec);
  }
}

// The interior of a turned image is what the vector paths compute; a warp whose every tap
// lands inside (a slight zoom in) must still equal the reference everywhere.
TEST(WarpTest, AllTapsInsideEqualsThePerPixelWarp) {
  std::mt19937 gen(11);
  for (const Interpolation interpolation : {Interpolation::kNearest, Interpolation::kBilinear}) {
    AutoAugmentSpec spec;
    spec.interpolation = interpolation;
    for (const int side : {4, 8, 12, 224}) {
      const auto matrix = inverse_affine(0, 0, 7.5, 0.25, -0.75, 3, -2, 1.25);
      const size_t n = static_cast<size_t>(side) * side * 3;
      const std::vector<uint8_t> in = random_planes(gen, n);
      std::vector<uint8_t> out(n);
      warp(matrix, spec, in.data(), out.data(), side, side, 3);
      EXPECT_EQ(out, reference_warp(matrix, spec, in, side, side, 3)) << side;
    }
  }
}

}  // namespace
}  // namespace stoker::data
