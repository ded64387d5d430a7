// The learning rate at each optimizer step (lr_at): linear or constant warmup, given in steps or
// in epochs of steps (torchvision's --lr-warmup-epochs), then the constant, cosine or step
// schedule. The warmup is PyTorch's LinearLR / ConstantLR stepped once per optimizer step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "stoker/train/config.h"
#include "train/torch/step.h"

namespace stoker::train {
namespace {

TEST(LrScheduleTest, WarmupInStepsOrEpochsThenTheSchedule) {
  TrainConfig cfg;
  cfg.lr = 0.4;
  cfg.schedule = ScheduleKind::kCosine;
  constexpr int64_t kPerEpoch = 10;
  constexpr int64_t kTotal = 100;
  cfg.warmup_steps = 20;
  TrainConfig by_epochs = cfg;
  by_epochs.warmup_steps = 0;
  by_epochs.warmup_epochs = 2;  // 2 epochs of 10 steps: the same 20
  for (int64_t step = 0; step < kTotal; ++step) {
    SCOPED_TRACE(step);
    const double lr = lr_at(cfg, step, kTotal, kPerEpoch);
    EXPECT_EQ(lr_at(by_epochs, step, kTotal, kPerEpoch), lr);
    if (step < 20) {
      // torchvision's --lr-warmup-decay default: from 0.01 x lr, a 20th of the way more each step
      EXPECT_DOUBLE_EQ(lr, 0.4 * (0.01 + 0.99 * static_cast<double>(step) / 20));
    } else {  // cosine over the 80 steps after the warmup, from lr to 0
      EXPECT_NEAR(lr, 0.5 * 0.4 * (1 + std::cos(M_PI * static_cast<double>(step - 20) / 80)), 1e-12);
    }
  }
  EXPECT_DOUBLE_EQ(lr_at(cfg, 20, kTotal, kPerEpoch), 0.4);

  // The step schedule counts epochs of steps; warmup off.
  TrainConfig step = cfg;
  step.warmup_steps = 0;
  step.schedule = ScheduleKind::kStep;
  step.step_gamma = 0.1;
  step.step_every_epochs = 3;
  EXPECT_DOUBLE_EQ(lr_at(step, 0, kTotal, kPerEpoch), 0.4);
  EXPECT_DOUBLE_EQ(lr_at(step, 29, kTotal, kPerEpoch), 0.4);
  EXPECT_NEAR(lr_at(step, 30, kTotal, kPerEpoch), 0.04, 1e-15);
  EXPECT_NEAR(lr_at(step, 65, kTotal, kPerEpoch), 0.004, 1e-15);
  // torchvision's SequentialLR starts the main scheduler after the warmup: with 2 epochs of
  // warmup the first decay is 3 epochs later, at step 50.
  TrainConfig warm_step = step;
  warm_step.warmup_epochs = 2;
  EXPECT_DOUBLE_EQ(lr_at(warm_step, 49, kTotal, kPerEpoch), 0.4);
  EXPECT_NEAR(lr_at(warm_step, 50, kTotal, kPerEpoch), 0.04, 1e-15);
  // ExponentialLR: x gamma each epoch after the warmup.
  TrainConfig exponential = warm_step;
  exponential.schedule = ScheduleKind::kExponential;
  exponential.step_gamma = 0.9;
  EXPECT_DOUBLE_EQ(lr_at(exponential, 20, kTotal, kPerEpoch), 0.4);
  EXPECT_DOUBLE_EQ(lr_at(exponential, 29, kTotal, kPerEpoch), 0.4);
  EXPECT_NEAR(lr_at(exponential, 30, kTotal, kPerEpoch), 0.36, 1e-15);
  EXPECT_NEAR(lr_at(exponential, 55, kTotal, kPerEpoch), 0.4 * 0.9 * 0.9 * 0.9, 1e-15);
  TrainConfig constant = step;
  constant.schedule = ScheduleKind::kConstant;
  EXPECT_EQ(lr_at(constant, 99, kTotal, kPerEpoch), 0.4);
}

// torchvision's --lr-warmup-method constant --lr-warmup-decay d and --lr-min: the values
// PyTorch's ConstantLR(factor=d, total_iters=W) and CosineAnnealingLR(T_max, eta_min) give
// when stepped once per step (their closed forms).
TEST(LrScheduleTest, ConstantWarmupAndTheCosineFloor) {
  TrainConfig cfg;
  cfg.lr = 0.5;
  cfg.schedule = ScheduleKind::kCosine;
  cfg.warmup_steps = 5;
  cfg.warmup_method = "constant";
  cfg.warmup_decay = 0.1;
  cfg.lr_min = 0.02;
  constexpr int64_t kTotal = 45;
  for (int64_t step = 0; step < 5; ++step) EXPECT_DOUBLE_EQ(lr_at(cfg, step, kTotal, 10), 0.05) << step;
  for (int64_t step = 5; step < kTotal; ++step) {
    const double t = static_cast<double>(step - 5) / 40;
    EXPECT_NEAR(lr_at(cfg, step, kTotal, 10), 0.02 + 0.5 * (0.5 - 0.02) * (1 + std::cos(M_PI * t)), 1e-12) << step;
  }
  EXPECT_DOUBLE_EQ(lr_at(cfg, 5, kTotal, 10), 0.5);
  EXPECT_NEAR(lr_at(cfg, kTotal, kTotal, 10), 0.02, 1e-15);  // the floor, and it stays there
  EXPECT_NEAR(lr_at(cfg, kTotal + 7, kTotal, 10), 0.02, 1e-15);

  TrainConfig linear = cfg;  // linear from the same start: d at step 0, halfway at step W/2
  linear.warmup_method = "linear";
  linear.warmup_steps = 4;
  EXPECT_DOUBLE_EQ(lr_at(linear, 0, kTotal, 10), 0.05);
  EXPECT_DOUBLE_EQ(lr_at(linear, 2, kTotal, 10), 0.5 * (0.1 + 0.9 * 0.5));
  EXPECT_DOUBLE_EQ(lr_at(linear, 4, kTotal, 10), 0.5);
}

}  // namespace
}  // namespace stoker::train
