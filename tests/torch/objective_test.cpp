// Tasks and fp16 wiring below the CLI: the regression losses, how the task is resolved from
// the data (and the one-line errors when it cannot be), the fp16 Stepper skipping an
// overflowing window like GradScaler, and the scaler's state surviving a checkpoint.
#include "train/torch/step/objective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "param_diff.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "support/level_datasets.h"
#include "support/temp_dir.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"
#include "train/torch/step/step.h"

namespace stoker::train {
namespace {

using stoker::testing::TempDir;

template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

TEST(ObjectiveTest, RegressionLossesMatchTheirDefinitions) {
  const auto out = torch::tensor({{0.5f, 2.0f}, {-1.0f, 0.25f}});
  const auto target = torch::tensor({{0.0f, 1.0f}, {1.0f, 0.0f}});
  const auto diff = (out - target).abs();  // 0.5 1.0 / 2.0 0.25
  Objective o;
  o.task = TaskKind::kRegression;
  o.outputs = 2;
  o.loss = LossKind::kMse;
  EXPECT_NEAR(o.loss_of(out, target).item<double>(), diff.pow(2).mean().item<double>(), 1e-6);
  EXPECT_NEAR(o.loss_of(out, target, true).item<double>(), diff.pow(2).sum().item<double>(), 1e-6);
  o.loss = LossKind::kL1;
  EXPECT_NEAR(o.loss_of(out, target).item<double>(), (0.5 + 1.0 + 2.0 + 0.25) / 4, 1e-6);
  o.loss = LossKind::kSmoothL1;  // beta 1: 0.5 d^2 below 1, d - 0.5 above
  EXPECT_NEAR(o.loss_of(out, target).item<double>(), (0.125 + 0.5 + 1.5 + 0.03125) / 4, 1e-6);
}

TEST(ObjectiveTest, TaskFollowsTheDataAndMismatchesAreOneLine) {
  TempDir dir;
  const std::string csv = stoker::testing::write_level_regression(dir, "reg", 6, 1);
  const std::string folder = stoker::testing::write_level_classes(dir, "cls", 12, 2);
  const auto regression = data::open_source(csv, "train");
  const auto classes = data::open_source(folder, "train");

  TrainConfig cfg;
  cfg.data = csv;
  Objective o = make_objective(cfg, *regression, nullptr);
  EXPECT_EQ(o.task, TaskKind::kRegression);
  EXPECT_EQ(o.loss, LossKind::kMse);
  EXPECT_EQ(o.outputs, 2);
  cfg.loss = LossKind::kL1;
  EXPECT_EQ(make_objective(cfg, *regression, nullptr).loss, LossKind::kL1);

  cfg = TrainConfig{};
  cfg.data = folder;
  o = make_objective(cfg, *classes, classes.get());
  EXPECT_TRUE(o.classification());
  EXPECT_EQ(o.outputs, 2);
  EXPECT_EQ(o.loss, LossKind::kCrossEntropy);

  cfg.task = TaskKind::kRegression;
  EXPECT_NE(message_of<UsageError>([&] {
              make_objective(cfg, *classes, nullptr);
            }).find("task regression needs float targets, and " + folder + " has class labels (2 classes)"),
            std::string::npos);
  cfg.task = TaskKind::kAuto;
  cfg.loss = LossKind::kMse;
  EXPECT_NE(message_of<UsageError>([&] { make_objective(cfg, *classes, nullptr); }).find("loss mse is for regression"),
            std::string::npos);
  cfg = TrainConfig{};
  cfg.data = csv;
  cfg.task = TaskKind::kClassification;
  EXPECT_NE(
      message_of<UsageError>([&] { make_objective(cfg, *regression, nullptr); }).find("has 2 float targets per sample"),
      std::string::npos);
  cfg.task = TaskKind::kAuto;
  cfg.val_data = folder;
  EXPECT_NE(message_of<UsageError>([&] {
              make_objective(cfg, *regression, classes.get());
            }).find("validation data " + folder + " has class labels (2 classes), and the training data"),
            std::string::npos);
}

using testing::max_difference;

// The Stepper with amp fp16 (on the CPU the scaler runs on fp32 math): a batch that overflows
// skips its step and halves the scale; the weights equal a control that never saw it.
TEST(ObjectiveTest, Fp16StepperSkipsAnOverflowingWindowLikeGradScaler) {
  torch::manual_seed(5);
  const auto x = torch::randn({16, 1, 8, 8});
  const auto y = torch::randint(0, 10, {16}, torch::kInt64);
  auto bad = x.clone();
  bad[0][0][0][0] = std::numeric_limits<float>::infinity();

  TrainConfig fp16, plain;
  fp16.optimizer = plain.optimizer = OptimizerKind::kSgd;
  fp16.amp = AmpMode::kFp16;
  torch::manual_seed(1);
  auto scaled = make_model("mlp", {1, 8, 8}, 10);
  torch::manual_seed(1);
  auto control = make_model("mlp", {1, 8, 8}, 10);
  scaled->eval();
  control->eval();
  torch::optim::SGD opt_scaled(scaled->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  torch::optim::SGD opt_control(control->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  Stepper s(fp16, *scaled, opt_scaled, classification_objective(10), torch::kCPU, 100, 10);
  Stepper c(plain, *control, opt_control, classification_objective(10), torch::kCPU, 100, 10);
  ASSERT_NE(s.scaler(), nullptr);
  EXPECT_EQ(c.scaler(), nullptr);

  EXPECT_FALSE(s.step(x, y).skipped);
  c.step(x, y);
  const Stepper::Result overflow = s.step(bad, y);
  EXPECT_TRUE(overflow.stepped);
  EXPECT_TRUE(overflow.skipped);
  EXPECT_FALSE(std::isfinite(overflow.loss));
  EXPECT_EQ(s.scaler()->state().skipped, 1);
  EXPECT_EQ(s.scaler()->state().scale, 32768.0);
  EXPECT_EQ(s.global_step(), 2);  // a skipped window still counts for the schedule
  for (int k = 0; k < 3; ++k) {
    EXPECT_FALSE(s.step(x, y).skipped);
    c.step(x, y);
  }
  EXPECT_LT(max_difference(*scaled, *control), 1e-6);
  EXPECT_GT(max_difference(*scaled, *make_model("mlp", {1, 8, 8}, 10)), 1e-3);  // it did train
}

TEST(ObjectiveTest, CheckpointKeepsTheScalerState) {
  TempDir dir;
  auto model = make_model("mlp", {1, 8, 8}, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  CheckpointMeta meta{
      1,           2, 3, 4, 5, "mlp", 1, GradScaler::State{1024.0, 17, 3}, std::nullopt, std::nullopt, std::nullopt,
      std::nullopt};
  const std::string path = (dir.path() / "with.pt").string();
  save_checkpoint(path, *model, optimizer, meta);
  const CheckpointMeta back = read_checkpoint_meta(path);
  ASSERT_TRUE(back.scaler.has_value());
  EXPECT_EQ(back.scaler->scale, 1024.0);
  EXPECT_EQ(back.scaler->growth_tracker, 17);
  EXPECT_EQ(back.scaler->skipped, 3);

  meta.scaler.reset();
  const std::string plain = (dir.path() / "without.pt").string();
  save_checkpoint(plain, *model, optimizer, meta);
  EXPECT_FALSE(read_checkpoint_meta(plain).scaler.has_value());
  EXPECT_FALSE(read_checkpoint_meta(plain).plateau.has_value());

  // The plateau schedule's state, the untouched best (infinity) included.
  for (const PlateauState& state : {PlateauState{0.001, 1.25, 3, 2}, PlateauState{0.1}}) {
    meta.plateau = state;
    const std::string with_plateau = (dir.path() / "plateau.pt").string();
    save_checkpoint(with_plateau, *model, optimizer, meta);
    const CheckpointMeta read = read_checkpoint_meta(with_plateau);
    ASSERT_TRUE(read.plateau.has_value());
    EXPECT_EQ(*read.plateau, state);
  }
}

}  // namespace
}  // namespace stoker::train
