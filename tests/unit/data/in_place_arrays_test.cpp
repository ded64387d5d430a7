// Feature arrays read in place from the file (.npy, stored .npz members) instead of copied
// into memory: the same values as the copy in every dtype, the same checks, and no memory
// that grows with the file.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "data/source/source_view.h"
#include "data/transform/features.h"
#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/sanitizers.h"
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

// `values` encoded as numpy's dtype `descr` ("<f8", ">i2", "|u1", "<f2" ...).
std::vector<uint8_t> encoded(const std::string& descr, const std::vector<double>& values) {
  const char kind = descr[1];
  const int size = std::stoi(descr.substr(2));
  std::vector<uint8_t> out;
  for (const double v : values) {
    uint64_t bits = 0;
    if (kind == 'f' && size == 8) bits = std::bit_cast<uint64_t>(v);
    if (kind == 'f' && size == 4) bits = std::bit_cast<uint32_t>(static_cast<float>(v));
    if (kind == 'f' && size == 2) {  // the test values are small integers and halves: exact in binary16
      const auto f = std::bit_cast<uint32_t>(static_cast<float>(v));
      const uint32_t exponent = (f >> 23) & 0xFF;
      bits = ((f >> 16) & 0x8000) | (v == 0 ? 0 : ((exponent - 112) << 10) | ((f >> 13) & 0x3FF));
    }
    if (kind == 'i' || kind == 'u' || kind == 'b') bits = static_cast<uint64_t>(static_cast<int64_t>(v));
    for (int b = 0; b < size; ++b) {
      const int shift = descr[0] == '>' ? 8 * (size - 1 - b) : 8 * b;
      out.push_back(static_cast<uint8_t>(bits >> shift));
    }
  }
  return out;
}

std::vector<float> all_features(const Source& source) {
  std::vector<float> out;
  for (size_t i = 0; i < source.size(); ++i) {
    const std::vector<float> row = features_of(source, i);
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

TEST(InPlaceArrays, EveryDtypeGivesTheValuesOfTheInMemoryCopy) {
  // The same 5 x 3 array as an .npy (read in place), a stored .npz member (in place, at an
  // address no float may be read from) and a deflated one (inflated into memory).
  std::vector<double> values;
  for (int k = 0; k < 15; ++k) values.push_back(k % 7 + (k % 2 ? 0.5 : 0));
  const std::vector<uint8_t> y = npy_bytes("<i8", {5}, raw_bytes<int64_t>({0, 1, 2, 0, 1}));
  for (const char* descr : {"<f4", "<f8", "<f2", ">f4", ">f8", "<i2", ">i4", "|u1", "|i1", "<u8"}) {
    SCOPED_TRACE(descr);
    const std::string dtype = descr;
    std::vector<double> typed = values;
    if (dtype[1] != 'f') {
      for (double& v : typed) v = static_cast<double>(static_cast<int64_t>(v));
    }
    const std::vector<uint8_t> x = npy_bytes(dtype, {5, 3}, encoded(dtype, typed));
    TempDir dir;
    dir.write("x.npy", x);
    dir.write("y.npy", y);
    const std::string stored = dir.write("stored.npz", zip_bytes({{"x.npy", x}, {"y.npy", y}}));
    const std::string packed = dir.write("packed.npz", zip_bytes({{"x.npy", x}, {"y.npy", y}}, true));

    const auto in_memory = open_source(packed);
    EXPECT_EQ(in_memory->describe().find("memory-mapped"), std::string::npos) << in_memory->describe();
    const std::vector<float> expected(typed.begin(), typed.end());
    EXPECT_EQ(all_features(*in_memory), expected);
    for (const std::string& path : {dir.str() + "/x.npy", stored}) {
      const auto mapped = open_source(path);
      expect_has(mapped->describe(), "· memory-mapped ");
      EXPECT_EQ(all_features(*mapped), expected) << path;
      // Reading into one SampleData again and again (as a worker does) keeps each row's values.
      SampleData sample;
      ASSERT_TRUE(mapped->read(4, &sample).ok());
      ASSERT_TRUE(mapped->read(1, &sample).ok());
      float value = 0;
      std::memcpy(&value, sample.bytes.data() + 2 * sizeof(float), sizeof value);
      EXPECT_EQ(value, expected[5]) << path;
    }
  }
}

TEST(InPlaceArrays, NonFiniteValuesStillStopAtTheStartNamingSampleAndColumn) {
  TempDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  dir.write("x.npy", npy_bytes("<f4", {3, 2}, raw_bytes<float>({1, 2, 3, 4, 5, nan})));
  dir.write("y.npy", npy_bytes("<i8", {3}, raw_bytes<int64_t>({0, 1, 0})));
  expect_has(error_text([&] { open_source(dir.str() + "/x.npy"); }), "a feature of sample 2 (column 1) is nan");
  // A float16 infinity, converted row by row: 0x7C00.
  dir.write("x.npy", npy_bytes("<f2", {3, 2}, {0, 0x3C, 0, 0x3C, 0x00, 0x7C, 0, 0, 0, 0, 0, 0}));
  expect_has(error_text([&] { open_source(dir.str() + "/x.npy"); }), "a feature of sample 1 (column 0) is inf");
}

// Two feature vectors, recording the read-order hints it is given.
class HintedSource final : public Source {
 public:
  size_t size() const override { return 4; }
  std::string name(size_t i) const override { return std::to_string(i); }
  std::string describe() const override { return "hinted"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t label(size_t i) const override { return static_cast<int64_t>(i % 2); }
  void targets(size_t i, float* out) const override { out[0] = static_cast<float>(i % 2); }
  int feature_count() const override { return 1; }
  Status read(size_t i, SampleData* out) const override {
    out->storage.resize(sizeof(float));
    const auto value = static_cast<float>(i);
    std::memcpy(out->storage.data(), &value, sizeof value);
    out->bytes = out->storage;
    out->feature_count = 1;
    return Status::ok_status();
  }
  void expect_reads(ReadOrder order) const override { hints.push_back(order); }

  mutable std::vector<ReadOrder> hints;

 private:
  std::vector<std::string> names_{"a", "b"};
};

TEST(InPlaceArrays, StandardizesFitReadsInOrderAndLeavesTheSourceToShuffledReads) {
  // What keeps a mapped file larger than RAM from faulting 128 KiB around every shuffled row.
  auto source = std::make_shared<HintedSource>();
  std::vector<float> mean, sd;
  fit_standardize(*source, &mean, &sd);
  EXPECT_EQ(source->hints, (std::vector{Source::ReadOrder::kInOrder, Source::ReadOrder::kShuffled}));
  EXPECT_EQ(mean, std::vector<float>{1.5f});
  // Through a held-out part (a view of the source) the hints reach the file all the same.
  source->hints.clear();
  const HeldOut parts = hold_out(source, 0.5, 0);
  fit_standardize(*parts.train, &mean, &sd);
  EXPECT_EQ(source->hints, (std::vector{Source::ReadOrder::kInOrder, Source::ReadOrder::kShuffled}));
}

TEST(InPlaceArrays, AnEpochInFileOrderReadsAheadAndAShuffledOneDoesNot) {
  // Validation reads its file in order: under MADV_RANDOM every page would be a fault of its
  // own (1.8x slower on a file twice the memory limit, docs/lab/benchmarks-log.md). The advice follows
  // the epoch each loader starts, so a training epoch after validation reads randomly again.
  auto source = std::make_shared<HintedSource>();
  for (const bool shuffle : {false, true}) {
    LoaderOptions options;
    options.batch_size = 2;
    options.workers = 1;
    options.transform = parse_transforms("none");
    options.sampler.shuffle = shuffle;
    Loader loader(source, options);
    source->hints.clear();
    loader.start_epoch(0);
    while (loader.next()) {
    }
    EXPECT_EQ(source->hints, std::vector{shuffle ? Source::ReadOrder::kShuffled : Source::ReadOrder::kInOrder});
  }
}

// The source's samples without the sums it gathered on opening: fit_standardize reads them.
class WithoutSums final : public SourceView {
 public:
  using SourceView::SourceView;
  const FeatureSums* feature_sums() const override { return nullptr; }
};

TEST(InPlaceArrays, StandardizesFitTakesTheSumsGatheredWhileCheckingTheFileAndMatchesAPassOfItsOwn) {
  // One pass over a mapped file instead of two: the NaN check on opening gathers the sums.
  // The mean and std are bit for bit those of a pass of the fit's own, for rows read as they
  // lie (float32), converted (float64) and held in memory (Fortran order is copied).
  TempDir dir;
  constexpr int64_t kRows = 1000, kFeatures = 7;
  std::vector<double> values;
  for (int64_t i = 0; i < kRows * kFeatures; ++i)
    values.push_back(1e4 + std::sin(0.37 * static_cast<double>(i)) * (i % 5));
  dir.write("y.npy", npy_bytes("|u1", {kRows}, std::vector<uint8_t>(kRows, 1)));
  const std::vector<std::pair<std::string, bool>> layouts{{"<f4", false}, {">f8", false}, {"<f4", true}};
  for (const auto& [descr, fortran] : layouts) {
    const std::string x = dir.write("x.npy", npy_bytes(descr, {kRows, kFeatures}, encoded(descr, values), fortran));
    const auto source = std::shared_ptr<const Source>(open_source(x));
    SCOPED_TRACE(descr + (fortran ? " in Fortran order" : ""));
    ASSERT_NE(source->feature_sums(), nullptr);
    EXPECT_EQ(source->feature_sums()->count, static_cast<size_t>(kRows));
    std::vector<float> mean, sd, read_mean, read_sd;
    fit_standardize(*source, &mean, &sd);
    fit_standardize(WithoutSums(source), &read_mean, &read_sd);
    EXPECT_EQ(mean, read_mean);
    EXPECT_EQ(sd, read_sd);
    EXPECT_NEAR(mean[0], 1e4, 2);
    // A held-out part has fewer rows than the sums: its fit reads its own.
    const HeldOut parts = hold_out(source, 0.5, 0);
    EXPECT_EQ(parts.train->feature_sums(), nullptr);
  }
}

// A source without sums (a chunked HDF5 dataset) is read by the fit in runs of consecutive rows
// on as many threads as the loader has workers, merged in row order: the same mean and std.
TEST(InPlaceArrays, StandardizesFitReadsRunsOfRowsOnThreadsWithTheResultOfOnePass) {
  TempDir dir;
  constexpr int64_t kRows = 3 * static_cast<int64_t>(kFitRowsPerThread) + 5, kFeatures = 3;
  std::vector<double> values;
  for (int64_t i = 0; i < kRows * kFeatures; ++i)
    values.push_back(1e4 + std::sin(0.37 * static_cast<double>(i)) * (i % 5) + static_cast<double>(i / 9000));
  dir.write("y.npy", npy_bytes("|u1", {kRows}, std::vector<uint8_t>(kRows, 1)));
  const std::string x = dir.write("x.npy", npy_bytes("<f4", {kRows, kFeatures}, encoded("<f4", values), false));
  const auto source = std::shared_ptr<const Source>(open_source(x));
  std::vector<float> mean, sd, threaded_mean, threaded_sd;
  fit_standardize(WithoutSums(source), &mean, &sd);
  fit_standardize_on_threads(WithoutSums(source), &threaded_mean, &threaded_sd, 8);  // 3 runs: 4,096 rows or more each
  for (size_t j = 0; j < static_cast<size_t>(kFeatures); ++j) {
    EXPECT_NEAR(threaded_mean[j], mean[j], 1e-6 * std::abs(mean[j])) << j;
    EXPECT_NEAR(threaded_sd[j], sd[j], 1e-5 * sd[j]) << j;
  }
}

// Anonymous (not file-backed) resident memory of this process, in bytes.
size_t anonymous_rss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8)) * 1024;
  }
  return 0;
}

TEST(InPlaceArrays, A1GiBArrayIsTrainedFromWithoutCopyingItIntoMemory) {
#if defined(STOKER_UNDER_ASAN) || defined(STOKER_UNDER_TSAN)
  GTEST_SKIP() << "a sanitizer's shadow memory for the mapped file counts as anonymous memory";
#endif
  // 1 GiB of float32 features (a sparse file: zeros that take no disk), opened, checked for
  // NaN, standardized and read: the process's own memory grows by the labels, not the data.
  TempDir dir;
  constexpr int64_t kRows = 1 << 20, kFeatures = 256;
  const std::string x = dir.write("x.npy", npy_bytes("<f4", {kRows, kFeatures}, {}));
  std::filesystem::resize_file(x, std::filesystem::file_size(x) + kRows * kFeatures * sizeof(float));
  dir.write("y.npy", npy_bytes("|u1", {kRows}, std::vector<uint8_t>(kRows, 1)));

  const size_t before = anonymous_rss();
  const auto source = open_source(x);
  std::vector<float> mean, std;
  fit_standardize(*source, &mean, &std);
  const size_t grown = anonymous_rss() - std::min(before, anonymous_rss());
  ASSERT_EQ(source->size(), static_cast<size_t>(kRows));
  EXPECT_EQ(mean[kFeatures - 1], 0.0f);
  EXPECT_EQ(features_of(*source, kRows - 1), std::vector<float>(kFeatures, 0.0f));
  // The class ids (int64, 8 MiB) and the standardize sums; a copy of the features would be 1 GiB.
  EXPECT_LT(grown, size_t{64} << 20) << "anonymous memory grew by " << grown / (1 << 20) << " MiB";
}

}  // namespace
}  // namespace stoker::data
