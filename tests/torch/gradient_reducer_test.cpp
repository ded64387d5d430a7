// The gradient reducer over a real two-rank Gloo group (each rank a thread of this test, over
// one in-process store): its buckets follow backward's order with a small first one, an armed
// backward has sent every bucket by the time it returns (the overlap with backward), and the
// means it writes are those of the ranks' gradients, armed or not.
#include "train/torch/parallel/gradient_reducer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <vector>

#include "train/torch/model/models.h"
#include "train/torch/parallel/gloo_group.h"

namespace stoker::train {
namespace {

// Runs body(rank, reducer) on two threads, each with its own Gloo process group.
void run_pair(const std::function<void(int, GradientReducer&)>& body) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::future<void>> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(std::async(std::launch::async, [&, rank] {
      GradientReducer reducer(make_gloo_group(store, rank, 2, std::chrono::minutes(5), {}, true), 2);
      body(rank, reducer);
    }));
  }
  for (auto& rank : ranks) rank.get();
}

// An MLP on 128×128 inputs: fc1.weight (33.5 MB) and the rest (0.5 MB).
std::shared_ptr<Network> wide_mlp() {
  torch::manual_seed(7);
  auto model = make_model("mlp", {1, 128, 128}, 10);
  model->eval();  // no dropout: the gradients depend on the inputs alone
  return model;
}

void backward_on(Network& model, int rank) {
  torch::manual_seed(40 + rank);
  const auto x = torch::randn({4, 1, 128, 128});
  const auto y = torch::randint(0, 10, {4}, torch::kInt64);
  torch::nn::functional::cross_entropy(model.forward(x), y).backward();
}

class GradientReducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gloo_available()) GTEST_SKIP() << "built without Gloo's headers";
  }
};

TEST_F(GradientReducerTest, BucketsFollowBackwardsOrderWithASmallFirstOne) {
  run_pair([](int /*rank*/, GradientReducer& reducer) {
    auto model = wide_mlp();
    reducer.attach(*model);
    // Parameters: fc1.weight, fc1.bias, fc2.weight, fc2.bias, fc3.weight, fc3.bias. The last
    // layers first, up to 1 MB; fc1.weight alone is larger than a 25 MB bucket.
    EXPECT_EQ(reducer.bucket_members(), (std::vector<std::vector<size_t>>{{5, 4, 3, 2, 1}, {0}}));
  });
}

void expect_means(bool armed) {
  std::shared_ptr<Network> models[2] = {wide_mlp(), wide_mlp()};
  constexpr int kSteps = 2;                                    // the kept buckets and hooks serve again
  std::vector<torch::Tensor> own[kSteps][2], mean[kSteps][2];  // before and after the average
  run_pair([&](int rank, GradientReducer& reducer) {
    Network& model = *models[rank];
    reducer.attach(model);
    for (int step = 0; step < kSteps; ++step) {
      if (armed) reducer.arm();
      backward_on(model, rank + 2 * step);
      // Armed: every bucket left during backward. Not armed: none did.
      EXPECT_EQ(reducer.sent_count(), armed ? 2U : 0U) << "rank " << rank << " step " << step;
      for (const torch::Tensor& p : model.parameters()) own[step][rank].push_back(p.grad().clone());
      reducer.finish(model);
      EXPECT_EQ(reducer.sent_count(), 0U);
      for (const torch::Tensor& p : model.parameters()) {
        mean[step][rank].push_back(p.grad().clone());
        p.mutable_grad().reset();  // set_to_none, as the optimiser step does
      }
    }
  });
  for (int step = 0; step < kSteps; ++step) {
    for (size_t i = 0; i < own[step][0].size(); ++i) {
      EXPECT_FALSE(torch::equal(own[step][0][i], own[step][1][i])) << "the ranks computed the same " << i;
      const torch::Tensor expected = (own[step][0][i] + own[step][1][i]) * 0.5;
      EXPECT_TRUE(torch::equal(mean[step][0][i], expected)) << "step " << step << " parameter " << i;
      EXPECT_TRUE(torch::equal(mean[step][1][i], expected)) << "step " << step << " parameter " << i;
    }
  }
}

TEST_F(GradientReducerTest, AnArmedBackwardSendsEveryBucketBeforeItReturns) { expect_means(true); }

TEST_F(GradientReducerTest, WithoutArmingFinishSendsEverything) { expect_means(false); }

}  // namespace
}  // namespace stoker::train
