// Reading mapped data does not keep what it read mapped: after an epoch over a WebDataset shard,
// the rows of a .npy array read in order, or those of arrays larger than
// MappedFile::release_every() read shuffled, the map's resident pages (its Rss in
// /proc/self/smaps) stay near that, and every sample still reads its own bytes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "data/source/array_source.h"
#include "stoker/core/mapped_file.h"
#include "stoker/data/source.h"
#include "support/numpy_files.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::TempDir;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kEvery = 4 * kMiB;
// What may stay mapped after the last read: the reads since the last release (kEvery), those
// the thread has counted but not yet added (up to 4 MiB), and the last read's 2 MiB regions.
constexpr size_t kBound = 2 * kEvery + 4 * kMiB;

// Sets MappedFile::release_every() for one test.
class ReleaseEvery {
 public:
  explicit ReleaseEvery(size_t bytes) : before_(MappedFile::release_every()) { MappedFile::set_release_every(bytes); }
  ~ReleaseEvery() { MappedFile::set_release_every(before_); }
  ReleaseEvery(const ReleaseEvery&) = delete;
  ReleaseEvery& operator=(const ReleaseEvery&) = delete;

 private:
  size_t before_;
};

// The bytes of the mapping that holds `address` resident in this process (its Rss in
// /proc/self/smaps); fails the test when no mapping holds it.
size_t resident_bytes_of_map_at(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> start >> dash >> end && dash == '-' && line.find(' ') != std::string::npos &&
        std::isxdigit(static_cast<unsigned char>(line[0]))) {
      inside = start <= at && at < end;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) return std::stoul(line.substr(4)) * 1024;
  }
  ADD_FAILURE() << "no mapping in /proc/self/smaps holds " << address;
  return 0;
}

// The bytes of the mappings of the file `path` resident in this process (their Rss in
// /proc/self/smaps); fails the test when no mapping is of that file.
size_t resident_bytes_of_maps_of(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false, found = false;
  size_t bytes = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < line.find(' ')) {
      inside = line.size() >= path.size() + 1 &&
               line.compare(line.size() - path.size() - 1, std::string::npos, " " + path) == 0;
      found = found || inside;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) bytes += std::stoul(line.substr(4)) * 1024;
  }
  if (!found) ADD_FAILURE() << "no mapping in /proc/self/smaps is of " << path;
  return bytes;
}

// Sums every byte of `bytes`, touching each of its pages as a decoder would.
uint64_t sum_of(std::span<const uint8_t> bytes) { return std::accumulate(bytes.begin(), bytes.end(), uint64_t{0}); }

TEST(MappedPagesTest, AnEpochOverAShardLeavesFewOfItsPagesMapped) {
  // 200 samples of 160 KiB (31 MiB): the images are bytes the source hands on undecoded.
  TempDir dir;
  constexpr int kSamples = 200;
  std::vector<uint64_t> sums;
  std::mt19937 random(7);
  std::string names;
  for (int i = 0; i < kSamples; ++i) {
    std::vector<uint8_t> image(160 * 1024);
    for (uint8_t& b : image) b = static_cast<uint8_t>(random());
    sums.push_back(sum_of(image));
    dir.write(fmt::format("src/{:06d}.jpg", i), image);
    dir.write_text(fmt::format("src/{:06d}.cls", i), std::to_string(i % 3));
    names += fmt::format(" {:06d}.jpg {:06d}.cls", i, i);
  }
  const std::string shard = dir.str() + "/train-000000.tar";
  const auto run = stoker::testing::run_command(fmt::format("tar -cf {} -C {}/src{}", shard, dir.str(), names));
  ASSERT_EQ(run.exit_code, 0) << run.err;

  const ReleaseEvery every(kEvery);
  const std::unique_ptr<Source> source = open_source(shard);
  ASSERT_EQ(source->size(), static_cast<size_t>(kSamples));
  SampleData first;
  ASSERT_TRUE(source->read(0, &first).ok());
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (size_t i = 0; i < source->size(); ++i) {
      SampleData sample;
      ASSERT_TRUE(source->read(i, &sample).ok());
      ASSERT_EQ(sum_of(sample.bytes), sums[i]) << "sample " << i;
    }
    EXPECT_LE(resident_bytes_of_map_at(first.bytes.data()), kBound) << "epoch " << epoch;
  }
  // A view taken before the releases still reads its sample's bytes.
  EXPECT_EQ(sum_of(first.bytes), sums[0]);
}

TEST(MappedPagesTest, ThreadsReadingWhileOthersReleaseReadTheirOwnBytes) {
  // Four threads read the samples of two shards in their own shuffled orders while their reads
  // let the maps go every 256 KiB: every sample sums as written (ThreadSanitizer checks the
  // counting and the releases).
  TempDir dir;
  constexpr int kSamples = 64;
  std::vector<uint64_t> sums;
  std::mt19937 random(11);
  for (int s = 0; s < 2; ++s) {
    std::string names;
    for (int i = 0; i < kSamples; ++i) {
      std::vector<uint8_t> image(48 * 1024);
      for (uint8_t& b : image) b = static_cast<uint8_t>(random());
      sums.push_back(sum_of(image));
      dir.write(fmt::format("src{}/{:06d}.jpg", s, i), image);
      names += fmt::format(" {:06d}.jpg", i);
    }
    const auto run = stoker::testing::run_command(
        fmt::format("tar -cf {}/train-{:06d}.tar -C {}/src{}{}", dir.str(), s, dir.str(), s, names));
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  const ReleaseEvery every(256 * 1024);
  const std::unique_ptr<Source> source = open_source(dir.str() + "/train-*.tar");
  ASSERT_EQ(source->size(), sums.size());
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<size_t> order(sums.size());
      std::iota(order.begin(), order.end(), size_t{0});
      std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(t)));
      for (int epoch = 0; epoch < 3; ++epoch) {
        for (const size_t i : order) {
          SampleData sample;
          if (!source->read(i, &sample).ok() || sum_of(sample.bytes) != sums[i]) ++wrong[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

TEST(MappedPagesTest, RowsOfANpyArrayReadInOrderLeaveFewOfItsPagesMapped) {
  // 8,192 rows of 1,024 float32 (32 MiB), read in place: making the source reads them all in
  // order (its check for non-finite values), and so does a validation epoch.
  TempDir dir;
  constexpr int64_t kRows = 8192, kFeatures = 1024;
  std::vector<float> x(static_cast<size_t>(kRows * kFeatures));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000) * 0.5f;
  std::vector<int64_t> y(static_cast<size_t>(kRows));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i % 10);
  const std::string path =
      dir.write("x.npy", stoker::testing::npy_bytes("<f4", {kRows, kFeatures}, stoker::testing::raw_bytes(x)));
  dir.write("y.npy", stoker::testing::npy_bytes("<i8", {kRows}, stoker::testing::raw_bytes(y)));

  const ReleaseEvery every(kEvery);
  const std::unique_ptr<Source> source = open_source(path);
  ASSERT_EQ(source->size(), static_cast<size_t>(kRows));
  SampleData first;
  ASSERT_TRUE(source->read(0, &first).ok());
  ASSERT_EQ(first.feature_count, kFeatures);
  EXPECT_LE(resident_bytes_of_map_at(first.bytes.data()), kBound) << "after making the source";
  source->expect_reads(Source::ReadOrder::kInOrder);
  for (size_t i = 0; i < static_cast<size_t>(kRows); ++i) {
    SampleData sample;
    ASSERT_TRUE(source->read(i, &sample).ok());
    float last = 0;
    std::memcpy(&last, sample.bytes.data() + sample.bytes.size() - sizeof(float), sizeof(float));
    ASSERT_EQ(last, x[(i + 1) * kFeatures - 1]) << "row " << i;
  }
  EXPECT_LE(resident_bytes_of_map_at(first.bytes.data()), kBound) << "after an epoch in order";
  float value = 0;
  std::memcpy(&value, first.bytes.data() + 4 * 123, sizeof(float));
  EXPECT_EQ(value, x[123]);
}

// Sets shuffled_map_bound() for one test (sources made while it lives take it).
class ShuffledMapBound {
 public:
  explicit ShuffledMapBound(size_t bytes) : before_(shuffled_map_bound()) { set_shuffled_map_bound(bytes); }
  ~ShuffledMapBound() { set_shuffled_map_bound(before_); }
  ShuffledMapBound(const ShuffledMapBound&) = delete;
  ShuffledMapBound& operator=(const ShuffledMapBound&) = delete;

 private:
  size_t before_;
};

// Rows of `x`, an array of `rows` samples, written as x.npy with class ids in y.npy in `folder`
// of `dir`; returns the path of x.npy.
std::string write_npy(TempDir& dir, const std::string& folder, const std::string& descr,
                      const std::vector<int64_t>& shape, const std::vector<uint8_t>& x) {
  std::vector<int64_t> y(static_cast<size_t>(shape[0]));
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int64_t>(i % 10);
  dir.write(folder + "/y.npy", stoker::testing::npy_bytes("<i8", {shape[0]}, stoker::testing::raw_bytes(y)));
  return dir.write(folder + "/x.npy", stoker::testing::npy_bytes(descr, shape, x));
}

// Where sample 0 lies in `source`'s map: read in order, a float32 row in host order is a view
// into the map.
const void* map_of(const Source& source) {
  source.expect_reads(Source::ReadOrder::kInOrder);
  SampleData first;
  EXPECT_TRUE(source.read(0, &first).ok());
  source.expect_reads(Source::ReadOrder::kShuffled);
  return first.bytes.data();
}

// Every sample of `source`, in a shuffled order, as its bytes (float32 features or pixels).
std::vector<std::vector<uint8_t>> shuffled_epoch(const Source& source) {
  std::vector<size_t> order(source.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937(3));
  std::vector<std::vector<uint8_t>> rows(source.size());
  for (const size_t i : order) {
    SampleData sample;
    EXPECT_TRUE(source.read(i, &sample).ok()) << "sample " << i;
    rows[i].assign(sample.bytes.begin(), sample.bytes.end());
  }
  return rows;
}

TEST(MappedPagesTest, ShuffledRowsOfArraysLargerThanTheBoundLeaveFewOfTheirPagesMapped) {
  // 32 MiB arrays, 8 times the bound on shuffled maps: float32 rows (handed out as they lie when mapped),
  // float64 rows (converted to float32), and uint8 images. Two shuffled epochs read every row's
  // own values and leave the file's resident mapped pages near what the check in order left.
  TempDir dir;
  constexpr int64_t kRows = 4096, kWidth = 1024;
  const ReleaseEvery every(kEvery);
  const ShuffledMapBound bound(kEvery);

  std::vector<float> x32(static_cast<size_t>(kRows * kWidth * 2));
  std::vector<double> x64(static_cast<size_t>(kRows * kWidth));
  std::vector<uint8_t> pixels(static_cast<size_t>(kRows * kWidth * 8));
  for (size_t i = 0; i < x32.size(); ++i) x32[i] = static_cast<float>(i % 1000) * 0.5f;
  for (size_t i = 0; i < x64.size(); ++i) x64[i] = static_cast<double>(i % 999) * 0.25;
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7 + i / 8192);
  const std::vector<std::string> paths = {
      write_npy(dir, "f4", "<f4", {kRows, kWidth * 2}, stoker::testing::raw_bytes(x32)),
      write_npy(dir, "f8", "<f8", {kRows, kWidth}, stoker::testing::raw_bytes(x64)),
      write_npy(dir, "u1", "|u1", {kRows, 64, 128}, pixels)};
  for (const std::string& path : paths) {
    const std::unique_ptr<Source> source = open_source(path);
    ASSERT_EQ(source->size(), static_cast<size_t>(kRows)) << path;
    source->expect_reads(Source::ReadOrder::kShuffled);
    for (int epoch = 0; epoch < 2; ++epoch) {
      const std::vector<std::vector<uint8_t>> rows = shuffled_epoch(*source);
      for (size_t i = 0; i < rows.size(); i += 97) {
        if (path == paths[0]) {
          ASSERT_EQ(rows[i], stoker::testing::raw_bytes(
                                 std::vector<float>(x32.begin() + static_cast<ptrdiff_t>(i * kWidth * 2),
                                                    x32.begin() + static_cast<ptrdiff_t>((i + 1) * kWidth * 2))))
              << path << " row " << i;
        } else if (path == paths[1]) {
          std::vector<float> row(static_cast<size_t>(kWidth));
          for (size_t j = 0; j < row.size(); ++j) row[j] = static_cast<float>(x64[i * kWidth + j]);
          ASSERT_EQ(rows[i], stoker::testing::raw_bytes(row)) << path << " row " << i;
        } else {
          ASSERT_EQ(rows[i], std::vector<uint8_t>(pixels.begin() + static_cast<ptrdiff_t>(i * kWidth * 8),
                                                  pixels.begin() + static_cast<ptrdiff_t>((i + 1) * kWidth * 8)))
              << path << " row " << i;
        }
      }
      EXPECT_LE(resident_bytes_of_maps_of(path), kBound) << path << ", epoch " << epoch;
    }
  }
}

TEST(MappedPagesTest, SmallArraysReadShuffledThroughTheirMapsTogetherStayNearTheBound) {
  // Eight arrays of 3 MiB, each under the bound on shuffled maps (4 MiB) but 24 MiB together: the first
  // stays mapped when read shuffled (its rows are views into its map), the others, past the bound
  // on what shuffled maps hold together, read their rows from the file.
  TempDir dir;
  constexpr int64_t kRows = 768, kWidth = 1024;
  const ReleaseEvery every(kEvery);
  const ShuffledMapBound bound(kEvery);
  std::vector<float> x(static_cast<size_t>(kRows * kWidth));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000);
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<std::string> paths;
  for (int k = 0; k < 8; ++k) {
    paths.push_back(write_npy(dir, fmt::format("a{}", k), "<f4", {kRows, kWidth}, stoker::testing::raw_bytes(x)));
    sources.push_back(open_source(paths.back()));
  }
  const auto* first_map = static_cast<const uint8_t*>(map_of(*sources[0]));
  SampleData sample;
  ASSERT_TRUE(sources[0]->read(5, &sample).ok());
  EXPECT_TRUE(sample.bytes.data() >= first_map && sample.bytes.data() < first_map + kRows * kWidth * 4)
      << "a small array's shuffled rows are read through its map";
  for (const auto& source : sources) {
    const std::vector<std::vector<uint8_t>> rows = shuffled_epoch(*source);
    ASSERT_EQ(rows[kRows - 1],
              stoker::testing::raw_bytes(std::vector<float>(x.end() - static_cast<ptrdiff_t>(kWidth), x.end())));
  }
  size_t resident = 0;
  for (const std::string& path : paths) resident += resident_bytes_of_maps_of(path);
  EXPECT_LE(resident, kBound);
}

TEST(MappedPagesTest, AnArrayWellWithinTheMemoryReadsShuffledThroughItsMapByDefault) {
  // 80 MiB, more than release_every() but far less than a quarter of any machine's memory that
  // runs these tests: its shuffled rows are views into its map (memory speed from the second
  // epoch on), not pread's copies.
  ASSERT_GT(shuffled_map_bound(), size_t{80} * kMiB) << "the default bound is a quarter of the memory";
  TempDir dir;
  constexpr int64_t kRows = 20480, kWidth = 1024;
  const std::vector<float> x(static_cast<size_t>(kRows * kWidth), 2.5f);
  const std::unique_ptr<Source> source =
      open_source(write_npy(dir, "big", "<f4", {kRows, kWidth}, stoker::testing::raw_bytes(x)));
  const auto* map = static_cast<const uint8_t*>(map_of(*source));
  SampleData sample;
  ASSERT_TRUE(source->read(kRows - 7, &sample).ok());
  EXPECT_TRUE(sample.bytes.data() >= map && sample.bytes.data() < map + kRows * kWidth * 4)
      << "an array within the default bound reads its shuffled rows through its map";
}

TEST(MappedPagesTest, AShuffledRowOfALargeArrayTruncatedSinceIsABadSampleNamingTheFile) {
  // Rows read from the file, not the map: a row past the end of the file cut short since it was
  // opened fails with the file's name (through the map it would be a SIGBUS).
  TempDir dir;
  constexpr int64_t kRows = 2048, kWidth = 1024;
  const ReleaseEvery every(kEvery);
  const ShuffledMapBound bound(kEvery);
  const std::vector<float> x(static_cast<size_t>(kRows * kWidth), 1.5f);
  const std::string path = write_npy(dir, "cut", "<f4", {kRows, kWidth}, stoker::testing::raw_bytes(x));
  const std::unique_ptr<Source> source = open_source(path);
  source->expect_reads(Source::ReadOrder::kShuffled);
  std::filesystem::resize_file(path, 4 * kMiB);
  SampleData sample;
  ASSERT_TRUE(source->read(5, &sample).ok());
  const Status last = source->read(kRows - 1, &sample);
  ASSERT_FALSE(last.ok());
  EXPECT_NE(last.reason().find(path + " changed while it was being read"), std::string::npos) << last.reason();
}

}  // namespace
}  // namespace stoker::data
