// fp16 loss scaling with GradScaler's rules, on the CPU and (where there is one) on the GPU:
// injected inf/NaN gradients skip their steps and halve the scale, clean runs double it every
// growth_interval steps, and the weights equal a control that took the same steps without
// any scaling.
#include "train/torch/step/grad_scaler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "device_fixtures.h"
#include "train/torch/model/models.h"

namespace stoker::train {
namespace {

void check_skips_and_scale_rules(const torch::Device& device) {
  torch::manual_seed(3);
  const auto x = torch::randn({32, 1, 8, 8}).to(device);
  const auto y = torch::randint(0, 10, {32}, torch::kInt64).to(device);
  torch::manual_seed(1);
  auto scaled = make_model("mlp", {1, 8, 8}, 10);
  torch::manual_seed(1);
  auto control = make_model("mlp", {1, 8, 8}, 10);
  scaled->to(device);
  control->to(device);
  scaled->eval();  // no dropout: both sides compute the same function
  control->eval();
  torch::optim::SGD opt_scaled(scaled->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  torch::optim::SGD opt_control(control->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  GradScaler scaler(65536.0, 2.0, 0.5, /*growth_interval=*/3);

  const std::set<int> inf_steps{2}, nan_steps{6};
  std::vector<double> scales;
  for (int step = 0; step < 10; ++step) {
    opt_scaled.zero_grad();
    scaler.scale(torch::nn::functional::cross_entropy(scaled->forward(x), y)).backward();
    if (inf_steps.count(step) || nan_steps.count(step)) {
      const double bad = inf_steps.count(step) ? std::numeric_limits<double>::infinity() : std::nan("");
      scaled->parameters()[0].mutable_grad().view(-1)[5] = bad;
    }
    const bool stepped = scaler.step(opt_scaled);
    EXPECT_EQ(stepped, !inf_steps.count(step) && !nan_steps.count(step)) << "step " << step;
    scales.push_back(scaler.state().scale);
    if (stepped) {  // the control takes exactly the steps that were not skipped
      opt_control.zero_grad();
      torch::nn::functional::cross_entropy(control->forward(x), y).backward();
      opt_control.step();
    }
  }
  // 0,1 clean; 2 inf → ×0.5; 3,4,5 clean → ×2 after the third; 6 NaN → ×0.5; 7,8,9 → ×2.
  const std::vector<double> expected{65536, 65536, 32768, 32768, 32768, 65536, 32768, 32768, 32768, 65536};
  EXPECT_EQ(scales, expected);
  EXPECT_EQ(scaler.state().skipped, 2);
  const auto a = scaled->parameters(), b = control->parameters();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].device(), device);
    EXPECT_LT((a[i] - b[i]).abs().max().item<double>(), 1e-6) << "parameter " << i;
  }
}

TEST(GradScalerTest, SkipsInjectedInfAndNanStepsAndFollowsTheScaleRules) { check_skips_and_scale_rules(torch::kCPU); }

TEST(GradScalerTest, CudaSkipsInjectedInfAndNanStepsAndFollowsTheScaleRules) {
  STOKER_SKIP_WITHOUT_CUDA();
  check_skips_and_scale_rules(torch::Device(torch::kCUDA, 0));
}

TEST(GradScalerTest, StateRoundTrips) {
  GradScaler scaler;
  EXPECT_EQ(scaler.state().scale, 65536.0);
  scaler.set_state({1024.0, 17, 4});
  EXPECT_EQ(scaler.state().scale, 1024.0);
  EXPECT_EQ(scaler.state().growth_tracker, 17);
  EXPECT_EQ(scaler.state().skipped, 4);
}

}  // namespace
}  // namespace stoker::train
