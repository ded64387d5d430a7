// Gradient accumulation: 4 batches of 16 with accumulation_steps 4 step the optimiser once,
// like one batch of 64; a last partial window (3 of 4) is scaled to a full window's weight
// and equals one batch of 48. Dropout is off (eval mode) so both sides see the same network.
#include <gtest/gtest.h>

#include "param_diff.h"
#include "stoker/train/config.h"
#include "train/torch/model/models.h"
#include "train/torch/step/step.h"
#include "twin.h"

namespace stoker::train {
namespace {

using testing::make_twin;
using testing::Twin;

using testing::max_difference;

TEST(AccumulationTest, FourBatchesOf16MatchOneBatchOf64) {
  torch::manual_seed(7);
  const auto x = torch::randn({64, 1, 8, 8});
  const auto y = torch::randint(0, 10, {64}, torch::kInt64);
  TrainConfig accumulated, whole;
  accumulated.optimizer = whole.optimizer = OptimizerKind::kSgd;
  accumulated.lr = whole.lr = 0.1;
  accumulated.accumulation_steps = 4;
  whole.accumulation_steps = 1;

  Twin a = make_twin(1), b = make_twin(1);
  ASSERT_EQ(max_difference(*a.model, *b.model), 0.0);
  Stepper sa(accumulated, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  Stepper sb(whole, *b.model, *b.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  for (int round = 0; round < 3; ++round) {  // three optimiser steps (momentum carries over)
    for (int k = 0; k < 4; ++k) {
      const auto r = sa.step(x.slice(0, 16 * k, 16 * (k + 1)), y.slice(0, 16 * k, 16 * (k + 1)));
      EXPECT_EQ(r.stepped, k == 3);
    }
    EXPECT_TRUE(sb.step(x, y).stepped);
  }
  EXPECT_EQ(sa.global_step(), 3);
  EXPECT_EQ(sb.global_step(), 3);
  EXPECT_LT(max_difference(*a.model, *b.model), 1e-5);

  // Not vacuous: one step of 16 alone moves the weights elsewhere.
  Twin c = make_twin(1);
  TrainConfig single = whole;
  Stepper sc(single, *c.model, *c.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  sc.step(x.slice(0, 0, 16), y.slice(0, 0, 16));
  Twin d = make_twin(1);
  Stepper sd(whole, *d.model, *d.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  sd.step(x, y);
  EXPECT_GT(max_difference(*c.model, *d.model), 1e-4);
}

TEST(AccumulationTest, LastPartialWindowWeighsLikeAFullOne) {
  torch::manual_seed(8);
  const auto x = torch::randn({48, 1, 8, 8});
  const auto y = torch::randint(0, 10, {48}, torch::kInt64);
  TrainConfig accumulated, whole;
  accumulated.optimizer = whole.optimizer = OptimizerKind::kSgd;
  accumulated.accumulation_steps = 4;
  Twin a = make_twin(2), b = make_twin(2);
  Stepper sa(accumulated, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  Stepper sb(whole, *b.model, *b.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  for (int k = 0; k < 3; ++k) sa.step(x.slice(0, 16 * k, 16 * (k + 1)), y.slice(0, 16 * k, 16 * (k + 1)));
  EXPECT_TRUE(sa.window_open());
  EXPECT_EQ(sa.global_step(), 0);
  sa.finish_window();
  EXPECT_FALSE(sa.window_open());
  EXPECT_EQ(sa.global_step(), 1);
  sb.step(x, y);
  EXPECT_LT(max_difference(*a.model, *b.model), 1e-5);
}

}  // namespace
}  // namespace stoker::train
