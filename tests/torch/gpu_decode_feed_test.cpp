// stoker train's GPU JPEG decoding (--decode gpu/auto), run on the CPU: nvJPEG is
// tests/fake_nvjpeg, a libnvjpeg that decodes into host memory, and the device is the CPU, so
// the whole flow - handoff, decode into arenas, CPU fallbacks, resample, normalize - runs here.
// Fed batches equal a CPU-decoding loader's to the bit. What needs a GPU (nvJPEG's own pixels,
// the decode stream, the step of overlap) is on docs/TESTING.md's pending list.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"
#include "support/test_images.h"
#include "train/torch/step/device_feed.h"
#include "train/torch/step/gpu_decode_stage.h"

namespace stoker::train {
namespace gpu_decode_feed_test {

using stoker::testing::TempDir;

void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Baseline JPEGs of several sizes, a progressive one (nvJPEG's CUDA path), a PNG (the CPU's)
// and a JPEG cut short (the planner sends it to the CPU, which reports and substitutes it).
std::shared_ptr<const data::Source> jpeg_folder(const TempDir& dir) {
  for (int i = 0; i < 17; ++i) {
    const data::Image image = stoker::testing::make_photo_like(90 + 7 * i, 70 + 5 * i, 3, static_cast<uint32_t>(i + 1));
    write_file(dir.path() / (i % 2 == 0 ? "a" : "b") / ("img" + std::to_string(i) + ".jpg"),
               data::encode_jpeg(image, {.quality = 90}));
  }
  const data::Image image = stoker::testing::make_photo_like(120, 100, 3, 99);
  write_file(dir.path() / "a" / "prog.jpg", data::encode_jpeg(image, {.quality = 90, .progressive = true}));
  write_file(dir.path() / "b" / "pic.png", data::encode_png(image));
  std::vector<uint8_t> cut = data::encode_jpeg(image, {.quality = 90});
  cut.resize(cut.size() * 2 / 3);
  write_file(dir.path() / "b" / "cut.jpg", cut);
  return data::open_source(dir.str(), "train");
}

// The training loader's options as stoker train makes them for a CUDA device (Normalize moved
// to the feed, so the workers write uint8), and the feed's.
data::LoaderOptions training_options(FeedOptions* feed, const std::string& chain) {
  data::LoaderOptions o;
  o.batch_size = 4;
  o.workers = 2;
  o.sampler.seed = 11;
  o.max_bad_fraction = 0.5;  // the cut file
  o.run_ahead = false;
  o.transform = data::parse_transforms(chain);
  move_normalize_to_feed(&o.transform, feed);
  return o;
}

constexpr const char* kChain =
    "RandomResizedCrop(40, scale=(0.2, 1.0)), RandomHorizontalFlip, RandomVerticalFlip(0.3), Normalize";

// jpeg_folder's files and the training loader's options for kChain.
struct JpegData {
  TempDir dir;
  std::shared_ptr<const data::Source> source = jpeg_folder(dir);
  FeedOptions feed;
  data::LoaderOptions options = training_options(&feed, kChain);
};

// Feeds the epoch both feeds' loaders were started on, expecting equal batches; how many.
int expect_equal_epoch(DeviceFeed& want_feed, DeviceFeed& got_feed, int64_t epoch) {
  int batches = 0;
  for (;; ++batches) {
    FedBatch want = want_feed.next(), got = got_feed.next();
    EXPECT_EQ(static_cast<bool>(want), static_cast<bool>(got));
    if (!want || !got) return batches;
    EXPECT_TRUE(torch::equal(want.images, got.images)) << "epoch " << epoch << " batch " << batches;
    EXPECT_TRUE(torch::equal(want.targets, got.targets));
  }
}

// nvJPEG is the fake, with the failures `fail` names injected (FAKE_NVJPEG_FAIL), for the test's life.
class FakeNvjpeg {
 public:
  explicit FakeNvjpeg(const char* fail = nullptr) {
    ::setenv("STOKER_NVJPEG", (stoker::testing::fake_nvjpeg_dir() + "/libnvjpeg.so.12").c_str(), 1);
    if (fail != nullptr) ::setenv("FAKE_NVJPEG_FAIL", fail, 1);
  }
  ~FakeNvjpeg() {
    ::unsetenv("STOKER_NVJPEG");
    ::unsetenv("FAKE_NVJPEG_FAIL");
  }
};

// The stage's waits in the order they came, with the decodes (a call of stream()).
class LoggingSync final : public DecodeSync {
 public:
  std::vector<std::string> log;
  void* stream() override {
    log.push_back("decode");
    return nullptr;
  }
  void wait_decoded() override { log.push_back("wait_decoded"); }
  void mark_consumed(int arena) override { log.push_back("mark_consumed " + std::to_string(arena)); }
  void wait_consumed(int arena) override { log.push_back("wait_consumed " + std::to_string(arena)); }
  void wait_current() override { log.push_back("wait_current"); }
};

std::unique_ptr<data::GpuDecoder> fake_decoder() {
  std::string why_not;
  auto decoder = data::GpuDecoder::open({}, {}, &why_not);
  EXPECT_NE(decoder, nullptr) << why_not;
  return decoder;
}

class GpuDecodeFeedTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuDecodeFeedTest, FedBatchesEqualACpuDecodingLoadersToTheBit) {
  const FakeNvjpeg nvjpeg(GetParam());
  JpegData d;
  const GpuDecodePlan plan = plan_gpu_decode(data::DecodeMode::kGpu, torch::kCPU, d.options, *d.source);
  ASSERT_NE(plan.stage, nullptr);
  EXPECT_EQ(plan.handoff, data::GpuHandoff::kAll);  // the fake has an engine
  data::Loader cpu(d.source, d.options);
  d.options.gpu_handoff = plan.handoff;
  data::Loader gpu(d.source, d.options);
  FeedOptions gpu_feed = d.feed;
  gpu_feed.gpu_decode = plan.stage;
  const Objective objective = classification_objective(2);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    cpu.start_epoch(epoch);
    gpu.start_epoch(epoch);
    DeviceFeed want_feed(cpu, objective, d.feed), got_feed(gpu, objective, gpu_feed);
    EXPECT_EQ(expect_equal_epoch(want_feed, got_feed, epoch), 5);
  }
  // Every JPEG the workers left (the progressive one and the cut file's substitute included;
  // not the PNG nor the cut file) was decoded on the GPU or given back.
  EXPECT_GE(gpu.stage_times().gpu_samples, 2u * 18);
  EXPECT_EQ(plan.stage->decoded() + plan.stage->fallbacks(), gpu.stage_times().gpu_samples);
  // A failed batch is retried file by file on the engine; a file nvJPEG cannot parse or decode
  // goes back to the CPU.
  const std::string fail = GetParam() == nullptr ? "" : GetParam();
  if (fail.empty() || fail == "batched") {
    EXPECT_EQ(plan.stage->fallbacks(), 0u);
  } else {
    EXPECT_GE(plan.stage->fallbacks(), 1u);
  }
}

// Without failures; the engine failing whole batches (each file retried alone); a file nvJPEG
// cannot parse (made on the CPU); every decode failing (all made on the CPU).
INSTANTIATE_TEST_SUITE_P(Failures, GpuDecodeFeedTest,
                         ::testing::Values(nullptr, "batched", "parse:2", "batched_all,decode_jpeg"));

TEST(GpuDecodeStageTest, AnArenaIsDecodedIntoOnlyOnceItsReadersAreDoneAndReadOnlyOnceItsDecodeIs) {
  const FakeNvjpeg nvjpeg;
  JpegData d;
  d.options.gpu_handoff = data::GpuHandoff::kAll;
  data::Loader loader(d.source, d.options);
  auto sync = std::make_unique<LoggingSync>();
  const LoggingSync& log = *sync;
  d.feed.gpu_decode = std::make_shared<GpuDecodeStage>(torch::kCPU, fake_decoder(), std::move(sync));
  loader.start_epoch(0);
  DeviceFeed feed(loader, classification_objective(2), d.feed);
  while (feed.next()) {
  }
  // Per batch with GPU samples: its arena's wait, the decode, ... then the wait for the decode
  // before the resample marks the arena's readers; arenas in turn. A newly allocated arena
  // (each one first, then when a batch outgrows it) also waits for the current stream.
  std::vector<std::string> want, got;
  for (int batch = 0; batch < 5; ++batch) {
    const std::string arena = std::to_string(batch % GpuDecodeStage::kArenas);
    want.insert(want.end(), {"wait_consumed " + arena, "decode", "wait_decoded", "mark_consumed " + arena});
  }
  int allocations = 0;
  for (size_t i = 0; i < log.log.size(); ++i) {
    if (log.log[i] != "wait_current") {
      got.push_back(log.log[i]);
      continue;
    }
    ++allocations;
    ASSERT_LT(i + 1, log.log.size());
    EXPECT_EQ(log.log[i + 1], "decode");
  }
  EXPECT_EQ(got, want);
  EXPECT_GE(allocations, GpuDecodeStage::kArenas);
}

// JPEG engines slower than the step: the host's wait for the decode takes `wait`.
class SlowEnginesSync final : public DecodeSync {
 public:
  explicit SlowEnginesSync(std::chrono::milliseconds wait) : wait_(wait) {}
  void* stream() override { return nullptr; }
  void wait_decoded() override { std::this_thread::sleep_for(wait_); }
  void mark_consumed(int) override {}
  void wait_consumed(int) override {}
  void wait_current() override {}

 private:
  std::chrono::milliseconds wait_;
};

TEST(GpuDecodeStageTest, UnderAutoSlowEnginesLowerTheShareAndTheFedBatchesStayACpuDecodingLoaders) {
  const FakeNvjpeg nvjpeg;
  JpegData d;
  data::Loader cpu(d.source, d.options);
  d.options.gpu_handoff = data::GpuHandoff::kHardware;  // --decode auto
  data::Loader gpu(d.source, d.options);
  FeedOptions gpu_feed_options = d.feed;
  gpu_feed_options.gpu_decode = std::make_shared<GpuDecodeStage>(
      torch::kCPU, fake_decoder(), std::make_unique<SlowEnginesSync>(std::chrono::milliseconds(5)));
  const Objective objective = classification_objective(2);
  DeviceFeed want_feed(cpu, objective, d.feed), got_feed(gpu, objective, gpu_feed_options);
  // The first batch of each pass feeds nothing (its time since the last pass is no batch's):
  // 4 of 5 batches an epoch, 4 windows in 16 epochs.
  const int epochs = data::GpuShareTuner::kWindow;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    want_feed.reset();
    got_feed.reset();
    cpu.start_epoch(epoch);
    gpu.start_epoch(epoch);
    expect_equal_epoch(want_feed, got_feed, epoch);
  }
  // A step down every window: 0.8 after 4.
  EXPECT_NEAR(gpu.gpu_share(), 1.0 - 4 * data::GpuShareTuner::kStep, 1e-9);
  EXPECT_GE(gpu_feed_options.gpu_decode->decode_wait_s(), 0.005);
  // Fewer left than the 17 baseline files an epoch (the cut file's substitute aside), each
  // decoded on the GPU.
  EXPECT_LT(gpu.stage_times().gpu_samples, 17u * epochs);
  EXPECT_EQ(gpu_feed_options.gpu_decode->decoded(), gpu.stage_times().gpu_samples);
}

TEST(GpuDecodeStageTest, PixelsThatDifferFromTheCpuDecodersStopTheRunInOneLine) {
  const FakeNvjpeg nvjpeg;
  JpegData d;
  d.options.gpu_handoff = data::GpuHandoff::kAll;
  data::Loader loader(d.source, d.options);
  GpuDecodeStage stage(torch::kCPU, fake_decoder(), make_decode_sync(torch::kCPU, nullptr));
  loader.start_epoch(0);
  data::Batch batch = loader.next();
  std::optional<GpuDecodeStage::Pending> pending = stage.start(loader, batch);
  ASSERT_TRUE(pending.has_value());
  ASSERT_GE(pending->check, 0);                                   // the epoch's first batch is checked
  for (torch::Tensor& window : pending->windows) window.zero_();  // an engine that wrote nothing
  stage.upload(*pending);
  torch::Tensor images = images_of(batch).clone();
  try {
    stage.finish(*pending, images, batch);
    FAIL() << "dark windows passed the check";
  } catch (const SystemError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("--decode gpu: nvJPEG's pixels differ from the CPU decoder's by ")) << message;
    EXPECT_TRUE(message.ends_with("use --decode cpu")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
}

TEST(GpuDecodeStageTest, WhatCannotDecodeOnTheGpuIsRefusedForGpuAndNotedForAuto) {
  TempDir dir;
  const auto source = jpeg_folder(dir);
  FeedOptions feed_options;
  const data::LoaderOptions jitter =
      training_options(&feed_options, "RandomResizedCrop(40), ColorJitter(brightness=0.4), Normalize");
  try {
    plan_gpu_decode(data::DecodeMode::kGpu, torch::kCPU, jitter, *source);
    FAIL() << "a chain the GPU cannot finish was taken";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--decode gpu: the chain's ColorJitter(brightness=0.4) runs on the CPU only; use --decode cpu");
  }
  const GpuDecodePlan automatic = plan_gpu_decode(data::DecodeMode::kAuto, torch::kCPU, jitter, *source);
  EXPECT_EQ(automatic.stage, nullptr);
  EXPECT_EQ(automatic.handoff, data::GpuHandoff::kOff);
  EXPECT_EQ(automatic.note,
            "--decode auto: decoding on the CPU: the chain's ColorJitter(brightness=0.4) runs on the "
            "CPU only");

  ::setenv("STOKER_NVJPEG", "/nonexistent/libnvjpeg.so.12", 1);
  FeedOptions plain_feed;
  const data::LoaderOptions plain = training_options(&plain_feed, kChain);
  try {
    plan_gpu_decode(data::DecodeMode::kGpu, torch::kCPU, plain, *source);
    ADD_FAILURE() << "a missing nvJPEG was taken";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("--decode gpu: nvJPEG ")) << message;
    EXPECT_TRUE(message.ends_with("; use --decode cpu")) << message;
  }
  EXPECT_TRUE(plan_gpu_decode(data::DecodeMode::kAuto, torch::kCPU, plain, *source)
                  .note.starts_with("--decode auto: decoding on the CPU: nvJPEG "));
  ::unsetenv("STOKER_NVJPEG");
}

}  // namespace gpu_decode_feed_test
}  // namespace stoker::train
