// MixUp and CutMix (BatchMix): every mixed sample is λ of itself and 1 − λ of the sample
// before it, its soft target says the same, λ follows Beta(α, α), CutMix's λ is the share of
// the image the pasted box left, and the draws repeat for the same (seed, rank, index).
#include "train/torch/step/batch_mix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace stoker::train {
namespace {

constexpr int64_t kClasses = 10;

// Batch of 6 with distinct labels 0..5, each image a different random pattern.
struct Batch {
  torch::Tensor x = torch::rand({6, 3, 16, 12});
  torch::Tensor y = torch::arange(6, torch::kInt64);
};

// The soft target's weight of the sample's own class (λ) and of the previous one's (1 − λ).
std::pair<double, double> weights_of(const torch::Tensor& targets, const torch::Tensor& y, int64_t i) {
  const int64_t n = y.size(0);
  return {targets[i][y[i].item<int64_t>()].item<double>(),
          targets[i][y[(i + n - 1) % n].item<int64_t>()].item<double>()};
}

TEST(BatchMixTest, OffLeavesTheBatchAndItsClassIds) {
  Batch b;
  const BatchMix off(0, 0, kClasses, 1);
  EXPECT_FALSE(off.active());
  const auto [x, y] = off.mix(b.x, b.y, 3);
  EXPECT_TRUE(x.is_same(b.x));
  EXPECT_TRUE(y.is_same(b.y));
}

TEST(BatchMixTest, MixUpBlendsEachSampleWithThePreviousOneAsItsTargetSays) {
  Batch b;
  const torch::Tensor before = b.x.clone();
  const BatchMix mixup(0.4, 0, kClasses, 11);
  for (int64_t index = 0; index < 5; ++index) {
    const auto [x, t] = mixup.mix(b.x, b.y, index);
    ASSERT_EQ(t.sizes(), (std::vector<int64_t>{6, kClasses}));
    EXPECT_TRUE(torch::allclose(t.sum(1), torch::ones({6})));
    const double lambda = mixup.draw(index, 16, 12).lambda;
    EXPECT_EQ(mixup.draw(index, 16, 12).kind, BatchMix::Kind::kMixUp);
    for (int64_t i = 0; i < 6; ++i) {
      const auto [own, previous] = weights_of(t, b.y, i);
      EXPECT_NEAR(own, lambda, 1e-6);
      EXPECT_NEAR(previous, 1 - lambda, 1e-6);
      const torch::Tensor expected = b.x[i] * own + b.x[(i + 5) % 6] * previous;
      EXPECT_TRUE(torch::allclose(x[i], expected, 1e-5, 1e-6)) << "sample " << i << " of batch " << index;
    }
  }
  EXPECT_TRUE(torch::equal(b.x, before));  // the loader's batch is not written to
}

TEST(BatchMixTest, CutMixPastesOneBoxWhoseAreaIsTheTargetsShare) {
  Batch b;
  const BatchMix cutmix(0, 1.0, kClasses, 5);
  int boxes = 0;
  for (int64_t index = 0; index < 40; ++index) {
    const auto [x, t] = cutmix.mix(b.x, b.y, index);
    const BatchMix::Draw d = cutmix.draw(index, 16, 12);
    ASSERT_EQ(d.kind, BatchMix::Kind::kCutMix);
    for (int64_t i = 0; i < 6; ++i) {
      const torch::Tensor from_previous = (x[i] == b.x[(i + 5) % 6]).all(0);  // (H, W)
      const torch::Tensor from_own = (x[i] == b.x[i]).all(0);
      ASSERT_TRUE(torch::logical_or(from_previous, from_own).all().item<bool>()) << "a pixel from neither sample";
      // The pixels taken from the previous sample are exactly the box.
      torch::Tensor box = torch::zeros({16, 12}, torch::kBool);
      box.narrow(0, d.y0, d.y1 - d.y0).narrow(1, d.x0, d.x1 - d.x0).fill_(true);
      EXPECT_TRUE(torch::equal(torch::logical_and(from_previous, from_own.logical_not()), box));
      const double pasted = box.sum().item<double>() / (16 * 12);
      const auto [own, previous] = weights_of(t, b.y, i);
      EXPECT_NEAR(previous, pasted, 1e-6);
      EXPECT_NEAR(own, 1 - pasted, 1e-6);
    }
    boxes += d.x1 > d.x0 && d.y1 > d.y0;
  }
  EXPECT_GT(boxes, 30);  // with α = 1 λ is uniform: almost every draw pastes something
  EXPECT_THROW(cutmix.mix(torch::rand({6, 8}), b.y, 0), c10::Error);  // features have no box
}

// λ ~ Beta(α, α): mean ½, variance 1 / (4 (2α + 1)); α = 0.2 piles the draws near 0 and 1.
TEST(BatchMixTest, LambdaFollowsBetaAlphaAlpha) {
  for (const double alpha : {0.2, 1.0, 4.0}) {
    const BatchMix mixup(alpha, 0, kClasses, 3);
    const int n = 20000;
    double sum = 0, sum_sq = 0;
    int near_ends = 0;
    for (int i = 0; i < n; ++i) {
      const double l = mixup.draw(i, 1, 1).lambda;
      ASSERT_TRUE(l >= 0 && l <= 1) << l;
      sum += l;
      sum_sq += l * l;
      near_ends += l < 0.1 || l > 0.9;
    }
    const double mean = sum / n, variance = sum_sq / n - mean * mean;
    EXPECT_NEAR(mean, 0.5, 0.012) << "alpha " << alpha;
    EXPECT_NEAR(variance, 1 / (4 * (2 * alpha + 1)), 0.05 / (4 * (2 * alpha + 1))) << "alpha " << alpha;
    // P(λ < 0.1 or λ > 0.9): 0.2 for the uniform (α = 1), about 0.7 for α = 0.2.
    if (alpha == 1.0) {
      EXPECT_NEAR(near_ends / double(n), 0.2, 0.015);
    } else if (alpha == 0.2) {
      EXPECT_GT(near_ends / double(n), 0.6);
    }
  }
}

TEST(BatchMixTest, BothTakeOneOfTheTwoPerBatchAndTheDrawsRepeat) {
  const BatchMix both(0.2, 1.0, kClasses, 9);
  int cutmix = 0;
  for (int64_t index = 0; index < 400; ++index) cutmix += both.draw(index, 16, 12).kind == BatchMix::Kind::kCutMix;
  EXPECT_GT(cutmix, 160);
  EXPECT_LT(cutmix, 240);

  const BatchMix again(0.2, 1.0, kClasses, 9), other_rank(0.2, 1.0, kClasses, 9, 1), other_seed(0.2, 1.0, kClasses, 10);
  int same = 0, same_rank = 0, same_seed = 0;
  for (int64_t index = 0; index < 50; ++index) {
    const double l = both.draw(index, 16, 12).lambda;
    same += again.draw(index, 16, 12).lambda == l;
    same_rank += other_rank.draw(index, 16, 12).lambda == l;
    same_seed += other_seed.draw(index, 16, 12).lambda == l;
  }
  EXPECT_EQ(same, 50);
  EXPECT_LT(same_rank, 5);
  EXPECT_LT(same_seed, 5);
}

}  // namespace
}  // namespace stoker::train
