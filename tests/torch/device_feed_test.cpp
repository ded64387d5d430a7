// The device feed's arithmetic, checked on the CPU: uint8 batches normalized by the feed
// equal the workers' float normalization within uint8 rounding, channels_last keeps every
// value, and a channels_last model computes what the contiguous one does. (The CUDA side
// stream and pinned buffers need a GPU: the Cuda tests at the end run there and skip
// themselves elsewhere.)
#include "train/torch/step/device_feed.h"

#include <gtest/gtest.h>

#include "device_fixtures.h"
#include "train/torch/model/models.h"
#include "train/torch/step/objective.h"
#include "train/torch/step/step.h"

namespace stoker::train {
namespace {

using stoker::testing::TempDir;
using testing::in_order;
using testing::photo_folder;

// `b` (from uint8, normalized by the feed, on any device) is `a` (float32 from the workers,
// on the CPU) within uint8 rounding: at most half a level, 0.5 / 255 / std.
void expect_fed_like(const FedBatch& a, const FedBatch& b, float worst_std) {
  ASSERT_EQ(b.images.scalar_type(), torch::kFloat32);
  ASSERT_EQ(a.images.sizes(), b.images.sizes());
  EXPECT_TRUE(torch::equal(a.targets, b.targets.cpu()));
  EXPECT_LE((a.images - b.images.cpu()).abs().max().item<double>(), 0.5 / 255 / worst_std + 1e-4);
}

TEST(DeviceFeedTest, Uint8BatchesNormalizedByTheFeedMatchTheWorkers) {
  TempDir dir;
  const auto source = photo_folder(dir);
  const Objective objective = classification_objective(2);

  // RandomErasing after Normalize: on the uint8 feed its value is written as the pixels that
  // normalize to it (within the same half level).
  data::LoaderOptions reference_options =
      in_order("Resize(16), CenterCrop(16), Normalize, RandomErasing(1, value=(0, 0.5, -1))");
  data::Loader reference(source, reference_options);
  data::LoaderOptions planned = reference_options;
  // plan_device_feed() moves Normalize to the feed only on CUDA; its CUDA half here.
  FeedOptions feed_options;
  move_normalize_to_feed(&planned.transform, &feed_options);
  ASSERT_EQ(planned.transform.dtype, data::DType::kUint8);
  EXPECT_EQ(plan_device_feed(torch::kCPU, true, &reference_options).normalize_mean, std::nullopt);
  data::Loader uint8_loader(source, planned);

  reference.start_epoch(0);
  uint8_loader.start_epoch(0);
  DeviceFeed expected(reference, objective, FeedOptions{});
  DeviceFeed fed(uint8_loader, objective, feed_options);
  const float worst_std =
      *std::min_element(planned.transform.normalize.std.begin(), planned.transform.normalize.std.end());
  int batches = 0;
  for (;;) {
    FedBatch a = expected.next(), b = fed.next();
    ASSERT_EQ(static_cast<bool>(a), static_cast<bool>(b));
    if (!a) break;
    ++batches;
    expect_fed_like(a, b, worst_std);
    EXPECT_GT(b.images.abs().max().item<double>(), 0.5);  // normalized, not raw 0..255 or 0..1
  }
  EXPECT_EQ(batches, 3);
  EXPECT_EQ(fed.copy_stall_s(), 0.0);  // no side stream on the CPU: nothing to move
}

// A copy that held the device up is moved from compute to copy, never more than the compute
// the host clock saw, and a negative (untimed) stall moves nothing.
TEST(DeviceFeedTest, CopyStallMovesFromComputeToCopy) {
  Stepper::Result r;
  r.copy_s = 0.001;
  r.compute_s = 0.050;
  r.charge_copy_stall(0.020);
  EXPECT_DOUBLE_EQ(r.copy_s, 0.021);
  EXPECT_DOUBLE_EQ(r.compute_s, 0.030);
  r.charge_copy_stall(1.0);
  EXPECT_DOUBLE_EQ(r.copy_s, 0.051);
  EXPECT_DOUBLE_EQ(r.compute_s, 0.0);
  Stepper::Result untimed;
  untimed.compute_s = 0.050;
  untimed.charge_copy_stall(-1.0);
  EXPECT_DOUBLE_EQ(untimed.compute_s, 0.050);
  EXPECT_DOUBLE_EQ(untimed.copy_s, 0.0);
}

// Whether this libtorch's CPU convolution gives the same in channels_last as contiguous for a
// strided 1x1 convolution to 512 channels (ResNet's layer4 downsample). Debian 13's torch 2.6
// does not (differences of about 1 on values of about 2); torch 1.13 and pip's builds do.
bool cpu_channels_last_convolution_is_right() {
  torch::manual_seed(0);
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(256, 512, 1).stride(2).bias(false));
  const torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::randn({2, 256, 4, 4});
  const torch::Tensor contiguous = conv->forward(x);
  conv->weight.set_data(conv->weight.contiguous(at::MemoryFormat::ChannelsLast));
  const torch::Tensor channels_last = conv->forward(x.contiguous(at::MemoryFormat::ChannelsLast));
  return (contiguous - channels_last).abs().max().item<double>() < 1e-4;
}

TEST(DeviceFeedTest, ChannelsLastKeepsValuesAndTheModelComputesTheSame) {
  if (!cpu_channels_last_convolution_is_right()) {
    GTEST_SKIP() << "this libtorch (" << TORCH_VERSION
                 << ") computes a strided 1x1 convolution to 512 channels differently in channels_last on the CPU; "
                    "stoker uses channels_last on CUDA only";
  }
  TempDir dir;
  const auto source = photo_folder(dir);
  const Objective objective = classification_objective(2);
  data::Loader loader(source, in_order("Resize(32), CenterCrop(32), Normalize"));
  loader.start_epoch(0);
  FeedOptions channels_last;
  channels_last.channels_last = true;
  DeviceFeed feed(loader, objective, channels_last);
  FedBatch batch = feed.next();
  ASSERT_TRUE(batch);
  EXPECT_TRUE(batch.images.is_contiguous(at::MemoryFormat::ChannelsLast));
  const torch::Tensor view =
      torch::from_blob(const_cast<void*>(batch.host.data()), batch.images.sizes(), torch::kFloat32);
  EXPECT_TRUE(torch::equal(batch.images, view));

  torch::manual_seed(3);
  auto model = make_model("resnet18", {3, 32, 32}, 2);
  model->eval();
  const torch::Tensor before = model->forward(view.contiguous());
  to_channels_last(*model);
  const auto conv1 = model->named_parameters()["conv1.weight"];
  EXPECT_TRUE(conv1.is_contiguous(at::MemoryFormat::ChannelsLast));
  const torch::Tensor after = model->forward(batch.images);
  EXPECT_LT((before - after).abs().max().item<double>(), 1e-4);
}

// The CUDA path as the trainer plans it: pinned uint8 batches, copied one batch ahead on the
// side stream, normalized on the GPU in channels_last, equal to the CPU feed's float batches
// within uint8 rounding. Three epochs over 3 batches with 2 buffers, so every buffer is
// refilled by the workers while a copy from it may still be in flight: a copy not ordered
// before the buffer's reuse shows up as a wrong batch.
TEST(DeviceFeedTest, CudaPinnedUint8BatchesCopiedAheadMatchTheCpuFeed) {
  STOKER_SKIP_WITHOUT_CUDA();
  TempDir dir;
  const auto source = photo_folder(dir);
  const Objective objective = classification_objective(2);
  data::LoaderOptions reference_options = in_order("Resize(16), CenterCrop(16), Normalize");
  reference_options.prefetch = 2;
  data::LoaderOptions cuda_options = reference_options;
  PinnedAllocator pinned;
  cuda_options.allocator = &pinned;
  const torch::Device cuda(torch::kCUDA, 0);
  const FeedOptions planned = plan_device_feed(cuda, /*conv_net=*/true, &cuda_options);
  ASSERT_TRUE(planned.normalize_mean.has_value());
  EXPECT_EQ(cuda_options.transform.dtype, data::DType::kUint8);
  EXPECT_TRUE(planned.channels_last);
  EXPECT_TRUE(planned.lookahead);

  data::Loader reference(source, reference_options);
  data::Loader loader(source, cuda_options);
  DeviceFeed expected(reference, objective, FeedOptions{});
  DeviceFeed fed(loader, objective, planned);
  const float worst_std = *std::min_element(reference_options.transform.normalize.std.begin(),
                                            reference_options.transform.normalize.std.end());
  int batches = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    expected.reset();
    fed.reset();
    reference.start_epoch(epoch);
    loader.start_epoch(epoch);
    for (;;) {
      FedBatch a = expected.next(), b = fed.next();
      ASSERT_EQ(static_cast<bool>(a), static_cast<bool>(b));
      if (!a) break;
      ++batches;
      SCOPED_TRACE("epoch " + std::to_string(epoch) + ", batch " + std::to_string(batches));
      ASSERT_TRUE(b.images.is_cuda());
      expect_fed_like(a, b, worst_std);
      EXPECT_TRUE(b.images.is_contiguous(at::MemoryFormat::ChannelsLast));
      EXPECT_TRUE(images_of(b.host).is_pinned()) << "batch " << batches << " is not in pinned memory";
      EXPECT_GE(fed.copy_stall_s(), 0.0);
    }
  }
  EXPECT_EQ(batches, 9);
}

}  // namespace
}  // namespace stoker::train
