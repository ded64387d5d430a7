// The continuous draws (stoker/core/distributions.h): their moments over many draws, and
// that they are functions of the generator alone.
#include "stoker/core/distributions.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

namespace stoker {
namespace {

TEST(DistributionsTest, StandardNormalHasMeanZeroAndVarianceOne) {
  SampleRng rng(1, 2, 3);
  double sum = 0, squares = 0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) {
    const double x = standard_normal(rng);
    sum += x;
    squares += x * x;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.01);
  EXPECT_NEAR(squares / kDraws, 1.0, 0.02);
}

// Dirichlet(a, ..., a) of n: each component has mean 1/n and variance (n - 1) / (n² (n a + 1)).
TEST(DistributionsTest, DirichletComponentsSumToOneWithTheirMoments) {
  for (const auto& [a, n] : std::vector<std::pair<double, int>>{{1.0, 3}, {0.3, 2}, {4.0, 5}, {0.05, 4}}) {
    SCOPED_TRACE(::testing::Message() << "alpha " << a << ", " << n << " components");
    SampleRng rng(7, static_cast<uint64_t>(n), static_cast<uint64_t>(a * 100));
    constexpr int kDraws = 40000;
    std::vector<double> sum(static_cast<size_t>(n)), squares(static_cast<size_t>(n));
    std::array<double, 8> w{};
    for (int i = 0; i < kDraws; ++i) {
      dirichlet_draw(rng, a, n, w.data());
      double total = 0;
      for (int k = 0; k < n; ++k) {
        ASSERT_TRUE(w[static_cast<size_t>(k)] >= 0 && std::isfinite(w[static_cast<size_t>(k)]));
        total += w[static_cast<size_t>(k)];
        sum[static_cast<size_t>(k)] += w[static_cast<size_t>(k)];
        squares[static_cast<size_t>(k)] += w[static_cast<size_t>(k)] * w[static_cast<size_t>(k)];
      }
      ASSERT_NEAR(total, 1.0, 1e-12);
    }
    const double variance = (n - 1.0) / (n * n * (n * a + 1));
    for (int k = 0; k < n; ++k) {
      const double mean = sum[static_cast<size_t>(k)] / kDraws;
      EXPECT_NEAR(mean, 1.0 / n, 0.01);
      EXPECT_NEAR(squares[static_cast<size_t>(k)] / kDraws - mean * mean, variance, variance * 0.06);
    }
  }
}

TEST(DistributionsTest, DrawsAreFunctionsOfTheGenerator) {
  SampleRng a(5, 6, 7), b(5, 6, 7);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(beta_draw(a, 0.2), beta_draw(b, 0.2));
  std::array<double, 3> x{}, y{};
  dirichlet_draw(a, 1.0, 3, x.data());
  dirichlet_draw(b, 1.0, 3, y.data());
  EXPECT_EQ(x, y);
}

}  // namespace
}  // namespace stoker
