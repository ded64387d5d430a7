// Training steps on each device and precision: a conv net memorises one fixed batch through
// the Stepper (host batch in, copy, autocast, loss scaling for fp16, optimiser), and an
// allocation the device cannot serve becomes the one line that names the batch size. The
// CPU runs here; the Cuda tests run the same checks on the first GPU and skip themselves
// where there is none.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "device_fixtures.h"
#include "stoker/train/config.h"
#include "support/sanitizers.h"
#include "train/torch/model/models.h"
#include "train/torch/step/out_of_memory.h"
#include "train/torch/step/step.h"

namespace stoker::train {
namespace {

// 30 AdamW steps on one batch of 32 random 1×28×28 images with random labels: the loss must
// fall below half of the first step's, every step must be taken (fp16 may skip a few while
// its scale settles) and the weights must live on `device`.
void check_memorises_a_batch(const torch::Device& device, AmpMode amp) {
  SCOPED_TRACE(device.str() + (amp == AmpMode::kOff ? " fp32" : amp == AmpMode::kBf16 ? " bf16" : " fp16"));
  TrainConfig cfg;
  cfg.amp = amp;
  cfg.batch_size = 32;
  cfg.lr = 2e-3;
  torch::manual_seed(5);
  const torch::Tensor x = torch::randn({32, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {32}, torch::kInt64);
  auto model = make_model("mnist_cnn", {1, 28, 28}, 10);
  model->to(device);
  if (device.is_cuda()) to_channels_last(*model);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(cfg.lr));
  const int steps = 30;
  Stepper stepper(cfg, *model, optimizer, classification_objective(10), device, steps, steps);
  double first = 0, last = 0;
  int skipped = 0;
  for (int i = 0; i < steps; ++i) {
    const Stepper::Result r = stepper.step(x, y);
    ASSERT_TRUE(std::isfinite(r.loss)) << "step " << i;
    EXPECT_TRUE(r.stepped);
    skipped += r.skipped ? 1 : 0;
    (i == 0 ? first : last) = r.loss;
  }
  EXPECT_LT(last, 0.5 * first) << "first loss " << first;
  EXPECT_LE(skipped, 5);
  EXPECT_EQ(stepper.scaler() != nullptr, amp == AmpMode::kFp16);
  for (const auto& p : model->parameters()) ASSERT_EQ(p.device(), device);
}

// fp16 on the CPU: the trainer refuses it, but the Stepper runs the scaler on fp32 math.
TEST(DeviceStepTest, TheCpuMemorisesABatchInEachPrecision) {
  for (const AmpMode amp : {AmpMode::kOff, AmpMode::kBf16, AmpMode::kFp16}) {
    check_memorises_a_batch(torch::kCPU, amp);
  }
}

TEST(DeviceStepTest, CudaMemorisesABatchInFp32Bf16AndFp16) {
  STOKER_SKIP_WITHOUT_CUDA();
  for (const AmpMode amp : {AmpMode::kOff, AmpMode::kBf16, AmpMode::kFp16}) {
    check_memorises_a_batch(torch::Device(torch::kCUDA, 0), amp);
  }
}

// 2^42 floats (16 TiB) cannot be allocated on any device here: the failure is recognised as
// out of memory and named with the batch size and what to try.
void check_out_of_memory_is_named(const torch::Device& device) {
  TrainConfig cfg;
  cfg.batch_size = 256;
  try {
    naming_out_of_memory(
        cfg, device, [] { return std::string("in training step 1 of epoch 1"); },
        [&] { return torch::empty({int64_t{1} << 42}, torch::TensorOptions(device)); });
    FAIL() << "a 16 TiB tensor was allocated on " << device.str();
  } catch (const SystemError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("out of memory in training step 1 of epoch 1 at batch size 256 on " +
                                              device.str() + "; try --batch-size 128 --accumulation-steps 2",
                                          0),
              0u)
        << e.what();
  }
}

TEST(DeviceStepTest, AnAllocationTheCpuCannotServeNamesTheBatchSize) {
#if defined(STOKER_UNDER_ASAN) || defined(STOKER_UNDER_TSAN)
  GTEST_SKIP() << "a sanitizer's allocator reports a 16 TiB request instead of failing it";
#endif
  std::ifstream overcommit("/proc/sys/vm/overcommit_memory");
  int mode = 0;
  if (overcommit >> mode && mode == 1) {
    GTEST_SKIP() << "this machine overcommits memory (vm.overcommit_memory = 1): a 16 TiB request succeeds";
  }
  check_out_of_memory_is_named(torch::kCPU);
}

TEST(DeviceStepTest, CudaAnAllocationTheGpuCannotServeNamesTheBatchSize) {
  STOKER_SKIP_WITHOUT_CUDA();
  check_out_of_memory_is_named(torch::Device(torch::kCUDA, 0));
  // The allocator is usable afterwards: the failed request left nothing behind.
  EXPECT_EQ(torch::ones({4}, torch::TensorOptions(torch::kCUDA)).sum().item<float>(), 4.0f);
}

}  // namespace
}  // namespace stoker::train
