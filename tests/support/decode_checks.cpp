#include "support/decode_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace stoker::testing {

void expect_window_matches_full(const data::DecodedImage& window, const data::DecodedImage& full, double max_diff) {
  // Window origin in the decoded (scaled) image: integral, since both decodes are at the
  // same scale and the window starts on a whole pixel.
  const double ox = full.crop.x - window.crop.x;
  const double oy = full.crop.y - window.crop.y;
  ASSERT_EQ(ox, std::round(ox));
  ASSERT_EQ(oy, std::round(oy));
  EXPECT_DOUBLE_EQ(window.crop.width, full.crop.width);
  EXPECT_DOUBLE_EQ(window.crop.height, full.crop.height);
  const int x0 = static_cast<int>(std::floor(full.crop.x));
  const int y0 = static_cast<int>(std::floor(full.crop.y));
  const int x1 = static_cast<int>(std::ceil(full.crop.x + full.crop.width));
  const int y1 = static_cast<int>(std::ceil(full.crop.y + full.crop.height));
  const int ch = full.image.channels();
  ASSERT_EQ(window.image.channels(), ch);
  ASSERT_GE(x0 - ox, 0);
  ASSERT_GE(y0 - oy, 0);
  ASSERT_LE(x1 - ox, window.image.width());
  ASSERT_LE(y1 - oy, window.image.height());
  int worst = 0;
  size_t differing = 0;
  for (int y = y0; y < y1; ++y) {
    const uint8_t* a = full.image.row(y) + static_cast<size_t>(x0) * ch;
    const uint8_t* b = window.image.row(y - static_cast<int>(oy)) + static_cast<size_t>(x0 - static_cast<int>(ox)) * ch;
    for (int i = 0; i < (x1 - x0) * ch; ++i) {
      const int d = std::abs(a[i] - b[i]);
      worst = std::max(worst, d);
      differing += d != 0;
    }
  }
  EXPECT_LE(worst, max_diff) << differing << " samples differ";
}

}  // namespace stoker::testing
