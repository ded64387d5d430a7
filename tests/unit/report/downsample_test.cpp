// The min/max downsampler: bounded output, every extreme kept, x order kept, NaN left out;
// and bars grouped to fit a plot's columns.
#include "stoker/report/downsample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace stoker::report {
namespace {

TEST(DownsampleTest, ShortSeriesComeBackAsTheyAreLessNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto out = downsample_min_max({0, 1, 2, 3}, {5, nan, 7, 8}, 10);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].x, 2);
  EXPECT_EQ(out[1].y, 7);
}

TEST(DownsampleTest, TenHoursAtOneHertzFitTwoPointsPerBucketWithTheExtremesKept) {
  const size_t n = 36000, buckets = 600;
  std::vector<double> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(i);
    y[i] = 50 + 30 * std::sin(static_cast<double>(i) / 500);
  }
  y[12345] = 100;  // a one-sample spike
  y[23456] = -5;   // and a one-sample dip
  const auto out = downsample_min_max(x, y, buckets);
  EXPECT_LE(out.size(), 2 * buckets);
  EXPECT_GE(out.size(), buckets);
  const auto has = [&](double px, double py) {
    return std::any_of(out.begin(), out.end(), [&](const Point& p) { return p.x == px && p.y == py; });
  };
  EXPECT_TRUE(has(12345, 100));
  EXPECT_TRUE(has(23456, -5));
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end(), [](const Point& a, const Point& b) { return a.x < b.x; }));
  // Each bucket's own minimum and maximum survive: the envelope is the input's.
  const double span = x.back();
  for (size_t b = 0; b < buckets; b += 37) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
      if (std::min<size_t>(static_cast<size_t>(x[i] / span * buckets), buckets - 1) != b) continue;
      lo = std::min(lo, y[i]);
      hi = std::max(hi, y[i]);
    }
    EXPECT_TRUE(std::any_of(out.begin(), out.end(), [&](const Point& p) { return p.y == lo; })) << b;
    EXPECT_TRUE(std::any_of(out.begin(), out.end(), [&](const Point& p) { return p.y == hi; })) << b;
  }
}

TEST(DownsampleTest, AFlatBucketKeepsOnePointAndOneBucketStillWorks) {
  std::vector<double> x(100), y(100, 3.0);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  EXPECT_EQ(downsample_min_max(x, y, 10).size(), 10u);
  y[40] = 9;
  const auto one = downsample_min_max(x, y, 1);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[1].y, 9);
}

TEST(DownsampleTest, AllTheSameXGoesIntoOneBucket) {
  const std::vector<double> x(50, 7.0);
  std::vector<double> y(50);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(i % 13);
  const auto out = downsample_min_max(x, y, 4);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(std::min(out[0].y, out[1].y), 0);
  EXPECT_EQ(std::max(out[0].y, out[1].y), 12);
}

}  // namespace
TEST(DownsampleTest, BarsFitTheColumnsInGroupsOfEqualSize) {
  const auto alone = bar_groups(5, 10);
  ASSERT_EQ(alone.size(), 5u);
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(alone[i].begin, i);
    EXPECT_EQ(alone[i].end, i + 1);
  }
  const auto groups = bar_groups(300000, 1176);
  EXPECT_LE(groups.size(), 1176u);
  EXPECT_EQ(groups.front().begin, 0u);
  EXPECT_EQ(groups.back().end, 300000u);
  for (size_t i = 1; i < groups.size(); ++i) EXPECT_EQ(groups[i].begin, groups[i - 1].end);
  EXPECT_EQ(groups.front().end, 256u);  // ceil(300000 / 1176)
  EXPECT_TRUE(bar_groups(0, 10).empty());
  EXPECT_EQ(bar_groups(3, 0).size(), 1u);
}

}  // namespace stoker::report
