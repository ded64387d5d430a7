// The decoded cache: later epochs come from RAM (no read, no decode) and are bit-identical to
// decoding afresh, for any worker count and whatever part of the dataset fits the budget.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/output_bytes_of_epoch.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::output_bytes_of_epoch;
using stoker::testing::TempDir;

constexpr int kImages = 24;

// JPEGs and PNGs of varied sizes in two classes.
std::shared_ptr<const Source> make_folder(const TempDir& dir) {
  for (int i = 0; i < kImages; ++i) {
    const Image image = stoker::testing::make_photo_like(60 + 7 * i, 48 + 5 * (i % 6), 3, static_cast<uint32_t>(i + 1));
    const std::string name = std::string(i % 2 ? "cats/" : "dogs/") + std::to_string(i);
    if (i % 3 == 0) {
      dir.write(name + ".png", encode_png(image));
    } else {
      dir.write(name + ".jpg", encode_jpeg(image));
    }
  }
  return open_source(dir.str(), "train");
}

LoaderOptions options(int workers, size_t cache_bytes) {
  LoaderOptions o;
  o.batch_size = 5;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = 9;
  o.transform = parse_transforms(
      "RandomResizedCrop(32), RandomHorizontalFlip(0.5), ColorJitter(0.3, 0.3, 0.3, 0.05), "
      "Normalize");
  o.cache_decoded_bytes = cache_bytes;
  o.run_ahead = false;  // the stage counts below are of one epoch's samples exactly
  return o;
}

// Sample `index` of `epoch` as the loader should make it from a whole, full-resolution decode:
// the same draws, the transform of that image. `params` gets the draws.
std::vector<uint8_t> from_whole_decode(const Source& source, const LoaderOptions& o, int64_t epoch, uint64_t index,
                                       SampleParams* params) {
  SampleData data;
  EXPECT_TRUE(source.read(index, &data).ok());
  DecodedImage decoded;
  EXPECT_TRUE(ImageDecoder().decode(data.bytes, DecodeRequest{}, &decoded).ok());
  const int w = decoded.image.width(), h = decoded.image.height();
  SampleRng rng(o.sampler.seed, static_cast<uint64_t>(epoch), index);
  *params = draw_params(o.transform, w, h, rng);
  std::vector<uint8_t> expected(o.transform.sample_bytes());
  SampleTransformer().run(expected.data(), decoded.image, resampled_region(*params, w, h), *params, o.transform);
  return expected;
}

TEST(DecodedCacheTest, LaterEpochsComeFromRamAndEqualAFreshDecode) {
  TempDir dir;
  const auto source = make_folder(dir);
  Loader cached(source, options(2, 64 << 20));
  const std::vector<uint8_t> first = output_bytes_of_epoch(cached, 0);
  const CacheStats stats = cached.cache_stats();
  EXPECT_EQ(stats.entries, static_cast<uint64_t>(kImages));
  EXPECT_FALSE(stats.full);
  EXPECT_GT(stats.bytes, 0u);
  EXPECT_EQ(cached.stage_times().cache_hits, 0u);
  const StageTimes before = cached.stage_times();
  const std::vector<uint8_t> second = output_bytes_of_epoch(cached, 1);
  const StageTimes during = cached.stage_times() - before;
  EXPECT_EQ(during.cache_hits, static_cast<uint64_t>(kImages));
  EXPECT_EQ(during.bytes_read, 0u);  // nothing read
  EXPECT_EQ(during.decode, 0.0);     // nothing decoded
  EXPECT_EQ(during.decoded_bytes, stats.bytes);

  // A fresh loader (its cache empty) decodes epoch 1: the same bytes as from the cache.
  Loader fresh(source, options(3, 64 << 20));
  EXPECT_EQ(output_bytes_of_epoch(fresh, 1), second);
  EXPECT_NE(first, second);  // epochs differ: the cache keeps images, not augmented samples
  // And one worker agrees too.
  Loader single(source, options(1, 64 << 20));
  EXPECT_EQ(output_bytes_of_epoch(single, 0), first);
}

TEST(DecodedCacheTest, ABudgetTooSmallForAllStillGivesTheSameBatches) {
  TempDir dir;
  const auto source = make_folder(dir);
  Loader all(source, options(2, 64 << 20));
  output_bytes_of_epoch(all, 0);
  const uint64_t everything = all.cache_stats().bytes;

  Loader part(source, options(2, everything / 3));
  const std::vector<uint8_t> first = output_bytes_of_epoch(part, 0);
  const CacheStats stats = part.cache_stats();
  EXPECT_TRUE(stats.full);
  EXPECT_GT(stats.entries, 0u);
  EXPECT_LT(stats.entries, static_cast<uint64_t>(kImages));
  EXPECT_LE(stats.bytes, everything / 3);
  const StageTimes before = part.stage_times();
  const std::vector<uint8_t> second = output_bytes_of_epoch(part, 1);
  EXPECT_EQ((part.stage_times() - before).cache_hits, stats.entries);
  EXPECT_EQ(output_bytes_of_epoch(all, 1), second);
}

TEST(DecodedCacheTest, EpochsRunAheadIntoComeFromTheCacheAlike) {
  TempDir dir;
  const auto source = make_folder(dir);
  LoaderOptions ahead = options(2, 64 << 20);
  ahead.run_ahead = true;
  Loader cached(source, ahead);
  Loader plain(source, options(3, 64 << 20));
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    EXPECT_EQ(output_bytes_of_epoch(cached, epoch), output_bytes_of_epoch(plain, epoch)) << "epoch " << epoch;
  }
  EXPECT_EQ(cached.cache_stats().entries, static_cast<uint64_t>(kImages));
  // Epoch 2 comes from the cache whole. Epoch 1 mostly: run-ahead may start it while a worker
  // still decodes the last of epoch 0, whose image is then decoded afresh, not yet cached.
  EXPECT_GE(cached.stage_times().cache_hits, static_cast<uint64_t>(kImages));
}

TEST(DecodedCacheTest, WithoutACacheNothingIsKept) {
  TempDir dir;
  const auto source = make_folder(dir);
  Loader loader(source, options(2, 0));
  output_bytes_of_epoch(loader, 0);
  const StageTimes times = loader.stage_times();
  EXPECT_EQ(loader.cache_stats().entries, 0u);
  EXPECT_EQ(times.cache_hits, 0u);
  EXPECT_GT(times.decoded_bytes, 0u);  // still measured: what a cache would take
}

// RandomCrop copies pixels of the whole image (its padding may mirror any of it): through the
// loader, decoded afresh or from the cache, each sample is the transform of the whole decode.
TEST(DecodedCacheTest, RandomCropSamplesAreCropsOfTheWholeImageFromDiskOrCache) {
  TempDir dir;
  const auto source = make_folder(dir);
  for (const size_t budget : {size_t{0}, size_t{64} << 20}) {
    LoaderOptions o = options(2, budget);
    o.transform = parse_transforms(
        "RandomCrop((64, 56), padding=(3, 5), pad_if_needed=True, padding_mode=reflect), RandomHorizontalFlip(), "
        "ToUint8");
    Loader loader(source, o);
    for (int64_t epoch = 0; epoch < 2; ++epoch) {  // with a budget, epoch 1 comes from the cache
      loader.start_epoch(epoch);
      int checked = 0;
      while (Batch batch = loader.next()) {
        for (int k = 0; k < batch.size(); ++k) {
          const uint64_t index = batch.indices()[k];
          SampleParams params;
          const std::vector<uint8_t> expected = from_whole_decode(*source, o, epoch, index, &params);
          const auto* got = static_cast<const uint8_t*>(batch.data()) + k * expected.size();
          ASSERT_EQ(std::vector<uint8_t>(got, got + expected.size()), expected)
              << "sample " << index << " epoch " << epoch << " cache " << budget;
          ++checked;
        }
      }
      EXPECT_EQ(checked, kImages);
    }
    EXPECT_EQ(loader.stage_times().cache_hits, budget > 0 ? static_cast<uint64_t>(kImages) : 0u);
  }
}

// A Resize before a RandomCrop: windows inside the resized image are boxes of the source
// (region decode, DCT scaling), windows in the padding resize a whole decode (DCT-scaled
// toward the resized size). With a cache (full-resolution whole images, decoded or kept) each
// sample is exactly the transform of the whole decode; without one it stays within the decode
// contract's bound (decode_resample_tolerance_test.cpp: mean <= 1, p99 <= 8), measured, as
// there, on photo-sized JPEGs: DCT scaling on images of a few dozen pixels departs further
// (Resize(24), CenterCrop(20) of the 60..221 x 48..73 images above: mean up to 2.6).
TEST(DecodedCacheTest, ResizeThenRandomCropIsTheWholeDecodesCropFromDiskOrCache) {
  TempDir dir;
  constexpr int kPhotoCount = 8;
  for (int i = 0; i < kPhotoCount; ++i) {
    const Image image =
        stoker::testing::make_photo_like(i % 2 ? 500 : 360, i % 2 ? 375 : 480, 3, static_cast<uint32_t>(31 + i));
    dir.write(std::string(i % 2 ? "cats/" : "dogs/") + std::to_string(i) + ".jpg", encode_jpeg(image));
  }
  const std::shared_ptr<const Source> source = open_source(dir.str(), "train");
  for (const char* chain : {"Resize(160), RandomCrop(128, padding=16, padding_mode=reflect), RandomHorizontalFlip(), "
                            "ToUint8",
                            "Resize((120, 160)), RandomCrop(112), ToUint8",
                            "Resize(150, interpolation=bicubic), RandomCrop(128, padding=8), ToUint8"}) {
    for (const size_t budget : {size_t{0}, size_t{64} << 20}) {
      SCOPED_TRACE(std::string(chain) + (budget > 0 ? ", cached" : ", no cache"));
      LoaderOptions o = options(2, budget);
      o.transform = parse_transforms(chain);
      Loader loader(source, o);
      int boxes = 0, padded = 0;
      for (int64_t epoch = 0; epoch < 2; ++epoch) {  // with a budget, epoch 1 comes from the cache
        loader.start_epoch(epoch);
        while (Batch batch = loader.next()) {
          for (int k = 0; k < batch.size(); ++k) {
            const uint64_t index = batch.indices()[k];
            SampleParams params;
            const std::vector<uint8_t> expected = from_whole_decode(*source, o, epoch, index, &params);
            (params.copy ? padded : boxes) += 1;
            const auto* got = static_cast<const uint8_t*>(batch.data()) + k * expected.size();
            if (budget > 0) {
              ASSERT_EQ(std::vector<uint8_t>(got, got + expected.size()), expected) << "sample " << index;
              continue;
            }
            const std::vector<float> a(expected.begin(), expected.end());
            const std::vector<float> b(got, got + expected.size());
            const stoker::testing::DiffStats d = stoker::testing::diff_stats(a, b);
            EXPECT_LE(d.mean, 1.0) << "sample " << index << (params.copy ? " (padded window)" : " (box)") << ": "
                                   << d.str();
            EXPECT_LE(d.p99, 8.0) << "sample " << index << ": " << d.str();
          }
        }
      }
      EXPECT_EQ(loader.stage_times().cache_hits, budget > 0 ? static_cast<uint64_t>(kPhotoCount) : 0u);
      if (o.transform.pad.left > 0) {  // both ways of making the sample were taken
        EXPECT_GT(boxes, 0);
        EXPECT_GT(padded, 0);
      } else {
        EXPECT_EQ(padded, 0);
      }
    }
  }
}

}  // namespace
}  // namespace stoker::data
