// A dataset in shards (--data 'emb_*.npy'): the files a pattern matches, one after another as
// one source, and one line for shards that do not belong together.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "data/source/source_view.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::expect_has;
using testing::features_of;
using testing::npy_bytes;
using testing::raw_bytes;
using testing::TempDir;
using testing::zip_bytes;

// Shard k of `rows` samples: feature value 100k + i, class (i + k) % classes.
void write_shard(const TempDir& dir, const std::string& stem, int k, int rows, int classes, int features = 1) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int i = 0; i < rows; ++i) {
    for (int f = 0; f < features; ++f) x.push_back(static_cast<float>(100 * k + i));
    y.push_back((i + k) % classes);
  }
  dir.write(stem + "_x_" + std::to_string(k) + ".npy", npy_bytes("<f4", {rows, features}, raw_bytes(x)));
  dir.write(stem + "_y_" + std::to_string(k) + ".npy", npy_bytes("<i8", {rows}, raw_bytes(y)));
}

TEST(Shards, APatternsFilesAreOneSourceInNameOrder) {
  TempDir dir;
  write_shard(dir, "emb", 1, 3, 2);  // classes 0, 1 only
  write_shard(dir, "emb", 0, 2, 4);
  write_shard(dir, "emb", 2, 4, 4);
  const auto source = open_source(dir.str() + "/emb_x_*.npy");
  ASSERT_EQ(source->size(), 9u);
  // emb_x_0 (2 rows), emb_x_1 (3 rows), emb_x_2 (4 rows), in file-name order.
  EXPECT_EQ(features_of(*source, 0), std::vector<float>{0});
  EXPECT_EQ(features_of(*source, 1), std::vector<float>{1});
  EXPECT_EQ(features_of(*source, 2), std::vector<float>{100});
  EXPECT_EQ(features_of(*source, 4), std::vector<float>{102});
  EXPECT_EQ(features_of(*source, 5), std::vector<float>{200});
  EXPECT_EQ(features_of(*source, 8), std::vector<float>{203});
  EXPECT_EQ(source->label(2), 1);  // emb_x_1 row 0: (0 + 1) % 2
  EXPECT_EQ(source->label(8), 1);  // emb_x_2 row 3: (3 + 2) % 4
  expect_has(source->name(5), "emb_x_2.npy[0]");
  EXPECT_EQ(source->class_names().size(), 4u);  // the shard with the most ids names them all
  EXPECT_EQ(source->feature_count(), 1);
  expect_has(source->describe(), "3 files matching " + dir.str() + "/emb_x_*.npy, 9 samples in all; the first: arrays");
  EXPECT_FALSE(has_held_out_split(dir.str() + "/emb_x_*.npy"));
  // A pattern with one match is that file's source.
  expect_has(open_source(dir.str() + "/emb_x_0*.npy")->describe(), "arrays " + dir.str() + "/emb_x_0.npy");
}

TEST(Shards, FeatureSumsMergedAreThoseOfOnePassOverAllRows) {
  // Three runs of rows far apart (each shard's shift is its own first row), merged in order.
  constexpr int kFeatures = 3;
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < 30; ++i) {
    rows.push_back(
        {static_cast<float>(1e4 * (i / 10) + std::sin(i)), static_cast<float>(-i % 7), static_cast<float>(0.5 * i)});
  }
  FeatureSums all(kFeatures), merged(kFeatures);
  for (const auto& row : rows) all.add(row.data());
  merged.merge(FeatureSums(kFeatures));  // nothing before, nothing added
  for (int part = 0; part < 3; ++part) {
    FeatureSums sums(kFeatures);
    for (int i = 10 * part; i < 10 * part + 10; ++i) sums.add(rows[static_cast<size_t>(i)].data());
    merged.merge(sums);
  }
  merged.merge(FeatureSums(kFeatures));
  ASSERT_EQ(merged.count, all.count);
  EXPECT_EQ(merged.shift, all.shift);
  for (size_t j = 0; j < kFeatures; ++j) {
    EXPECT_NEAR(merged.sum[j], all.sum[j], 1e-9 * std::abs(all.sum[j]) + 1e-9) << j;
    EXPECT_NEAR(merged.sum_sq[j], all.sum_sq[j], 1e-9 * std::abs(all.sum_sq[j]) + 1e-9) << j;
  }
}

// The source's samples, counting the reads that reach them.
class CountingReads final : public SourceView {
 public:
  using SourceView::SourceView;
  Status read(size_t i, SampleData* out) const override {
    ++reads;
    return SourceView::read(i, out);
  }
  mutable std::atomic<int> reads{0};
};

TEST(Shards, StandardizeIsFittedFromTheShardsSumsWithoutReadingThemAgain) {
  // Each shard's NaN check gathered its sums on opening; the dataset's are those combined, and
  // the fit equals a fit of one file holding the same rows.
  TempDir dir;
  for (int k = 0; k < 3; ++k) write_shard(dir, "s", k, 5 + k, 2, 2);
  const std::shared_ptr<const Source> shards = open_source(dir.str() + "/s_x_*.npy");
  ASSERT_NE(shards->feature_sums(), nullptr);
  EXPECT_EQ(shards->feature_sums()->count, 18u);
  // The same rows, in the same order, as one file.
  std::vector<float> x;
  std::vector<int64_t> y;
  for (size_t i = 0; i < shards->size(); ++i) {
    const std::vector<float> row = features_of(*shards, i);
    x.insert(x.end(), row.begin(), row.end());
    y.push_back(shards->label(i));
  }
  dir.write("one_x.npy", npy_bytes("<f4", {static_cast<int>(y.size()), 2}, raw_bytes(x)));
  dir.write("one_y.npy", npy_bytes("<i8", {static_cast<int>(y.size())}, raw_bytes(y)));
  const CountingReads counted(shards);
  std::vector<float> mean, sd, one_mean, one_sd;
  fit_standardize(counted, &mean, &sd);
  EXPECT_EQ(counted.reads, 0);
  fit_standardize(*open_source(dir.str() + "/one_x.npy"), &one_mean, &one_sd);
  for (size_t j = 0; j < 2; ++j) {
    EXPECT_FLOAT_EQ(mean[j], one_mean[j]);
    EXPECT_FLOAT_EQ(sd[j], one_sd[j]);
  }
}

TEST(Shards, TheHeldOutArraysOfEveryShardAreTheTestSplit) {
  TempDir dir;
  for (int k = 0; k < 2; ++k) {
    dir.write("part" + std::to_string(k) + ".npz",
              zip_bytes({{"x_train.npy", npy_bytes("<f4", {2, 1}, raw_bytes<float>({1, 2}))},
                         {"y_train.npy", npy_bytes("<i8", {2}, raw_bytes<int64_t>({0, 1}))},
                         {"x_test.npy", npy_bytes("<f4", {1, 1}, raw_bytes<float>({static_cast<float>(7 + k)}))},
                         {"y_test.npy", npy_bytes("<i8", {1}, raw_bytes<int64_t>({k}))}}));
  }
  const std::string pattern = dir.str() + "/part?.npz";
  ASSERT_TRUE(has_held_out_split(pattern));
  const auto test = open_source(pattern, Split::kHeldOut);
  ASSERT_EQ(test->size(), 2u);
  EXPECT_EQ(features_of(*test, 1), std::vector<float>{8});
  dir.write("part2.npz", zip_bytes({{"x.npy", npy_bytes("<f4", {1, 1}, raw_bytes<float>({1}))},
                                    {"y.npy", npy_bytes("<i8", {1}, raw_bytes<int64_t>({0}))}}));
  EXPECT_FALSE(has_held_out_split(pattern));  // every shard must have one
}

TEST(Shards, ShardsThatDoNotBelongTogetherAreOneLine) {
  TempDir dir;
  write_shard(dir, "a", 0, 2, 2, 3);
  write_shard(dir, "a", 1, 2, 2, 4);
  EXPECT_EQ(error_text([&] { open_source(dir.str() + "/a_x_*.npy"); }),
            dir.str() + "/a_x_0.npy[0] and " + dir.str() + "/a_x_1.npy[0] (both matching " + dir.str() +
                "/a_x_*.npy) differ in features per sample: 3 and 4; the files of one dataset must hold the same "
                "kind of samples");
  dir.write("f1/cat/1.jpg", {1});
  dir.write("f1/dog/1.jpg", {1});
  dir.write("f2/cat/1.jpg", {1});
  dir.write("f2/cow/1.jpg", {1});
  expect_has(error_text([&] { open_source(dir.str() + "/f?"); }), "differ in class names: [cat, dog] and [cat, cow]");
  // As many values per sample, in another shape: (2, 3) sequences and (3, 2) ones.
  dir.write("s_x_0.npy", npy_bytes("<f4", {1, 2, 3}, raw_bytes<float>({1, 2, 3, 4, 5, 6})));
  dir.write("s_y_0.npy", npy_bytes("<i8", {1}, raw_bytes<int64_t>({0})));
  dir.write("s_x_1.npy", npy_bytes("<f4", {1, 3, 2}, raw_bytes<float>({1, 2, 3, 4, 5, 6})));
  dir.write("s_y_1.npy", npy_bytes("<i8", {1}, raw_bytes<int64_t>({0})));
  expect_has(error_text([&] { open_source(dir.str() + "/s_x_*.npy"); }),
             "differ in the shape of a sample's features: (2, 3) and (3, 2)");
  EXPECT_EQ(error_text([&] { open_source(dir.str() + "/none_*.npy"); }),
            "dataset pattern " + dir.str() +
                "/none_*.npy matches no file; check the folder and the pattern (shards of one dataset: "
                "'data/emb_*.npy', 'shards/train-{000000..000146}.tar')");
}

TEST(Shards, ABracePatternNamesItsShardsInItsOrder) {
  TempDir dir;
  for (int k = 0; k < 3; ++k) write_shard(dir, "emb", k, 2, 2);
  // Alternatives in the order written, and a glob in each expanded name.
  const auto source = open_source(dir.str() + "/emb_x_{2,0,1}.npy");
  ASSERT_EQ(source->size(), 6u);
  EXPECT_EQ(features_of(*source, 0), std::vector<float>{200});  // the order written, not name order
  EXPECT_EQ(features_of(*source, 2), std::vector<float>{0});
  EXPECT_EQ(features_of(*source, 5), std::vector<float>{101});
  EXPECT_EQ(open_source(dir.str() + "/emb_{x,x}_0*.npy")->size(), 4u);
  EXPECT_EQ(error_text([&] { open_source(dir.str() + "/emb_x_{0..3}.npy"); }),
            "dataset pattern " + dir.str() + "/emb_x_{0..3}.npy names " + dir.str() +
                "/emb_x_3.npy, which does not exist; check the range (the shards there: ls " + dir.str() + ")");
  EXPECT_EQ(error_text([&] { open_source(dir.str() + "/emb_{y,z}_*.npy"); }),
            "dataset pattern " + dir.str() + "/emb_z_*.npy (from " + dir.str() +
                "/emb_{y,z}_*.npy) matches no file; check the folder and the pattern (shards of one dataset: "
                "'data/emb_*.npy', 'shards/train-{000000..000146}.tar')");
}

}  // namespace
}  // namespace stoker::data
