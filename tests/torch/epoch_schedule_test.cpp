// The epoch-based schedules over whole runs: the rate of each epoch's optimizer steps is
// torchvision's reference script's for that epoch (its schedulers stepped once per epoch),
// also where an epoch's batches do not fill its last accumulation window (that window still
// steps the optimizer, so an epoch takes ceil(batches / accumulation_steps) steps).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "stoker/report/event_reader.h"
#include "stoker/train/trainer.h"
#include "support/numpy_files.h"
#include "support/temp_dir.h"

namespace stoker::train {
namespace {

namespace fs = std::filesystem;

// 100 random 28x28 images of 10 classes as an .npz (x_train, y_train).
std::string small_arrays(const stoker::testing::TempDir& dir) {
  std::vector<uint8_t> pixels(100 * 28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  std::vector<int64_t> labels(100);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
  using stoker::testing::npy_bytes;
  using stoker::testing::raw_bytes;
  return dir.write("small.npz",
                   stoker::testing::zip_bytes({{"x_train.npy", npy_bytes("|u1", {100, 28, 28}, pixels)},
                                               {"y_train.npy", npy_bytes("<i8", {100}, raw_bytes(labels))}}));
}

// TensorBoard's train/lr points, as (global step, rate): each logging window's, at an epoch's
// end or where a window closed (10 batches and 2 s), the rate of optimizer step `step - 1`
// (from 0), the last one taken.
std::vector<std::pair<int64_t, double>> logged_rates(const TrainConfig& config) {
  TrainUi quiet;
  quiet.progress = false;
  EXPECT_EQ(run_training(config, quiet), 0);
  std::vector<fs::path> runs;
  for (const auto& entry : fs::directory_iterator(config.output_dir)) runs.push_back(entry.path());
  EXPECT_EQ(runs.size(), 1u);
  std::vector<std::pair<int64_t, double>> rates;
  if (runs.size() != 1) return rates;
  const report::EventScalars tb = report::read_event_scalars((runs[0] / "tb").string());
  for (const report::ScalarPoint& p : tb.tags.at("train/lr")) rates.emplace_back(p.step, p.value);
  return rates;
}

class EpochScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config.data = small_arrays(dir);
    config.model = "mlp";
    config.batch_size = 20;         // 5 batches an epoch
    config.accumulation_steps = 2;  // windows of 2, 2 and 1: 3 optimizer steps an epoch
    config.epochs = 3;
    config.optimizer = OptimizerKind::kSgd;
    config.lr = 0.8;
    config.num_workers = 1;
    config.output_dir = dir.str() + "/runs";
  }
  stoker::testing::TempDir dir;
  TrainConfig config;
};

// torchvision: --lr-scheduler steplr --lr-step-size 1 --lr-gamma 0.5 trains its epochs at
// 0.8, 0.4 and 0.2 (StepLR stepped after each epoch); an epoch is 3 optimizer steps.
TEST_F(EpochScheduleTest, StepLrLowersTheRateAtEachEpochNotBefore) {
  config.schedule = ScheduleKind::kStep;
  config.step_every_epochs = 1;
  config.step_gamma = 0.5;
  const std::vector<double> torchvision = {0.8, 0.4, 0.2};
  const auto rates = logged_rates(config);
  ASSERT_FALSE(rates.empty());
  EXPECT_GE(rates.back().first, 8);  // the last epoch's
  for (const auto& [step, rate] : rates) {
    ASSERT_TRUE(step >= 1 && step <= 9) << step;
    EXPECT_NEAR(rate, torchvision[static_cast<size_t>((step - 1) / 3)], 1e-6) << "after step " << step;
  }
}

// --lr-warmup-epochs 1 --lr-warmup-method linear --lr-warmup-decay 0.5, then cosine to 0, set
// each step: LinearLR over epoch 1's 3 steps, then CosineAnnealingLR over the other 6, above 0
// at the last (it reaches lr_min at the run's end, not before).
TEST_F(EpochScheduleTest, WarmupAndCosineCountTheLastPartialWindow) {
  config.schedule = ScheduleKind::kCosine;
  config.warmup_epochs = 1;
  config.warmup_decay = 0.5;
  const auto rate_of_step = [](int64_t s) {
    if (s < 3) return 0.8 * (0.5 + 0.5 * static_cast<double>(s) / 3.0);
    return 0.4 * (1 + std::cos(M_PI * static_cast<double>(s - 3) / 6.0));
  };
  const auto rates = logged_rates(config);
  ASSERT_FALSE(rates.empty());
  EXPECT_GE(rates.back().first, 8);
  for (const auto& [step, rate] : rates) {
    ASSERT_TRUE(step >= 1 && step <= 9) << step;
    EXPECT_NEAR(rate, rate_of_step(step - 1), 1e-6) << "after step " << step;
  }
  EXPECT_GT(rates.back().second, 0.05);
}

}  // namespace
}  // namespace stoker::train
