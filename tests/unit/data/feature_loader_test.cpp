// The loader on feature vectors: Standardize fit on the source (or given), float32/float16
// output, determinism across worker counts, and the transforms feature vectors refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "data/transform/half.h"
#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::TempDir;

// 10 samples, 3 features: (i, 10 + 2i, 5) — the last one constant; class i % 2.
std::shared_ptr<const Source> table(const TempDir& dir) {
  std::string text = "a,b,c,label\n";
  for (int i = 0; i < 10; ++i)
    text += std::to_string(i) + "," + std::to_string(10 + 2 * i) + ",5," + std::to_string(i % 2) + "\n";
  return open_source(dir.write_text("t.csv", text));
}

LoaderOptions options_for(const std::string& transforms, int workers = 2, bool shuffle = false) {
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = workers;
  options.transform = parse_transforms(transforms);
  options.sampler.shuffle = shuffle;
  options.sampler.seed = 7;
  return options;
}

// Every batch of epoch 0, concatenated, as floats; with their dataset indices.
std::vector<float> epoch_values(Loader& loader, std::vector<uint64_t>* indices = nullptr) {
  std::vector<float> values;
  loader.start_epoch(0);
  while (Batch batch = loader.next()) {
    EXPECT_EQ(batch.shape()[1], 1);
    EXPECT_EQ(batch.shape()[2], 1);
    EXPECT_EQ(batch.shape()[3], 3);
    const auto* p = static_cast<const float*>(batch.data());
    values.insert(values.end(), p, p + batch.size() * 3);
    if (indices != nullptr) indices->insert(indices->end(), batch.indices(), batch.indices() + batch.size());
  }
  return values;
}

TEST(FeatureLoader, StandardizeFitsMeanAndPopulationStdOnTheSource) {
  TempDir dir;
  Loader loader(table(dir), options_for("Standardize"));
  const TransformSpec& spec = loader.options().transform;
  EXPECT_EQ(spec.features.length, 3);
  // a = 0..9: mean 4.5, population std sqrt(8.25); b = 10 + 2a; c constant: std 1.
  ASSERT_EQ(spec.features.mean.size(), 3u);
  EXPECT_FLOAT_EQ(spec.features.mean[0], 4.5f);
  EXPECT_FLOAT_EQ(spec.features.mean[1], 19.0f);
  EXPECT_FLOAT_EQ(spec.features.mean[2], 5.0f);
  EXPECT_FLOAT_EQ(spec.features.std[0], std::sqrt(8.25f));
  EXPECT_FLOAT_EQ(spec.features.std[1], 2 * std::sqrt(8.25f));
  EXPECT_FLOAT_EQ(spec.features.std[2], 1.0f);
  const std::vector<float> values = epoch_values(loader);
  ASSERT_EQ(values.size(), 30u);
  for (int i = 0; i < 10; ++i) {
    const float z = (static_cast<float>(i) - 4.5f) / std::sqrt(8.25f);
    EXPECT_NEAR(values[3 * i], z, 1e-6) << i;
    EXPECT_NEAR(values[3 * i + 1], z, 1e-6) << i;
    EXPECT_EQ(values[3 * i + 2], 0.0f) << i;
  }
  EXPECT_EQ(spec.describe(), "none · Standardize → float32 NCHW");
}

TEST(FeatureLoader, GivenStatisticsAreUsedAsTheyAre) {
  TempDir dir;
  LoaderOptions options = options_for("Standardize");
  options.transform.features.mean = {1, 2, 3};
  options.transform.features.std = {2, 4, 0.5};
  Loader loader(table(dir), options);
  const std::vector<float> values = epoch_values(loader);
  EXPECT_FLOAT_EQ(values[3 * 9], (9 - 1) / 2.0f);
  EXPECT_FLOAT_EQ(values[3 * 9 + 1], (28 - 2) / 4.0f);
  EXPECT_FLOAT_EQ(values[3 * 9 + 2], (5 - 3) / 0.5f);
}

TEST(FeatureLoader, NoneCopiesTheValuesAndFloat16Rounds) {
  TempDir dir;
  Loader plain(table(dir), options_for("none"));
  const std::vector<float> values = epoch_values(plain);
  EXPECT_EQ(values[3 * 7], 7.0f);
  EXPECT_EQ(values[3 * 7 + 1], 24.0f);

  Loader half(table(dir), options_for("Standardize, Float16"));
  half.start_epoch(0);
  const Batch batch = half.next();
  ASSERT_EQ(batch.dtype(), DType::kFloat16);
  const auto* h = static_cast<const uint16_t*>(batch.data());
  const float z1 = (1 - 4.5f) / std::sqrt(8.25f);
  EXPECT_EQ(h[3], float_to_half(z1));
}

TEST(FeatureLoader, BatchesAreBitIdenticalForAnyWorkerCount) {
  TempDir dir;
  const auto source = table(dir);
  std::vector<uint64_t> order1, order3;
  Loader one(source, options_for("Standardize", 1, /*shuffle=*/true));
  Loader three(source, options_for("Standardize", 3, /*shuffle=*/true));
  const std::vector<float> a = epoch_values(one, &order1);
  const std::vector<float> b = epoch_values(three, &order3);
  EXPECT_EQ(order1, order3);
  EXPECT_EQ(a, b);
  std::vector<uint64_t> sorted = order1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(order1, sorted);  // shuffled
}

TEST(FeatureLoader, WideVectorsAreClaimedInShortRunsThatEndAtTheBatch) {
  // 10,000 features (40 KiB, wider than any image side stoker takes) make runs of 1 sample;
  // 8,192 (32 KiB) runs of 2: batches of 5 are then written as 2 + 2 + 1 by whichever
  // workers claim them. Every sample still lands in its slot.
  for (const int kFeatures : {10000, 8192}) {
    TempDir dir;
    constexpr int kSamples = 23;
    std::vector<float> x(static_cast<size_t>(kFeatures) * kSamples);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i % 1000) * 0.5f + static_cast<float>(i / kFeatures);
    std::vector<int64_t> y(kSamples);
    for (int i = 0; i < kSamples; ++i) y[static_cast<size_t>(i)] = i % 3;
    const std::string path = dir.write(
        "w.npz", testing::zip_bytes({{"x.npy", testing::npy_bytes("<f4", {kSamples, kFeatures}, testing::raw_bytes(x))},
                                     {"y.npy", testing::npy_bytes("<i8", {kSamples}, testing::raw_bytes(y))}}));
    const auto source = std::shared_ptr<const Source>(open_source(path));
    std::vector<std::vector<float>> runs;
    for (int workers : {1, 3}) {
      LoaderOptions options = options_for("none", workers, /*shuffle=*/true);
      options.batch_size = 5;
      Loader loader(source, options);
      std::vector<float> values;
      loader.start_epoch(1);
      while (Batch batch = loader.next()) {
        const auto* p = static_cast<const float*>(batch.data());
        for (int k = 0; k < batch.size(); ++k) {
          const uint64_t i = batch.indices()[k];
          ASSERT_EQ(p[static_cast<size_t>(k) * kFeatures + 7], x[i * kFeatures + 7]) << "sample " << i;
          ASSERT_EQ(batch.labels()[k], y[i]);
        }
        values.insert(values.end(), p, p + static_cast<size_t>(batch.size()) * kFeatures);
      }
      ASSERT_EQ(values.size(), x.size());
      runs.push_back(std::move(values));
    }
    EXPECT_EQ(runs[0], runs[1]);
  }
}

TEST(FeatureLoader, ImageTransformsAndUint8AreRefusedWithOneLine) {
  TempDir dir;
  const auto source = table(dir);
  EXPECT_EQ(error_text([&] { Loader(source, options_for("RandomResizedCrop(8)")); }),
            "RandomResizedCrop is an image transform, and the data holds feature vectors (3 per "
            "sample); feature "
            "vectors take 'Standardize' or 'none' (and Float16/Float32)");
  EXPECT_EQ(error_text([&] { Loader(source, options_for("none, Normalize")); }).substr(0, 31),
            "Normalize is an image transform");
  EXPECT_EQ(error_text([&] { Loader(source, options_for("none, ToUint8")); }),
            "feature vectors cannot be written as uint8 (ToUint8); use Float32 or Float16");
  LoaderOptions wrong = options_for("Standardize");
  wrong.transform.features.mean = {1, 2};
  wrong.transform.features.std = {1, 2};
  EXPECT_EQ(error_text([&] { Loader(source, wrong); }), "Standardize has 2 mean values for 3 features");
  EXPECT_EQ(error_text([] { parse_transforms("CenterCrop(8), Standardize"); }).substr(0, 52),
            "CenterCrop is an image transform, and Standardize is");
}

TEST(FeatureLoader, StandardizeOnImagesPointsToNormalize) {
  TempDir dir;
  const std::string path =
      dir.write("i.npz", testing::zip_bytes({{"x.npy", testing::npy_bytes("|u1", {2, 4, 4}, std::vector<uint8_t>(32))},
                                             {"y.npy", testing::npy_bytes("|u1", {2}, {0, 1})}}));
  const std::string message = error_text([&] { Loader(open_source(path), options_for("Standardize")); });
  EXPECT_NE(message.find("Standardize is for feature vectors (.npz/.npy/numeric CSV), and arrays"), std::string::npos)
      << message;
  EXPECT_NE(message.find("holds images; images use Normalize(mean, std)"), std::string::npos) << message;
}

}  // namespace
}  // namespace stoker::data
