// The moving average of the weights (ema_decay): each update is d·average + (1 − d)·weight
// with d = min(decay, (1 + n) / (10 + n)), worked out here by hand; integer buffers are
// copied; the Stepper folds in the steps it takes and not the fp16 steps it skips; a
// checkpoint carries the average and its count.
#include "train/torch/model/model_ema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "param_diff.h"
#include "stoker/train/config.h"
#include "support/temp_dir.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"
#include "train/torch/step/step.h"
#include "twin.h"

namespace stoker::train {
namespace {

using testing::make_twin;
using testing::max_difference;

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

// stoker's own average: decay d with the ramp, every `every` steps.
AveragePlan plan_of(double decay, int every = 1) {
  AveragePlan plan;
  plan.on = true;
  plan.decay = decay;
  plan.every_steps = every;
  return plan;
}

void expect_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-5, 1e-6)) << what << " " << i;
  }
}

TEST(ModelEmaTest, UpdatesFollowTheFormulaWithItsWarmup) {
  torch::manual_seed(1);
  auto model = make_model("mlp", {1, 8, 8}, 10);
  torch::manual_seed(2);  // the average's own initialisation, replaced by the model's weights
  ModelEma ema(make_model("mlp", {1, 8, 8}, 10), *model, plan_of(0.5));
  EXPECT_EQ(max_difference(ema.network(), *model), 0);
  EXPECT_EQ(ema.updates(), 0);
  EXPECT_DOUBLE_EQ(ema.next_decay(), 0.1);  // (1 + 0) / (10 + 0)

  std::vector<torch::Tensor> expected = clones(ema.network().parameters());
  for (int n = 0; n < 12; ++n) {
    const double d = std::min(0.5, (1.0 + n) / (10.0 + n));
    ASSERT_DOUBLE_EQ(ema.next_decay(), d) << "update " << n;
    {
      torch::NoGradGuard no_grad;
      for (auto& p : model->parameters()) p.add_(torch::randn_like(p));  // "an optimizer step"
    }
    const auto weights = model->parameters();
    for (size_t i = 0; i < expected.size(); ++i) expected[i] = d * expected[i] + (1 - d) * weights[i].detach();
    ema.update(*model);
    EXPECT_EQ(ema.updates(), n + 1);
    expect_close(ema.network().parameters(), expected, "parameter");
  }
  EXPECT_DOUBLE_EQ(ema.next_decay(), 0.5);                // the warmup's 13/22 is past the decay given
  EXPECT_GT(max_difference(ema.network(), *model), 0.1);  // an average, not a copy

  ema.restart_from(*model);
  EXPECT_EQ(ema.updates(), 0);
  EXPECT_EQ(max_difference(ema.network(), *model), 0);
}

TEST(ModelEmaTest, FloatBuffersAreAveragedAndIntegerBuffersCopied) {
  torch::manual_seed(3);
  auto model = make_model("resnet18", {3, 32, 32}, 10);
  ModelEma ema(make_model("resnet18", {3, 32, 32}, 10), *model, plan_of(0.99));
  const auto before = clones(ema.network().buffers());
  model->train();
  {
    torch::NoGradGuard no_grad;
    model->forward(torch::randn({4, 3, 32, 32}) * 3 + 1);  // moves BatchNorm's running statistics
  }
  ema.update(*model);
  const auto named = ema.network().named_buffers();
  const auto theirs = model->named_buffers();
  int floating = 0, integer = 0;
  for (size_t i = 0; i < named.size(); ++i) {
    const torch::Tensor mine = named[i].value(), now = theirs[i].value();
    if (mine.is_floating_point()) {
      ++floating;
      EXPECT_TRUE(torch::allclose(mine, 0.1 * before[i] + 0.9 * now, 1e-5, 1e-6)) << named[i].key();
      EXPECT_FALSE(torch::equal(mine, now)) << named[i].key();
    } else {
      ++integer;
      EXPECT_EQ(mine.item<int64_t>(), 1) << named[i].key();  // num_batches_tracked, copied
    }
  }
  EXPECT_EQ(floating, 2 * integer);  // running_mean and running_var beside each count
  EXPECT_GT(integer, 10);
}

TEST(ModelEmaTest, TheStepperFoldsInTheStepsItTakesAndNotTheOnesFp16Skips) {
  torch::manual_seed(4);
  const torch::Tensor x = torch::randn({16, 1, 8, 8}), y = torch::randint(0, 10, {16}, torch::kInt64);
  torch::Tensor poisoned = x.clone();
  poisoned[0][0][0][0] = std::numeric_limits<float>::infinity();  // its gradients are NaN

  TrainConfig fp16;
  fp16.optimizer = OptimizerKind::kSgd;
  fp16.amp = AmpMode::kFp16;  // on the CPU: the scaler on fp32 math
  fp16.accumulation_steps = 2;
  testing::Twin twin = make_twin(5);
  ModelEma ema(make_model("mlp", {1, 8, 8}, 10), *twin.model, plan_of(0.9));
  Stepper stepper(fp16, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  stepper.keep_average(&ema);

  stepper.step(x, y);
  EXPECT_EQ(ema.updates(), 0);  // the window is still open
  EXPECT_FALSE(stepper.step(x, y).skipped);
  EXPECT_EQ(ema.updates(), 1);
  const auto after_first = clones(ema.network().parameters());
  stepper.step(poisoned, y);
  EXPECT_TRUE(stepper.step(x, y).skipped);
  EXPECT_EQ(ema.updates(), 1);  // a skipped step changes no weight, so it is not averaged in
  expect_close(ema.network().parameters(), after_first, "parameter");
  stepper.step(x, y);
  EXPECT_TRUE(stepper.finish_window().stepped);  // a last partial window is a step too
  EXPECT_EQ(ema.updates(), 2);
  EXPECT_EQ(stepper.global_step(), 3);
}

// ema_steps 3 (torchvision's --model-ema-steps): the weights after optimizer steps 3 and 6 are
// folded in, counted by the run's steps, so a Stepper resumed at step 4 updates on step 6 too.
TEST(ModelEmaTest, EmaStepsFoldsInEveryNthStepOfTheRun) {
  torch::manual_seed(5);
  const torch::Tensor x = torch::randn({16, 1, 8, 8}), y = torch::randint(0, 10, {16}, torch::kInt64);
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  testing::Twin twin = make_twin(6);
  ModelEma ema(make_model("mlp", {1, 8, 8}, 10), *twin.model, plan_of(0.9, 3));
  Stepper stepper(cfg, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  stepper.keep_average(&ema);
  std::vector<torch::Tensor> expected = clones(ema.network().parameters());
  int64_t folded = 0;
  for (int step = 1; step <= 7; ++step) {
    stepper.step(x, y);
    if (step % 3 == 0) {  // d = min(0.9, (1 + n) / (10 + n)) of the n updates before
      const double d = std::min(0.9, (1.0 + folded) / (10.0 + folded));
      const auto weights = twin.model->parameters();
      for (size_t i = 0; i < expected.size(); ++i) expected[i] = d * expected[i] + (1 - d) * weights[i].detach();
      ++folded;
    }
    EXPECT_EQ(ema.updates(), folded) << "after step " << step;
  }
  EXPECT_EQ(folded, 2);
  expect_close(ema.network().parameters(), expected, "parameter");

  // Resumed at step 4: the next update is the run's step 6, not the Stepper's third.
  ModelEma resumed(make_model("mlp", {1, 8, 8}, 10), *twin.model, plan_of(0.9, 3));
  Stepper later(cfg, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 100, 10, 4);
  later.keep_average(&resumed);
  later.step(x, y);
  EXPECT_EQ(resumed.updates(), 0);  // step 5
  later.step(x, y);
  EXPECT_EQ(resumed.updates(), 1);  // step 6
}

// Two more steps (one update every 2nd step): the average becomes 0.75 x itself + 0.25 x the
// model's weights, torchvision's average with decay 0.75.
void expect_two_steps_blend_at_075(Stepper& stepper, const ModelEma& ema, const Network& model, const torch::Tensor& x,
                                   const torch::Tensor& y) {
  std::vector<torch::Tensor> expected = clones(ema.network().parameters());
  stepper.step(x, y);
  stepper.step(x, y);
  const auto weights = model.parameters();
  for (size_t i = 0; i < expected.size(); ++i) expected[i] = 0.75 * expected[i] + 0.25 * weights[i].detach();
  expect_close(ema.network().parameters(), expected, "parameter");
}

// torchvision's --model-ema (AveragePlan from model_ema): no ramp, and while the warmup lasts
// each update copies the weights (its script zeroes n_averaged there, so the next update
// copies, as torch.optim.swa_utils.AveragedModel does where n_averaged is 0). Here every 2nd
// step, a copy until step 4: steps 2 and 4 (indices 1, 3) copy, so does step 6 (the first
// update after the warmup finds n_averaged 0), and step 8 averages with the decay itself, not
// the ramp's 1/10.
TEST(ModelEmaTest, TorchvisionsAverageCopiesThroughTheWarmupAndHasNoRamp) {
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({16, 1, 8, 8}), y = torch::randint(0, 10, {16}, torch::kInt64);
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  testing::Twin twin = make_twin(8);
  AveragePlan plan = plan_of(0.75, 2);
  plan.ramp = false;
  plan.copy_until_step = 4;
  ModelEma ema(make_model("mlp", {1, 8, 8}, 10), *twin.model, plan);
  EXPECT_DOUBLE_EQ(ema.next_decay(), 0.75);
  Stepper stepper(cfg, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  stepper.keep_average(&ema);
  for (int step = 1; step <= 4; ++step) {
    stepper.step(x, y);
    if (step % 2 == 0) {
      EXPECT_EQ(max_difference(ema.network(), *twin.model), 0) << "a copy after step " << step;
    }
  }
  EXPECT_EQ(ema.updates(), 2);
  stepper.step(x, y);
  stepper.step(x, y);
  EXPECT_EQ(max_difference(ema.network(), *twin.model), 0) << "the first update after the warmup copies";
  expect_two_steps_blend_at_075(stepper, ema, *twin.model, x, y);
  EXPECT_EQ(ema.updates(), 4);
  EXPECT_GT(max_difference(ema.network(), *twin.model), 0);
}

// Without a warmup, torchvision's average (an AveragedModel made at the start) copies the
// weights at its first update, not d x the initialisation + (1 - d) x the weights.
TEST(ModelEmaTest, TorchvisionsAverageCopiesAtItsFirstUpdate) {
  torch::manual_seed(7);
  const torch::Tensor x = torch::randn({16, 1, 8, 8}), y = torch::randint(0, 10, {16}, torch::kInt64);
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  testing::Twin twin = make_twin(8);
  AveragePlan plan = plan_of(0.75, 2);
  plan.ramp = false;
  ModelEma ema(make_model("mlp", {1, 8, 8}, 10), *twin.model, plan);
  Stepper stepper(cfg, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  stepper.keep_average(&ema);
  stepper.step(x, y);
  stepper.step(x, y);
  EXPECT_EQ(max_difference(ema.network(), *twin.model), 0) << "the first update copies";
  expect_two_steps_blend_at_075(stepper, ema, *twin.model, x, y);
  EXPECT_EQ(ema.updates(), 2);
}

TEST(ModelEmaTest, ACheckpointCarriesTheAverageAndItsCount) {
  stoker::testing::TempDir dir;
  torch::manual_seed(6);
  auto model = make_model("mlp", {1, 8, 8}, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  ModelEma ema(make_model("mlp", {1, 8, 8}, 10), *model, plan_of(0.9));
  for (int i = 0; i < 7; ++i) {
    {
      torch::NoGradGuard no_grad;
      for (auto& p : model->parameters()) p.add_(torch::randn_like(p));
    }
    ema.update(*model);
  }
  const CheckpointMeta meta{1,           2, 7, 4, 5, "mlp", 1, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                            std::nullopt};
  const std::string with = (dir.path() / "with.pt").string();
  save_checkpoint(with, *model, optimizer, meta, &ema);
  EXPECT_EQ(read_checkpoint_meta(with).ema_updates, 7);

  auto model_back = make_model("mlp", {1, 8, 8}, 10);
  torch::optim::SGD optimizer_back(model_back->parameters(), torch::optim::SGDOptions(0.1));
  ModelEma ema_back(make_model("mlp", {1, 8, 8}, 10), *model_back, plan_of(0.9));
  CheckpointFile(with).load_into(*model_back, optimizer_back, &ema_back);
  EXPECT_EQ(ema_back.updates(), 7);
  EXPECT_EQ(max_difference(ema_back.network(), ema.network()), 0);
  EXPECT_EQ(max_difference(*model_back, *model), 0);
  EXPECT_GT(max_difference(ema_back.network(), *model_back), 0.1);

  // A checkpoint without an average (the run had none): it starts over from the loaded weights.
  const std::string without = (dir.path() / "without.pt").string();
  save_checkpoint(without, *model, optimizer, meta);
  EXPECT_FALSE(read_checkpoint_meta(without).ema_updates.has_value());
  CheckpointFile(without).load_into(*model_back, optimizer_back, &ema_back);
  EXPECT_EQ(ema_back.updates(), 0);
  EXPECT_EQ(max_difference(ema_back.network(), *model), 0);
}

}  // namespace
}  // namespace stoker::train
