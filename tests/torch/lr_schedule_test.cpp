// The learning rate at each optimizer step (lr_at): linear or constant warmup, given in steps or
// in epochs of steps (torchvision's --lr-warmup-epochs), then the constant, cosine, step,
// exponential or multistep schedule; PolynomialLR and CosineAnnealingWarmRestarts, held to
// PyTorch's own (Debian's python3-torch); or OneCycleLR, held to PyTorch's too, with its momentum,
// which the Stepper applies. The warmup is PyTorch's LinearLR / ConstantLR
// stepped once per optimizer step.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "stoker/train/config.h"
#include "support/run_command.h"
#include "train/torch/step/step.h"
#include "twin.h"

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

// MultiStepLR(milestones, gamma): one factor of gamma per milestone reached, in epochs counted
// from the warmup's end as the other epoch schedules.
TEST(LrScheduleTest, MultiStepMultipliesAtEachMilestone) {
  TrainConfig cfg;
  cfg.lr = 0.4;
  cfg.schedule = ScheduleKind::kMultiStep;
  cfg.lr_milestones = "3, 5";
  cfg.step_gamma = 0.1;
  constexpr int64_t kPerEpoch = 10;
  for (int64_t step = 0; step < 30; ++step) EXPECT_DOUBLE_EQ(lr_at(cfg, step, 100, kPerEpoch), 0.4) << step;
  for (int64_t step = 30; step < 50; ++step) EXPECT_NEAR(lr_at(cfg, step, 100, kPerEpoch), 0.04, 1e-15) << step;
  for (int64_t step = 50; step < 100; ++step) EXPECT_NEAR(lr_at(cfg, step, 100, kPerEpoch), 0.004, 1e-15) << step;
  cfg.warmup_epochs = 2;  // the milestones move two epochs on
  EXPECT_DOUBLE_EQ(lr_at(cfg, 49, 100, kPerEpoch), 0.4);
  EXPECT_NEAR(lr_at(cfg, 50, 100, kPerEpoch), 0.04, 1e-15);
  EXPECT_NEAR(lr_at(cfg, 70, 100, kPerEpoch), 0.004, 1e-15);
}

// PyTorch's OneCycleLR on a one-parameter optimizer, max_lr 0.4: each step's lr and momentum
// (SGD's, or AdamW's beta1), read from the param group before optimizer.step() as a training
// loop's step sees them.
struct CycleCase {
  int total;
  double pct_start;
  double div_factor;
  double final_div_factor;
  const char* anneal;
  bool three_phase;
  const char* optimizer;
};
constexpr const char* kOneCycleScript = R"PY(
import sys, torch
total, pct, div, final, anneal, three, opt = sys.argv[1:]
p = torch.nn.Parameter(torch.zeros(1))
o = torch.optim.SGD([p], lr=0.1, momentum=0.9) if opt == "sgd" else torch.optim.AdamW([p], lr=0.1)
s = torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.4, total_steps=int(total), pct_start=float(pct),
    anneal_strategy=anneal, div_factor=float(div), final_div_factor=float(final), three_phase=three == "1")
for _ in range(int(total)):
    g = o.param_groups[0]
    print(repr(g["lr"]), repr(g["momentum"] if opt == "sgd" else g["betas"][0]))
    o.step()
    s.step()
)PY";

TEST(LrScheduleTest, OneCycleIsPyTorchsOneCycleLR) {
  if (const std::string why = stoker::testing::torchvision_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<CycleCase> cases{{100, 0.3, 25, 1e4, "cos", false, "sgd"},
                                     {37, 0.25, 10, 100, "linear", false, "adamw"},
                                     {50, 0.3, 25, 1e4, "cos", true, "sgd"},
                                     {7, 0.1, 25, 1e4, "cos", false, "sgd"}};  // a first phase under one step
  std::vector<std::string> arguments;
  for (const CycleCase& k : cases)
    arguments.push_back(fmt::format("{} {} {} {} {} {} {}", k.total, k.pct_start, k.div_factor, k.final_div_factor,
                                    k.anneal, k.three_phase ? 1 : 0, k.optimizer));
  const auto run = stoker::testing::run_python_cases(kOneCycleScript, arguments);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.outputs.size(), cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    const CycleCase& k = cases[c];
    SCOPED_TRACE(fmt::format("total {} pct_start {} {} three_phase {} {}", k.total, k.pct_start, k.anneal,
                             k.three_phase, k.optimizer));
    TrainConfig cfg;
    cfg.lr = 0.4;
    cfg.schedule = ScheduleKind::kOneCycle;
    cfg.optimizer = k.optimizer == std::string("sgd") ? OptimizerKind::kSgd : OptimizerKind::kAdamW;
    cfg.pct_start = k.pct_start;
    cfg.div_factor = k.div_factor;
    cfg.final_div_factor = k.final_div_factor;
    cfg.anneal_strategy = k.anneal;
    cfg.three_phase = k.three_phase;
    std::istringstream lines(run.outputs[c]);
    int step = 0;
    for (double lr = 0, momentum = 0; lines >> lr >> momentum; ++step) {
      EXPECT_NEAR(lr_at(cfg, step, k.total, 10), lr, 1e-15) << "step " << step;
      const auto ours = momentum_at(cfg, step, k.total);
      ASSERT_TRUE(ours.has_value());
      EXPECT_NEAR(*ours, momentum, 1e-15) << "step " << step;
    }
    EXPECT_EQ(step, k.total);
  }
  // At the peak and the ends, whatever PyTorch says: not a comparison of two copies of one bug.
  TrainConfig cfg;
  cfg.lr = 0.4;
  cfg.schedule = ScheduleKind::kOneCycle;
  EXPECT_DOUBLE_EQ(lr_at(cfg, 0, 100, 10), 0.4 / 25);
  EXPECT_DOUBLE_EQ(lr_at(cfg, 29, 100, 10), 0.4);  // pct_start x 100 - 1
  EXPECT_NEAR(lr_at(cfg, 99, 100, 10), 0.4 / 25 / 1e4, 1e-18);
  EXPECT_DOUBLE_EQ(*momentum_at(cfg, 29, 100), 0.85);
  cfg.cycle_momentum = false;
  EXPECT_FALSE(momentum_at(cfg, 29, 100).has_value());
}

// PyTorch's PolynomialLR and CosineAnnealingWarmRestarts, as stoker runs them after the warmup:
// PolynomialLR(total_iters = the steps left, power) stepped each step; the restarts schedule
// stepped with the fractional epoch, scheduler.step(epoch + i / iters) in its documentation.
// Each line is the lr a step uses.
constexpr const char* kPolyAndRestartsScript = R"PY(
import sys, torch
kind, total, per_epoch, a, b, eta_min = sys.argv[1:]
total, per_epoch = int(total), int(per_epoch)
p = torch.nn.Parameter(torch.zeros(1))
o = torch.optim.SGD([p], lr=0.3)
if kind == "poly":
    s = torch.optim.lr_scheduler.PolynomialLR(o, total_iters=total, power=float(a))
    for _ in range(total + 3):
        print(repr(o.param_groups[0]["lr"]))
        o.step()
        s.step()
else:
    s = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=int(a), T_mult=int(b), eta_min=float(eta_min))
    for step in range(total):
        s.step(step / per_epoch)
        print(repr(o.param_groups[0]["lr"]))
)PY";

struct PolyOrRestartsCase {
  const char* kind;
  int total;
  int per_epoch;
  double a;  // power, or T_0
  int b;     // T_mult
  double eta_min;
};

TEST(LrScheduleTest, PolynomialAndRestartsArePyTorchs) {
  if (const std::string why = stoker::testing::torchvision_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<PolyOrRestartsCase> cases{{"poly", 50, 10, 0.9, 1, 0},
                                              {"poly", 17, 10, 2.0, 1, 0},
                                              {"restarts", 120, 7, 3, 1, 0.001},
                                              {"restarts", 160, 5, 2, 2, 0},
                                              {"restarts", 90, 4, 1, 3, 0.01}};
  std::vector<std::string> arguments;
  for (const PolyOrRestartsCase& k : cases)
    arguments.push_back(fmt::format("{} {} {} {} {} {}", k.kind, k.total, k.per_epoch, k.a, k.b, k.eta_min));
  const auto run = stoker::testing::run_python_cases(kPolyAndRestartsScript, arguments);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.outputs.size(), cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    const PolyOrRestartsCase& k = cases[c];
    SCOPED_TRACE(
        fmt::format("{} total {} per epoch {} {} {} eta_min {}", k.kind, k.total, k.per_epoch, k.a, k.b, k.eta_min));
    TrainConfig cfg;
    cfg.lr = 0.3;
    const bool poly = k.kind == std::string("poly");
    cfg.schedule = poly ? ScheduleKind::kPolynomial : ScheduleKind::kCosineRestarts;
    cfg.poly_power = k.a;
    cfg.restart_epochs = static_cast<int>(k.a);
    cfg.restart_mult = k.b;
    cfg.lr_min = k.eta_min;
    std::istringstream lines(run.outputs[c]);
    int step = 0;
    int rises = 0;  // restarts: the steps where the rate jumps back up
    double previous = cfg.lr;
    for (double lr = 0; lines >> lr; ++step) {
      const double ours = lr_at(cfg, step, k.total, k.per_epoch);
      // PolynomialLR multiplies its last rate by a ratio each step: rounding accumulates.
      EXPECT_NEAR(ours, lr, poly ? 1e-15 + 1e-12 * lr : 1e-15) << "step " << step;
      rises += ours > previous ? 1 : 0;
      previous = ours;
    }
    EXPECT_EQ(step, poly ? k.total + 3 : k.total);
    if (poly) {
      EXPECT_EQ(lr_at(cfg, k.total, k.total, k.per_epoch), 0.0);  // 0 from the last step on
    } else {
      // 120 steps of 7: 17.1 epochs in cycles of 3, restarts at 3, 6, 9, 12, 15. 160 of 5: 32
      // epochs in cycles of 2, 4, 8, 16, 32, restarts at 2, 6, 14, 30. 90 of 4: 22.5 epochs in
      // cycles of 1, 3, 9, 27, restarts at 1, 4, 13.
      const int expected = k.total == 120 ? 5 : k.total == 160 ? 4 : 3;
      EXPECT_EQ(rises, expected);
    }
  }
  // After a warmup the schedule starts from its beginning, as the others do.
  TrainConfig cfg;
  cfg.lr = 0.3;
  cfg.schedule = ScheduleKind::kCosineRestarts;
  cfg.restart_epochs = 2;
  cfg.warmup_epochs = 1;
  EXPECT_DOUBLE_EQ(lr_at(cfg, 10, 100, 10), 0.3);     // the warmup's end: the top of the first cycle
  EXPECT_NEAR(lr_at(cfg, 20, 100, 10), 0.15, 1e-15);  // halfway through it
  EXPECT_DOUBLE_EQ(lr_at(cfg, 30, 100, 10), 0.3);     // the restart
  cfg.schedule = ScheduleKind::kPolynomial;
  cfg.poly_power = 1;
  EXPECT_DOUBLE_EQ(lr_at(cfg, 10, 100, 10), 0.3);
  EXPECT_NEAR(lr_at(cfg, 55, 100, 10), 0.15, 1e-15);  // linear over the 90 steps left
}

// The Stepper sets the cycle's momentum on the optimizer before each step, as OneCycleLR does.
TEST(LrScheduleTest, TheStepperAppliesTheCyclesMomentum) {
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  cfg.lr = 0.4;
  cfg.schedule = ScheduleKind::kOneCycle;
  testing::Twin twin = testing::make_twin(3);
  Stepper stepper(cfg, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 20, 10);
  const auto x = torch::randn({8, 1, 8, 8});
  const auto y = torch::randint(0, 10, {8}, torch::kInt64);
  for (int64_t step = 0; step < 5; ++step) {
    stepper.step(x, y);
    const auto& options = static_cast<const torch::optim::SGDOptions&>(twin.optimizer->param_groups()[0].options());
    EXPECT_DOUBLE_EQ(options.lr(), lr_at(cfg, step, 20, 10)) << step;
    EXPECT_DOUBLE_EQ(options.momentum(), *momentum_at(cfg, step, 20)) << step;
  }
  EXPECT_LT(static_cast<const torch::optim::SGDOptions&>(twin.optimizer->param_groups()[0].options()).momentum(), 0.95);
}

// The plateau schedule's rate caps the step's: the warmup's below it, lr above it.
TEST(LrScheduleTest, TheStepperCapsTheRateAtThePlateaus) {
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  cfg.lr = 0.4;
  cfg.schedule = ScheduleKind::kPlateau;
  cfg.warmup_steps = 4;
  testing::Twin twin = testing::make_twin(5);
  Stepper stepper(cfg, *twin.model, *twin.optimizer, classification_objective(10), torch::kCPU, 20, 10);
  stepper.cap_lr(0.04);
  const auto x = torch::randn({8, 1, 8, 8});
  const auto y = torch::randint(0, 10, {8}, torch::kInt64);
  const auto lr_now = [&] { return twin.optimizer->param_groups()[0].options().get_lr(); };
  stepper.step(x, y);  // step 0 of the warmup: 0.4 x 0.01, below the cap
  EXPECT_DOUBLE_EQ(lr_now(), 0.004);
  for (int i = 0; i < 5; ++i) stepper.step(x, y);
  EXPECT_DOUBLE_EQ(lr_now(), 0.04);
  stepper.cap_lr(0.004);
  stepper.step(x, y);
  EXPECT_DOUBLE_EQ(lr_now(), 0.004);
}

}  // namespace
}  // namespace stoker::train
