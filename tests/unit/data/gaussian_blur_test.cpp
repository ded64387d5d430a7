#include "data/transform/gaussian_blur.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

namespace stoker::data {
namespace {

TEST(GaussianBlurTest, KernelIsTorchvisionsNormalisedGaussian) {
  const std::vector<float> k = gaussian_kernel(3, 1.0f);
  ASSERT_EQ(k.size(), 3u);
  const float e = std::exp(-0.5f);  // x = -1, 0, 1
  EXPECT_FLOAT_EQ(k[0], e / (1 + 2 * e));
  EXPECT_FLOAT_EQ(k[1], 1 / (1 + 2 * e));
  EXPECT_EQ(k[0], k[2]);
  const std::vector<float> wide = gaussian_kernel(23, 1.7f);
  EXPECT_NEAR(std::accumulate(wide.begin(), wide.end(), 0.0), 1.0, 1e-6);
  for (size_t i = 0; i < wide.size() / 2; ++i) EXPECT_EQ(wide[i], wide[wide.size() - 1 - i]);
  EXPECT_EQ(gaussian_kernel(1, 0.5f), std::vector<float>{1.0f});
}

TEST(GaussianBlurTest, SeparableWithReflectPadding) {
  // One row: out[0] reflects without repeating the edge, as torch's "reflect" padding.
  std::vector<float> row{10, 40, 90, 160, 250};
  std::vector<float> scratch;
  gaussian_blur(row.data(), 5, 1, 1, true, 3, 1, 1.0f, &scratch);
  const std::vector<float> k = gaussian_kernel(3, 1.0f);
  EXPECT_FLOAT_EQ(row[0], k[0] * 40 + k[1] * 10 + k[2] * 40);
  EXPECT_FLOAT_EQ(row[2], k[0] * 40 + k[1] * 90 + k[2] * 160);
  EXPECT_FLOAT_EQ(row[4], k[0] * 160 + k[1] * 250 + k[2] * 160);

  // A constant image stays constant; one bright pixel spreads as the outer product of the
  // kernels, in both layouts.
  for (const bool planar : {true, false}) {
    SCOPED_TRACE(planar ? "planar" : "interleaved");
    const int w = 9, h = 7;
    std::vector<float> image(static_cast<size_t>(w) * h * 3, 0.0f);
    const auto at = [&](int x, int y, int c) -> float& {
      return image[planar ? (static_cast<size_t>(c) * h + y) * w + x : (static_cast<size_t>(y) * w + x) * 3 + c];
    };
    for (int c = 0; c < 3; ++c) at(4, 3, c) = 100.0f * (c + 1);
    gaussian_blur(image.data(), w, h, 3, planar, 5, 3, 0.8f, &scratch);
    const std::vector<float> kx = gaussian_kernel(5, 0.8f), ky = gaussian_kernel(3, 0.8f);
    for (int c = 0; c < 3; ++c) {
      for (int y = 2; y <= 4; ++y) {
        for (int x = 2; x <= 6; ++x) EXPECT_NEAR(at(x, y, c), 100.0f * (c + 1) * kx[x - 2] * ky[y - 2], 1e-4);
      }
      EXPECT_EQ(at(0, 0, c), 0.0f);
    }
    std::fill(image.begin(), image.end(), 77.0f);
    gaussian_blur(image.data(), w, h, 3, planar, 7, 7, 2.0f, &scratch);
    for (const float v : image) EXPECT_NEAR(v, 77.0f, 1e-4);
  }
}

TEST(GaussianBlurTest, AKernelWiderThanTheImageReflectsPeriodically) {
  std::vector<float> row{0, 255};
  std::vector<float> scratch;
  gaussian_blur(row.data(), 2, 1, 1, true, 7, 1, 3.0f, &scratch);  // reads 255 0 255 | 0 255 | 0 255 ...
  for (const float v : row) {
    EXPECT_GT(v, 0.0f);
    EXPECT_LT(v, 255.0f);
  }
}

}  // namespace
}  // namespace stoker::data
