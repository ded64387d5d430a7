// Gradient clipping (clip_grad_norm): the total L2 norm of a window's gradients is measured
// and scaled down to the limit before the optimizer steps, as torch.nn.utils.clip_grad_norm_.
// The expected steps here are computed by hand from the unclipped gradients. With fp16 the
// norm is the unscaled one; with accumulation it is the window's, not a batch's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "param_diff.h"
#include "stoker/train/config.h"
#include "train/torch/model/models.h"
#include "train/torch/step/step.h"
#include "twin.h"

namespace stoker::train {
namespace {

using testing::make_twin;
using testing::max_difference;
using testing::Twin;

struct RandomBatch {
  torch::Tensor x, y;
};

RandomBatch make_batch(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  return {torch::randn({n, 1, 8, 8}), torch::randint(0, 10, {n}, torch::kInt64)};
}

TrainConfig clipping(double max_norm) {
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  cfg.lr = 0.1;  // the twins' SGD
  cfg.clip_grad_norm = max_norm;
  return cfg;
}

// The total L2 norm of `model`'s gradients for one batch, computed without stoker: every
// gradient flattened into one vector. Leaves the gradients in place.
double unclipped_norm(Network& model, const RandomBatch& b) {
  for (auto& p : model.parameters()) p.mutable_grad() = torch::Tensor();
  torch::nn::functional::cross_entropy(model.forward(b.x), b.y).backward();
  std::vector<torch::Tensor> flat;
  for (auto& p : model.parameters()) flat.push_back(p.grad().reshape(-1).to(torch::kDouble));
  return torch::cat(flat).norm().item<double>();
}

// One SGD step of `twin` with its gradients scaled by min(1, max_norm / norm), by hand.
void step_by_hand(Twin& twin, const RandomBatch& b, double max_norm) {
  const double norm = unclipped_norm(*twin.model, b);
  const double coefficient = std::min(1.0, max_norm / (norm + 1e-6));
  for (auto& p : twin.model->parameters()) p.mutable_grad().mul_(coefficient);
  twin.optimizer->step();
}

TEST(ClipGradNormTest, ScalesTheGradientsDownToTheLimitAndReportsTheNorm) {
  const RandomBatch batch = make_batch(32, 11);
  Twin probe = make_twin(5);
  const double norm = unclipped_norm(*probe.model, batch);
  ASSERT_GT(norm, 0);

  for (const double limit : {norm / 4, norm * 10}) {
    const TrainConfig cfg = clipping(limit);
    Twin a = make_twin(5), b = make_twin(5);
    Stepper stepper(cfg, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
    const Stepper::Result r = stepper.step(batch.x, batch.y);
    ASSERT_TRUE(r.stepped);
    EXPECT_NEAR(r.grad_norm, norm, 1e-5 * norm) << "limit " << limit;
    EXPECT_EQ(r.clipped, limit < norm) << "limit " << limit;
    step_by_hand(b, batch, limit);
    EXPECT_LT(max_difference(*a.model, *b.model), 1e-6) << "limit " << limit;
  }

  // Not vacuous: clipped and unclipped steps land in different places.
  Twin clipped = make_twin(5), free = make_twin(5);
  step_by_hand(clipped, batch, norm / 4);
  step_by_hand(free, batch, norm * 10);
  EXPECT_GT(max_difference(*clipped.model, *free.model), 1e-4);
}

TEST(ClipGradNormTest, OffMeansNoNormAndTheUnclippedStep) {
  const RandomBatch batch = make_batch(32, 12);
  Twin a = make_twin(6), b = make_twin(6);
  const TrainConfig off = clipping(0);  // the Stepper keeps a reference
  Stepper stepper(off, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  const Stepper::Result r = stepper.step(batch.x, batch.y);
  EXPECT_LT(r.grad_norm, 0);
  EXPECT_FALSE(r.clipped);
  step_by_hand(b, batch, std::numeric_limits<double>::infinity());
  EXPECT_EQ(max_difference(*a.model, *b.model), 0.0);
}

// fp16's scaler multiplies the loss by 2^16: clipping must see the gradients after unscaling,
// or every step would be clipped by a norm 65,536 times too large.
TEST(ClipGradNormTest, Fp16ClipsTheUnscaledGradients) {
  const RandomBatch batch = make_batch(32, 13);
  Twin probe = make_twin(7);
  const double norm = unclipped_norm(*probe.model, batch);
  TrainConfig fp32 = clipping(norm * 2), fp16 = clipping(norm * 2);
  fp16.amp = AmpMode::kFp16;  // on the CPU: the scaler on fp32 math
  Twin a = make_twin(7), b = make_twin(7);
  Stepper sa(fp16, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  Stepper sb(fp32, *b.model, *b.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  ASSERT_NE(sa.scaler(), nullptr);
  const Stepper::Result ra = sa.step(batch.x, batch.y), rb = sb.step(batch.x, batch.y);
  EXPECT_FALSE(ra.skipped);
  EXPECT_NEAR(ra.grad_norm, norm, 1e-5 * norm);
  EXPECT_NEAR(ra.grad_norm, rb.grad_norm, 1e-5 * norm);
  EXPECT_FALSE(ra.clipped);
  EXPECT_LT(max_difference(*a.model, *b.model), 1e-6);
}

// A window whose gradients hold NaN is skipped by the scaler; nothing is clipped or measured.
TEST(ClipGradNormTest, Fp16SkippedWindowIsNotMeasured) {
  RandomBatch batch = make_batch(16, 14);
  batch.x[0][0][0][0] = std::numeric_limits<float>::quiet_NaN();
  TrainConfig cfg = clipping(1.0);
  cfg.amp = AmpMode::kFp16;
  Twin a = make_twin(8), b = make_twin(8);
  Stepper stepper(cfg, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  const Stepper::Result r = stepper.step(batch.x, batch.y);
  EXPECT_TRUE(r.stepped);
  EXPECT_TRUE(r.skipped);
  EXPECT_LT(r.grad_norm, 0);
  EXPECT_EQ(stepper.scaler()->state().skipped, 1);
  EXPECT_EQ(max_difference(*a.model, *b.model), 0.0);  // the weights did not move
}

// With accumulation the window's summed gradient is clipped once: 4 batches of 16 equal one
// batch of 64 with the same limit.
TEST(ClipGradNormTest, AccumulatedWindowIsClippedAsOneBatch) {
  const RandomBatch batch = make_batch(64, 15);
  Twin probe = make_twin(9);
  const double limit = unclipped_norm(*probe.model, batch) / 3;
  TrainConfig accumulated = clipping(limit), whole = clipping(limit);
  accumulated.accumulation_steps = 4;
  Twin a = make_twin(9), b = make_twin(9);
  Stepper sa(accumulated, *a.model, *a.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  Stepper sb(whole, *b.model, *b.optimizer, classification_objective(10), torch::kCPU, 100, 10);
  Stepper::Result last;
  for (int k = 0; k < 4; ++k) {
    last = sa.step(batch.x.slice(0, 16 * k, 16 * (k + 1)), batch.y.slice(0, 16 * k, 16 * (k + 1)));
    EXPECT_EQ(last.grad_norm >= 0, k == 3) << "batch " << k;
  }
  const Stepper::Result r = sb.step(batch.x, batch.y);
  EXPECT_TRUE(last.clipped);
  EXPECT_NEAR(last.grad_norm, r.grad_norm, 1e-5 * r.grad_norm);
  EXPECT_LT(max_difference(*a.model, *b.model), 1e-6);

  // The last partial window (3 of 4), scaled to a full window's weight, is clipped too.
  for (int k = 0; k < 3; ++k) sa.step(batch.x.slice(0, 16 * k, 16 * (k + 1)), batch.y.slice(0, 16 * k, 16 * (k + 1)));
  const Stepper::Result partial = sa.finish_window();
  EXPECT_TRUE(partial.stepped);
  EXPECT_GE(partial.grad_norm, 0);
}

}  // namespace
}  // namespace stoker::train
