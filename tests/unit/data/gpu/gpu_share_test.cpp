// GpuShareTuner (decode='auto'): the share of the engine's JPEGs left for the GPU, from the
// host's waits, with synthetic timings.
#include "stoker/data/gpu_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "stoker/core/rng.h"

namespace stoker::data {
namespace gpu_share_test {

constexpr int kWindow = GpuShareTuner::kWindow;

// A training step of `step_s` fed by JPEG engines that take `gpu_s` for a whole batch left to
// them and workers that take `cpu_s` to decode a whole batch on the CPU and `read_s` to read
// and plan any; a batch splits between them by the share. The host waits for the decode
// beyond the step, then for the loader.
struct Machine {
  double step_s = 0.010, gpu_s = 0, cpu_s = 0, read_s = 0;
  // The share after `windows` windows of batches, starting from `tuner`'s; each window's
  // share in *shares.
  double run(GpuShareTuner& tuner, int windows, std::vector<double>* shares = nullptr) const {
    double share = tuner.share();
    for (int w = 0; w < windows; ++w) {
      for (int b = 0; b < kWindow; ++b) {
        const double decode_wait = std::max(0.0, share * gpu_s - step_s);
        const double loader_wait = std::max(0.0, read_s + (1 - share) * cpu_s - step_s - decode_wait);
        share = tuner.observe(loader_wait, decode_wait, step_s + decode_wait + loader_wait);
      }
      if (shares != nullptr) shares->push_back(share);
    }
    return share;
  }
};

TEST(GpuShareTunerTest, StartsWithEveryJpegOnTheGpuAndMovesOnlyAtTheEndOfAWindow) {
  GpuShareTuner tuner;
  EXPECT_EQ(tuner.share(), 1.0);
  for (int b = 0; b < kWindow - 1; ++b) EXPECT_EQ(tuner.observe(0, 0.02, 0.03), 1.0);
  EXPECT_DOUBLE_EQ(tuner.observe(0, 0.02, 0.03), 1.0 - GpuShareTuner::kStep);
}

TEST(GpuShareTunerTest, EnginesBehindTheStepLowerTheShareUntilTheyKeepUpThenItHolds) {
  // The engines take 15 ms for a whole batch against a 10 ms step: they keep up with at most
  // 2/3 of it; the workers, 20 ms for a whole batch, with at least half.
  const Machine machine{.gpu_s = 0.015, .cpu_s = 0.020};
  GpuShareTuner tuner;
  std::vector<double> shares;
  machine.run(tuner, 40, &shares);
  EXPECT_LT(shares[5], 1.0);
  // Settled inside the band where neither waits more than kMaterial, and held there.
  const double settled = shares.back();
  EXPECT_LE(settled * machine.gpu_s, machine.step_s * (1 + 2 * GpuShareTuner::kMaterial));
  EXPECT_GE(settled, 0.5);
  for (size_t w = 20; w < shares.size(); ++w) EXPECT_EQ(shares[w], settled) << "window " << w;
}

TEST(GpuShareTunerTest, AtABalancePointTheShareSettlesWithinTheSmallestStep) {
  // The engines keep up with 5/6 of the batches at most, the workers with 11/12 at least:
  // both wait whatever the share. It narrows in on the balance (near 0.9) instead of swinging
  // a full step either side.
  const Machine machine{.gpu_s = 0.012, .cpu_s = 0.116};
  GpuShareTuner tuner;
  std::vector<double> shares;
  machine.run(tuner, 80, &shares);
  const auto [low, high] = std::minmax_element(shares.begin() + 20, shares.end());
  EXPECT_LE(*high - *low, GpuShareTuner::kMinStep + 1e-12);
  EXPECT_GE(*low, 0.85);
  EXPECT_LE(*high, 0.95);
}

TEST(GpuShareTunerTest, WorkersBehindRaiseTheShareBackToOne) {
  GpuShareTuner tuner;
  // Slow engines first, down to 0.5 or below.
  Machine{.gpu_s = 0.040, .cpu_s = 0.001}.run(tuner, 10);
  ASSERT_LE(tuner.share(), 0.5);
  // Then fast engines and workers slower than the step even without decoding: everything back
  // to the GPU, and no further.
  EXPECT_EQ((Machine{.gpu_s = 0.001, .cpu_s = 0.050, .read_s = 0.012}.run(tuner, 30)), 1.0);
  EXPECT_EQ(tuner.observe(1.0, 0, 1.0), 1.0);
}

TEST(GpuShareTunerTest, BothKeepingUpHoldsTheShare) {
  GpuShareTuner tuner;
  EXPECT_EQ((Machine{.gpu_s = 0.005, .cpu_s = 0.005}.run(tuner, 20)), 1.0);
  Machine{.gpu_s = 0.040, .cpu_s = 0.001}.run(tuner, 4);
  const double lowered = tuner.share();
  ASSERT_LT(lowered, 1.0);
  EXPECT_EQ((Machine{.gpu_s = 0.005, .cpu_s = 0.005}.run(tuner, 20)), lowered);
}

TEST(GpuShareTunerTest, WaitsInsideTheDeadBandAreNoise) {
  // Either wait up to 4 % of the batch (under kMaterial), at random: the share holds, at 1 and
  // lower down.
  SampleRng rng(3, 0, 0);
  const auto noisy = [&](GpuShareTuner& tuner, int batches) {
    for (int b = 0; b < batches; ++b) {
      const double batch_s = rng.uniform(0.01, 0.03);
      tuner.observe(rng.uniform(0, 0.04) * batch_s, rng.uniform(0, 0.04) * batch_s, batch_s);
    }
  };
  GpuShareTuner tuner;
  noisy(tuner, 50 * kWindow);
  EXPECT_EQ(tuner.share(), 1.0);
  Machine{.gpu_s = 0.040, .cpu_s = 0.001}.run(tuner, 6);
  const double lowered = tuner.share();
  ASSERT_LT(lowered, 1.0);
  noisy(tuner, 50 * kWindow);
  EXPECT_EQ(tuner.share(), lowered);
}

TEST(GpuShareTunerTest, TheShareStaysWithinZeroAndOne) {
  GpuShareTuner tuner;
  // Engines that never keep up: every JPEG to the workers, exactly 0, and no further.
  EXPECT_EQ((Machine{.gpu_s = 1.0, .cpu_s = 0.001}.run(tuner, 100)), 0.0);
  for (int b = 0; b < 3 * kWindow; ++b) EXPECT_EQ(tuner.observe(0, 1.0, 1.0), 0.0);
  // Workers that never keep up: back to exactly 1.
  EXPECT_EQ((Machine{.gpu_s = 0.001, .cpu_s = 1.0, .read_s = 0.1}.run(tuner, 100)), 1.0);
  // Nonsense timings count as no wait.
  for (int b = 0; b < 3 * kWindow; ++b) EXPECT_EQ(tuner.observe(-1, std::nan(""), -5), 1.0);
}

}  // namespace gpu_share_test
}  // namespace stoker::data
