// The training accuracy each step reports: the samples whose top-1 class, from the forward
// pass the step trained on, is the target's (the main class of a soft target); nothing for
// regression.
#include <gtest/gtest.h>

#include "stoker/train/config.h"
#include "train/torch/step/objective.h"
#include "train/torch/step/step.h"
#include "twin.h"

namespace stoker::train {
namespace {

using testing::make_twin;
using testing::Twin;

TEST(TrainAccuracyTest, CountsWhatTheForwardPassGotRight) {
  torch::manual_seed(11);
  const auto x = torch::randn({64, 1, 8, 8});
  Twin reference = make_twin(3);
  const torch::Tensor predicted = reference.model->forward(x).argmax(1);  // the same weights as each twin's first step
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  cfg.lr = 0.1;

  const auto first_step = [&](const torch::Tensor& y) {
    Twin t = make_twin(3);
    Stepper stepper(cfg, *t.model, *t.optimizer, classification_objective(10), torch::kCPU, 100, 10);
    return stepper.step(x, y);
  };
  const torch::Tensor labels = torch::randint(0, 10, {64}, torch::kInt64);
  const auto some = first_step(labels);
  EXPECT_EQ(some.counted, 64);
  EXPECT_EQ(some.correct, predicted.eq(labels).sum().item<int64_t>());
  EXPECT_EQ(first_step(predicted).correct, 64);
  EXPECT_EQ(first_step((predicted + 1) % 10).correct, 0);

  // Soft targets (MixUp/CutMix): counted against the class they weigh most.
  namespace F = torch::nn::functional;
  const torch::Tensor soft = 0.7 * F::one_hot(predicted, 10).to(torch::kFloat32) +
                             0.3 * F::one_hot((predicted + 3) % 10, 10).to(torch::kFloat32);
  EXPECT_EQ(first_step(soft).correct, 64);
  const torch::Tensor other = 0.3 * F::one_hot(predicted, 10).to(torch::kFloat32) +
                              0.7 * F::one_hot((predicted + 3) % 10, 10).to(torch::kFloat32);
  EXPECT_EQ(first_step(other).correct, 0);

  // Regression has no accuracy.
  Objective regression;
  regression.task = TaskKind::kRegression;
  regression.loss = LossKind::kMse;
  regression.outputs = 10;
  Twin t = make_twin(3);
  Stepper stepper(cfg, *t.model, *t.optimizer, regression, torch::kCPU, 100, 10);
  const auto r = stepper.step(x, torch::randn({64, 10}));
  EXPECT_EQ(r.counted, 0);
  EXPECT_EQ(r.correct, 0);
}

}  // namespace
}  // namespace stoker::train
