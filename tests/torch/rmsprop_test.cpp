// --opt rmsprop: make_optimizer's RMSprop steps as torch.optim.RMSprop(params, lr, momentum,
// weight_decay, eps=0.0316, alpha=0.9) does, as torchvision's train.py builds it (held to
// Debian's python3-torch); its state goes through a checkpoint so that a resumed run continues
// exactly; onecycle's cycle_momentum moves its momentum.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "stoker/train/config.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"
#include "train/torch/run/setup.h"
#include "train/torch/step/step.h"

namespace stoker::train {
namespace {

// Parameter i starts at linspace(-1, 1) x (i + 1); its gradient at step k is
// cos(0.37 j + k + i) over its elements j. Prints every parameter's values after `steps` steps.
constexpr const char* kRmspropScript = R"PY(
import sys, torch
lr, momentum, wd, steps = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
shapes = [[int(d) for d in s.split("x")] for s in sys.argv[5:]]
params = []
for i, shape in enumerate(shapes):
    n = 1
    for d in shape: n *= d
    params.append(torch.nn.Parameter((torch.linspace(-1, 1, n) * (i + 1)).reshape(shape)))
o = torch.optim.RMSprop(params, lr=lr, momentum=momentum, weight_decay=wd, eps=0.0316, alpha=0.9)
for k in range(steps):
    for i, p in enumerate(params):
        p.grad = torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + k + i).reshape(p.shape)
    o.step()
for p in params:
    print(" ".join(repr(v) for v in p.detach().reshape(-1).tolist()))
)PY";

void set_start(Network& model) {
  torch::NoGradGuard no_grad;
  int64_t i = 0;
  for (auto& p : model.parameters()) {
    p.copy_((torch::linspace(-1, 1, p.numel()) * static_cast<double>(i + 1)).reshape(p.sizes()));
    ++i;
  }
}

void set_gradients(Network& model, int64_t step) {
  int64_t i = 0;
  for (auto& p : model.parameters()) {
    p.mutable_grad() =
        torch::cos(torch::arange(p.numel(), torch::kFloat32) * 0.37 + static_cast<double>(step + i)).reshape(p.sizes());
    ++i;
  }
}

TrainConfig rmsprop_config(double momentum, double weight_decay) {
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kRmsprop;
  cfg.lr = 0.01;
  cfg.momentum = momentum;
  cfg.weight_decay = weight_decay;
  return cfg;
}

TEST(RmspropTest, StepsAsTorchOptimRmsprop) {
  if (const std::string why = stoker::testing::torchvision_missing(); !why.empty()) GTEST_SKIP() << why;
  struct Case {
    double momentum, weight_decay;
    int steps;
  };
  const std::vector<Case> cases{{0.9, 1e-4, 1}, {0.9, 1e-4, 5}, {0, 0, 3}, {0.5, 0.01, 4}};
  const auto model = make_model("mlp", {1, 4, 4}, 3);
  std::string shapes;
  for (const auto& p : model->parameters()) {
    std::string shape;
    for (const int64_t d : p.sizes()) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    shapes += " " + shape;
  }
  std::vector<std::string> arguments;
  for (const Case& k : cases)
    arguments.push_back(fmt::format("0.01 {} {} {}{}", k.momentum, k.weight_decay, k.steps, shapes));
  const auto run = stoker::testing::run_python_cases(kRmspropScript, arguments);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.outputs.size(), cases.size());
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    SCOPED_TRACE(fmt::format("momentum {} weight_decay {} steps {}", k.momentum, k.weight_decay, k.steps));
    set_start(*model);
    const auto optimizer = make_optimizer(rmsprop_config(k.momentum, k.weight_decay), *model);
    for (int step = 0; step < k.steps; ++step) {
      set_gradients(*model, step);
      optimizer->step();
    }
    std::istringstream lines(run.outputs[c]);
    for (const auto& p : model->parameters()) {
      std::string line;
      ASSERT_TRUE(std::getline(lines, line));
      std::istringstream values(line);
      const torch::Tensor ours = p.detach().reshape(-1);
      int64_t j = 0;
      for (double theirs = 0; values >> theirs; ++j) {
        ASSERT_LT(j, ours.numel());
        EXPECT_NEAR(ours[j].item<double>(), theirs, 1e-6) << j;
      }
      EXPECT_EQ(j, ours.numel());
    }
  }
}

// Two steps, a checkpoint, two more from it: the same weights as four uninterrupted steps.
TEST(RmspropTest, ACheckpointedRunContinuesExactly) {
  for (const double momentum : {0.9, 0.0}) {
    SCOPED_TRACE(fmt::format("momentum {}", momentum));
    const TrainConfig cfg = rmsprop_config(momentum, 1e-4);
    const auto whole = make_model("mlp", {1, 4, 4}, 3);
    set_start(*whole);
    const auto whole_optimizer = make_optimizer(cfg, *whole);
    for (int step = 0; step < 4; ++step) {
      set_gradients(*whole, step);
      whole_optimizer->step();
    }

    const auto first = make_model("mlp", {1, 4, 4}, 3);
    set_start(*first);
    const auto first_optimizer = make_optimizer(cfg, *first);
    for (int step = 0; step < 2; ++step) {
      set_gradients(*first, step);
      first_optimizer->step();
    }
    testing::TempDir dir;
    const std::string path = dir.str() + "/checkpoint.pt";
    CheckpointMeta meta;
    meta.model = "mlp";
    save_checkpoint(path, *first, *first_optimizer, meta);

    const auto resumed = make_model("mlp", {1, 4, 4}, 3);
    const auto resumed_optimizer = make_optimizer(cfg, *resumed);
    ASSERT_NO_THROW(load_checkpoint(path, *resumed, *resumed_optimizer));
    for (int step = 2; step < 4; ++step) {
      set_gradients(*resumed, step);
      resumed_optimizer->step();
    }
    const auto a = whole->parameters(), b = resumed->parameters();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
  }
}

// OneCycleLR moves RMSprop's group["momentum"], and so does the Stepper.
TEST(RmspropTest, TheStepperAppliesTheCyclesMomentum) {
  TrainConfig cfg = rmsprop_config(0.9, 0);
  cfg.schedule = ScheduleKind::kOneCycle;
  torch::manual_seed(3);
  const auto model = make_model("mlp", {1, 8, 8}, 10);
  model->eval();
  const auto optimizer = make_optimizer(cfg, *model);
  Stepper stepper(cfg, *model, *optimizer, classification_objective(10), torch::kCPU, 20, 10);
  const auto x = torch::randn({8, 1, 8, 8});
  const auto y = torch::randint(0, 10, {8}, torch::kInt64);
  for (int64_t step = 0; step < 5; ++step) {
    stepper.step(x, y);
    const auto& options = static_cast<const torch::optim::RMSpropOptions&>(optimizer->param_groups()[0].options());
    EXPECT_DOUBLE_EQ(options.lr(), lr_at(cfg, step, 20, 10)) << step;
    EXPECT_DOUBLE_EQ(options.momentum(), *momentum_at(cfg, step, 20)) << step;
  }
}

}  // namespace
}  // namespace stoker::train
