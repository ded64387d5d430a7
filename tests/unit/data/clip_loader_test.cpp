// The Loader on clips of JPEG frames: (N, K, C, H, W) batches, one set of draws per clip
// applied to every frame, the frames chosen, determinism, bad frames and refusals.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "support/error_text.h"
#include "support/output_bytes_of_epoch.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::output_bytes_of_epoch;
using stoker::testing::TempDir;
using stoker::testing::usage_error_text;

constexpr const char* kRandomChain =
    "RandomResizedCrop(16, scale=(0.2, 1.0)), RandomHorizontalFlip(0.5), ColorJitter(0.4, 0.4, 0.4, 0.1), "
    "Normalize, RandomErasing(p=0.5)";

// A photo-like JPEG of w x h whose content depends on `seed`.
void write_frame(const TempDir& dir, const std::string& relative, uint32_t seed, int w = 40, int h = 32) {
  dir.write(relative, encode_jpeg(stoker::testing::make_photo_like(w, h, 3, seed)));
}

// root/c<i % 2>/clip<i>/f<k>.jpg: `clips` clips of `frames` distinct frames.
std::string clip_folder(const TempDir& dir, int clips, int frames) {
  for (int i = 0; i < clips; ++i) {
    for (int k = 0; k < frames; ++k) {
      write_frame(dir,
                  "data/c" + std::to_string(i % 2) + "/clip" + std::to_string(i) + "/f" + std::to_string(k) + ".jpg",
                  static_cast<uint32_t>(100 * i + k));
    }
  }
  return (dir.path() / "data").string();
}

LoaderOptions clip_options(int frames, int step, bool random_start, int workers = 2) {
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = workers;
  options.prefetch = 2;
  options.sampler.seed = 11;
  options.transform = parse_transforms(kRandomChain);
  options.clip.frames = frames;
  options.clip.step = step;
  options.clip.random_start = random_start;
  return options;
}

TEST(ClipLoaderTest, BatchesAreSamplesOfKFrames) {
  TempDir dir;
  const auto source = std::shared_ptr<const Source>(open_clip_source(clip_folder(dir, 5, 6)));
  LoaderOptions options = clip_options(3, 2, true);
  Loader loader(source, options);
  loader.start_epoch(0);
  Batch batch = loader.next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch.frames(), 3);
  EXPECT_EQ(batch.shape(), (std::vector<int64_t>{4, 3, 3, 16, 16}));
  EXPECT_EQ(batch.bytes(), size_t{4} * 3 * 3 * 16 * 16 * sizeof(float));
  for (int s = 0; s < batch.size(); ++s) {
    const SampleRecord& record = batch.record(s);
    EXPECT_EQ(record.clip_frames, 6);
    EXPECT_GE(record.clip_start, 0);
    EXPECT_LE(record.clip_start, 1) << "span 5 of 6 frames";
    EXPECT_EQ(record.source_width, 40);
  }
  batch.release();

  options.transform.layout = Layout::kNHWC;
  Loader nhwc(source, options);
  nhwc.start_epoch(0);
  EXPECT_EQ(nhwc.next().shape(), (std::vector<int64_t>{4, 3, 16, 16, 3}));
}

// The same frame K times under a random chain: K identical outputs, whatever was drawn.
TEST(ClipLoaderTest, IdenticalFramesGiveIdenticalOutputs) {
  TempDir dir;
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < 6; ++k)
      write_frame(dir, "data/c/clip" + std::to_string(i) + "/" + std::to_string(k) + ".jpg", 7 + i);
  }
  Loader loader(open_clip_source((dir.path() / "data").string()), clip_options(4, 1, true));
  const size_t frame_bytes = loader.options().transform.sample_bytes();
  loader.start_epoch(0);
  int erased = 0, flipped = 0;
  while (Batch batch = loader.next()) {
    for (int s = 0; s < batch.size(); ++s) {
      const auto* sample = static_cast<const uint8_t*>(batch.data()) + static_cast<size_t>(s) * 4 * frame_bytes;
      for (int k = 1; k < 4; ++k) {
        EXPECT_EQ(std::memcmp(sample, sample + static_cast<size_t>(k) * frame_bytes, frame_bytes), 0)
            << "clip " << batch.indices()[s] << ", frame " << k;
      }
      erased += batch.record(s).params.erase;
      flipped += batch.record(s).params.flip;
    }
  }
  EXPECT_GT(erased + flipped, 0) << "the chain drew something to share";
}

// Distinct frames: frame k of a clip is what that frame alone gives with the clip's draws. In
// evaluation (the centre, no draw for the start) an image loader whose sample i is frame k of
// clip i draws from the same stream, so its output must be the clip's frame k, byte for byte.
TEST(ClipLoaderTest, EachFrameIsItsImageUnderTheClipsDraws) {
  TempDir dir;
  const int clips = 6;
  const std::string root = clip_folder(dir, clips, 7);
  LoaderOptions options = clip_options(3, 2, false);  // span 5 of 7: the centre starts at 1
  options.sampler.shuffle = false;
  options.batch_size = clips;
  Loader loader(open_clip_source(root), options);
  loader.start_epoch(2);
  Batch batch = loader.next();
  ASSERT_TRUE(batch);
  const size_t frame_bytes = loader.options().transform.sample_bytes();
  std::vector<std::string> clip_of_index(clips);
  for (int s = 0; s < clips; ++s) {
    EXPECT_EQ(batch.record(s).clip_start, 1);
    clip_of_index[batch.indices()[s]] = loader.source().name(batch.indices()[s]);
  }
  for (int k = 0; k < 3; ++k) {
    std::string csv;
    for (int i = 0; i < clips; ++i) csv += clip_of_index[i] + "/f" + std::to_string(1 + 2 * k) + ".jpg,0\n";
    dir.write_text("frame" + std::to_string(k) + ".csv", csv);
    LoaderOptions image_options = options;
    image_options.clip = {};
    Loader images(open_source((dir.path() / ("frame" + std::to_string(k) + ".csv")).string()), image_options);
    images.start_epoch(2);
    const Batch alone = images.next();
    ASSERT_TRUE(alone);
    for (int s = 0; s < clips; ++s) {
      const auto* clip_frame =
          static_cast<const uint8_t*>(batch.data()) + (static_cast<size_t>(s) * 3 + k) * frame_bytes;
      const auto* image = static_cast<const uint8_t*>(alone.data()) + static_cast<size_t>(s) * frame_bytes;
      EXPECT_EQ(std::memcmp(clip_frame, image, frame_bytes), 0) << "clip " << s << ", frame " << k;
      EXPECT_EQ(alone.record(s).params.flip, batch.record(s).params.flip);
    }
  }
}

TEST(ClipLoaderTest, BitIdenticalForOneAndThreeWorkers) {
  TempDir dir;
  const auto source = std::shared_ptr<const Source>(open_clip_source(clip_folder(dir, 10, 5)));
  Loader one(source, clip_options(3, 1, true, 1));
  const auto epoch0 = output_bytes_of_epoch(one, 0);
  const auto epoch1 = output_bytes_of_epoch(one, 1);
  EXPECT_NE(epoch0, epoch1);
  Loader three(source, clip_options(3, 1, true, 3));
  EXPECT_EQ(output_bytes_of_epoch(three, 0), epoch0);
  EXPECT_EQ(output_bytes_of_epoch(three, 1), epoch1);
}

TEST(ClipLoaderTest, AShortClipRepeatsItsLastFrame) {
  TempDir dir;
  write_frame(dir, "data/c/short/a.jpg", 1);
  write_frame(dir, "data/c/short/b.jpg", 2);
  LoaderOptions options = clip_options(4, 1, true);
  options.batch_size = 1;
  Loader loader(open_clip_source((dir.path() / "data").string()), options);
  const size_t frame_bytes = loader.options().transform.sample_bytes();
  loader.start_epoch(0);
  const Batch batch = loader.next();
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch.record(0).clip_frames, 2);
  const auto* p = static_cast<const uint8_t*>(batch.data());
  EXPECT_NE(std::memcmp(p, p + frame_bytes, frame_bytes), 0) << "frames a and b differ";
  EXPECT_EQ(std::memcmp(p + frame_bytes, p + 2 * frame_bytes, frame_bytes), 0);
  EXPECT_EQ(std::memcmp(p + frame_bytes, p + 3 * frame_bytes, frame_bytes), 0);
}

TEST(ClipLoaderTest, FramesOfEachTheirSizeTakeTheClipsDrawsInTheirOwnSizes) {
  // Face crops saved one per frame by a detector differ in size; each frame's crop is its own.
  TempDir dir;
  write_frame(dir, "data/c/good/a.jpg", 1);
  write_frame(dir, "data/c/good/b.jpg", 2);
  write_frame(dir, "data/c/mixed/a.jpg", 3);
  write_frame(dir, "data/c/mixed/b.jpg", 4, 36, 30);
  LoaderOptions options = clip_options(2, 1, false);
  options.transform = parse_transforms("Resize(16), CenterCrop(16)");
  options.sampler.shuffle = false;
  options.batch_size = 2;
  options.max_bad_fraction = 1;
  Loader loader(open_clip_source((dir.path() / "data").string()), options);
  loader.start_epoch(0);
  const Batch batch = loader.next();
  ASSERT_TRUE(batch);
  EXPECT_TRUE(loader.epoch_stats().bad_samples.empty());
  const SampleRecord& mixed = batch.record(1);
  ASSERT_EQ(mixed.frame_sizes.size(), 2u);
  EXPECT_EQ(mixed.frame_sizes[0], (std::array<int, 2>{40, 32}));
  EXPECT_EQ(mixed.frame_sizes[1], (std::array<int, 2>{36, 30}));
  // Each frame's shorter side resized to 16 (40x32 to 20x16, 36x30 to 19x16), its centre 16x16:
  // all its rows, and as many columns (up to the resize's rounding).
  ASSERT_EQ(mixed.frame_boxes.size(), 2u);
  EXPECT_DOUBLE_EQ(mixed.frame_boxes[0].height, 32.0);
  EXPECT_DOUBLE_EQ(mixed.frame_boxes[1].height, 30.0);
  EXPECT_DOUBLE_EQ(mixed.frame_boxes[0].width, 32.0);
  EXPECT_NEAR(mixed.frame_boxes[1].width, 30.0, 0.5);
}

TEST(ClipLoaderTest, AFrameThatCannotBeReadNamesItself) {
  TempDir dir;
  write_frame(dir, "data/c/good/a.jpg", 1);
  write_frame(dir, "data/c/good/b.jpg", 2);
  write_frame(dir, "data/c/mixed/a.jpg", 3);
  LoaderOptions options = clip_options(2, 1, false);
  options.sampler.shuffle = false;
  options.batch_size = 2;
  options.max_bad_fraction = 1;
  dir.write("data/c/mixed/b.jpg", {0xFF, 0xD8, 0xFF});
  options.on_error = OnError::kFail;
  Loader failing(open_clip_source((dir.path() / "data").string()), options);
  failing.start_epoch(0);
  try {
    failing.next();
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("frame " + (dir.path() / "data/c/mixed/b.jpg").string() + ": "),
              std::string::npos)
        << e.what();
  }
}

TEST(ClipLoaderTest, ClipsAndImagesAreNotMixedUp) {
  TempDir dir;
  const std::string root = clip_folder(dir, 2, 3);
  const std::shared_ptr<const Source> images = open_source(root);
  const std::shared_ptr<const Source> clips = open_clip_source(root);
  EXPECT_NE(usage_error_text([&] {
              Loader loader(images, clip_options(3, 1, true));
            }).find("frames_per_clip=3 reads clips, and image folder"),
            std::string::npos);
  LoaderOptions plain = clip_options(0, 1, true);
  EXPECT_NE(usage_error_text([&] { Loader loader(clips, plain); }).find("holds clips (samples of several frames)"),
            std::string::npos);
  plain.transform = parse_transforms("BoxCrop(margin=0.2), Resize((8, 8))");  // refused first for clips, not boxes
  EXPECT_NE(usage_error_text([&] { Loader loader(clips, plain); }).find("holds clips (samples of several frames)"),
            std::string::npos);
  LoaderOptions cached = clip_options(3, 1, true);
  cached.cache_decoded_bytes = 1 << 20;
  EXPECT_NE(usage_error_text([&] { Loader loader(clips, cached); }).find("leave cache_decoded_bytes 0"),
            std::string::npos);
  EXPECT_NE(usage_error_text([&] { Loader loader(clips, clip_options(3, 0, true)); }).find("frame_step must be"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::data
