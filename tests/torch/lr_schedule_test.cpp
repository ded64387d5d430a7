// The learning rate at each optimizer step (lr_at): linear warmup, given in steps or in epochs
// of steps (torchvision's --lr-warmup-epochs), then the constant, cosine or step schedule.
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
      EXPECT_DOUBLE_EQ(lr, 0.4 * static_cast<double>(step + 1) / 20);
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
  TrainConfig constant = step;
  constant.schedule = ScheduleKind::kConstant;
  EXPECT_EQ(lr_at(constant, 99, kTotal, kPerEpoch), 0.4);
}

}  // namespace
}  // namespace stoker::train
