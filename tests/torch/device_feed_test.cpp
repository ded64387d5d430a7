// The device feed's arithmetic, checked on the CPU: uint8 batches normalized by the feed
// equal the workers' float normalization within uint8 rounding, channels_last keeps every
// value, and a channels_last model computes what the contiguous one does. (The CUDA side
// stream and pinned buffers need a GPU; the same code runs there.)
#include "train/torch/device_feed.h"

#include <gtest/gtest.h>

#include "stoker/data/encode.h"
#include "stoker/data/source.h"
#include "support/temp_dir.h"
#include "support/test_images.h"
#include "train/torch/models.h"
#include "train/torch/objective.h"
#include "train/torch/step.h"

namespace stoker::train {
namespace {

using stoker::testing::TempDir;

std::shared_ptr<const data::Source> photo_folder(const TempDir& dir) {
  for (int i = 0; i < 24; ++i) {
    const data::Image image =
        stoker::testing::make_photo_like(40 + i, 32 + i % 5, 3, static_cast<uint32_t>(i + 1));
    dir.write((i % 2 ? "a/" : "b/") + std::to_string(i) + ".png", data::encode_png(image));
  }
  return data::open_source(dir.str(), "train");
}

data::LoaderOptions options_for(const std::string& chain) {
  data::LoaderOptions o;
  o.batch_size = 8;
  o.workers = 2;
  o.sampler.shuffle = false;
  o.transform = data::parse_transforms(chain);
  return o;
}

TEST(DeviceFeedTest, Uint8BatchesNormalizedByTheFeedMatchTheWorkers) {
  TempDir dir;
  const auto source = photo_folder(dir);
  const Objective objective = classification_objective(2);

  data::LoaderOptions reference_options = options_for("Resize(16), CenterCrop(16), Normalize");
  data::Loader reference(source, reference_options);
  data::LoaderOptions planned = reference_options;
  // plan_device_feed() moves Normalize to the feed only on CUDA; the same split by hand here.
  FeedOptions feed_options;
  feed_options.normalize_mean = planned.transform.mean;
  feed_options.normalize_std = planned.transform.std;
  planned.transform.normalize = false;
  planned.transform.dtype = data::DType::kUint8;
  EXPECT_EQ(plan_device_feed(torch::kCPU, true, &reference_options).normalize_mean, std::nullopt);
  data::Loader uint8_loader(source, planned);

  reference.start_epoch(0);
  uint8_loader.start_epoch(0);
  DeviceFeed expected(reference, objective, FeedOptions{});
  DeviceFeed fed(uint8_loader, objective, feed_options);
  const float worst_std =
      *std::min_element(planned.transform.std.begin(), planned.transform.std.end());
  int batches = 0;
  for (;;) {
    FedBatch a = expected.next(), b = fed.next();
    ASSERT_EQ(static_cast<bool>(a), static_cast<bool>(b));
    if (!a) break;
    ++batches;
    ASSERT_EQ(b.images.scalar_type(), torch::kFloat32);
    ASSERT_EQ(a.images.sizes(), b.images.sizes());
    EXPECT_TRUE(torch::equal(a.targets, b.targets));
    // Rounding to uint8 moves a value by at most half a level: 0.5 / 255 / std.
    EXPECT_LE((a.images - b.images).abs().max().item<double>(), 0.5 / 255 / worst_std + 1e-4);
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

TEST(DeviceFeedTest, ChannelsLastKeepsValuesAndTheModelComputesTheSame) {
  TempDir dir;
  const auto source = photo_folder(dir);
  const Objective objective = classification_objective(2);
  data::Loader loader(source, options_for("Resize(32), CenterCrop(32), Normalize"));
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

}  // namespace
}  // namespace stoker::train
