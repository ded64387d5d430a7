// The plateau schedule against PyTorch's own ReduceLROnPlateau (Debian's python3-torch): the
// same losses (mode min) or accuracies (mode max), epoch by epoch, give the same rate, best,
// bad-epoch count and cooldown.
#include "train/common/plateau.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_command.h"

namespace stoker::train {
namespace {

constexpr const char* kPlateauScript = R"PY(
import sys, torch
factor, patience, threshold, mode, cooldown, min_lr, losses, direction = sys.argv[1:]
p = torch.nn.Parameter(torch.zeros(1))
o = torch.optim.SGD([p], lr=0.1)
s = torch.optim.lr_scheduler.ReduceLROnPlateau(o, mode=direction, factor=float(factor), patience=int(patience),
    threshold=float(threshold), threshold_mode=mode, cooldown=int(cooldown), min_lr=float(min_lr))
for loss in losses.split(","):
    s.step(float(loss))
    print(repr(o.param_groups[0]["lr"]), s.num_bad_epochs, s.cooldown_counter, repr(float(s.best)))
)PY";

struct PlateauCase {
  double factor;
  int patience;
  double threshold;
  const char* mode;
  int cooldown;
  double min_lr;
};

// PyTorch's ReduceLROnPlateau over `values` (comma-separated), mode `direction`, for each case
// in one Python process: a line per epoch, per case.
stoker::testing::PythonCasesResult run_pytorch(const std::vector<PlateauCase>& cases, const std::string& values,
                                               const char* direction) {
  std::vector<std::string> lines;
  for (const PlateauCase& k : cases)
    lines.push_back(fmt::format("{} {} {} {} {} {} {} {}", k.factor, k.patience, k.threshold, k.mode, k.cooldown,
                                k.min_lr, values, direction));
  return stoker::testing::run_python_cases(kPlateauScript, lines);
}

// The config that sets stoker's plateau as `k` sets PyTorch's, watching `metric`.
TrainConfig config_of(const PlateauCase& k, const char* metric) {
  TrainConfig cfg;
  cfg.schedule = ScheduleKind::kPlateau;
  cfg.plateau_metric = metric;
  cfg.lr = 0.1;
  cfg.plateau_factor = k.factor;
  cfg.plateau_patience = k.patience;
  cfg.plateau_threshold = k.threshold;
  cfg.plateau_threshold_mode = k.mode;
  cfg.plateau_cooldown = k.cooldown;
  cfg.lr_min = k.min_lr;
  validate(cfg);
  return cfg;
}

TEST(PlateauTest, IsPyTorchsReduceLROnPlateau) {
  if (const std::string why = stoker::testing::torchvision_missing(); !why.empty()) GTEST_SKIP() << why;
  // Falls, stalls, a loss within the threshold of the best, a NaN, a new best, stalls again.
  const std::string losses = "2.0,1.5,1.5,1.49999,1.6,nan,1.4,1.4,1.41,1.39,1.39,1.39,1.39,1.39,1.39,1.0,1.2,1.2,1.2";
  const std::vector<PlateauCase> cases{{0.1, 2, 1e-4, "rel", 0, 0},
                                       {0.5, 0, 1e-4, "rel", 0, 0},
                                       {0.5, 1, 0.05, "abs", 2, 0},
                                       {0.1, 0, 1e-4, "rel", 1, 0.002},
                                       {0.3, 3, 0.0, "rel", 0, 0.0}};
  const auto run = run_pytorch(cases, losses, "min");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.outputs.size(), cases.size());
  int lowerings = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const PlateauCase& k = cases[c];
    SCOPED_TRACE(fmt::format("factor {} patience {} threshold {} {} cooldown {} min_lr {}", k.factor, k.patience,
                             k.threshold, k.mode, k.cooldown, k.min_lr));
    Plateau plateau(config_of(k, "val_loss"));
    std::istringstream lines(run.outputs[c]);
    std::istringstream given(losses);
    std::string loss_text;
    int epoch = 0;
    for (; std::getline(given, loss_text, ','); ++epoch) {
      double lr = 0, best = 0;
      int64_t bad = 0, cooldown = 0;
      std::string best_text;
      ASSERT_TRUE(lines >> lr >> bad >> cooldown >> best_text) << run.outputs[c];
      best = best_text == "inf" ? std::numeric_limits<double>::infinity() : std::stod(best_text);
      const double before = plateau.lr();
      const bool lowered = plateau.observe(std::stod(loss_text));
      lowerings += lowered ? 1 : 0;
      EXPECT_EQ(lowered, lr != before) << "epoch " << epoch;
      EXPECT_EQ(plateau.lr(), lr) << "epoch " << epoch;
      EXPECT_EQ(plateau.state().best, best) << "epoch " << epoch;
      EXPECT_EQ(plateau.state().bad_epochs, bad) << "epoch " << epoch;
      EXPECT_EQ(plateau.state().cooldown_left, cooldown) << "epoch " << epoch;
    }
    EXPECT_EQ(epoch, 19);
  }
  EXPECT_GE(lowerings, 10);  // the cases do lower the rate, often

  // A state given back (a resume) goes on from where it was.
  TrainConfig cfg;
  cfg.schedule = ScheduleKind::kPlateau;
  cfg.plateau_patience = 1;
  Plateau resumed(cfg, PlateauState{0.01, 1.5, 1, 0});
  EXPECT_FALSE(resumed.restarted());
  EXPECT_TRUE(resumed.observe(1.6));
  EXPECT_DOUBLE_EQ(resumed.lr(), 0.001);
}

// plateau_metric val_top1: mode max, on an accuracy that rises, stalls within the threshold,
// falls, reads NaN and rises again.
TEST(PlateauTest, WatchingTheAccuracyIsModeMax) {
  if (const std::string why = stoker::testing::torchvision_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::string accuracies = "0.5,0.7,0.7,0.70005,0.69,nan,0.8,0.8,0.81,0.79,0.8,0.8,0.8,0.9,0.85,0.85";
  const std::vector<PlateauCase> cases{{0.1, 1, 1e-4, "rel", 0, 0}, {0.5, 0, 0.02, "abs", 1, 0.01}};
  const auto run = run_pytorch(cases, accuracies, "max");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.outputs.size(), cases.size());
  int lowerings = 0;
  for (size_t c = 0; c < cases.size(); ++c) {
    const PlateauCase& k = cases[c];
    SCOPED_TRACE(fmt::format("factor {} patience {} threshold {} {}", k.factor, k.patience, k.threshold, k.mode));
    Plateau plateau(config_of(k, "val_top1"));
    EXPECT_EQ(plateau.state().best, -std::numeric_limits<double>::infinity());
    std::istringstream lines(run.outputs[c]);
    std::istringstream given(accuracies);
    std::string text;
    int epoch = 0;
    for (; std::getline(given, text, ','); ++epoch) {
      double lr = 0;
      int64_t bad = 0, cooldown = 0;
      std::string best_text;
      ASSERT_TRUE(lines >> lr >> bad >> cooldown >> best_text) << run.outputs[c];
      lowerings += plateau.observe(std::stod(text)) ? 1 : 0;
      EXPECT_EQ(plateau.lr(), lr) << "epoch " << epoch;
      EXPECT_EQ(plateau.state().best, std::stod(best_text)) << "epoch " << epoch;
      EXPECT_EQ(plateau.state().bad_epochs, bad) << "epoch " << epoch;
      EXPECT_EQ(plateau.state().cooldown_left, cooldown) << "epoch " << epoch;
    }
    EXPECT_EQ(epoch, 16);
  }
  EXPECT_GE(lowerings, 4);

  // A checkpoint whose plateau watched the loss, resumed watching the accuracy: the rate it had
  // reached stays, the record (a best loss of 0.3) starts afresh.
  TrainConfig cfg;
  cfg.schedule = ScheduleKind::kPlateau;
  cfg.plateau_metric = "val_top1";
  cfg.plateau_patience = 0;
  Plateau switched(cfg, PlateauState{0.01, 0.3, 0, 0, "val_loss"});
  EXPECT_TRUE(switched.restarted());
  EXPECT_EQ(switched.metric(), "val_top1");
  EXPECT_DOUBLE_EQ(switched.lr(), 0.01);
  EXPECT_FALSE(switched.observe(0.6));  // better than -inf, not worse than 0.3
  EXPECT_EQ(switched.state().best, 0.6);
  EXPECT_TRUE(switched.observe(0.5));
  EXPECT_DOUBLE_EQ(switched.lr(), 0.001);
}

}  // namespace
}  // namespace stoker::train
