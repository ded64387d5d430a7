// Shuffled and in-order epochs over compressed chunked HDF5 data read band by band through the
// one cache of decoded bands (shared_bands.h): several files given as one pattern (their bands
// in turn, one permutation of every row, the same on every rank, resumed mid-epoch), a part
// held out by val_split, groups smaller than the rows in flight, and file order with several
// workers. Each band is decoded once per epoch (chunks_decoded counts the chunks).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "data/source/hdf5_chunk_reader.h"
#include "data/source/shared_bands.h"
#include "stoker/data/loader.h"
#include "stoker/data/sampler.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/h5_file.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::H5File;
using testing::TempDir;

constexpr hsize_t kCols = 8;

// Writes `path` with "x", rows x kCols float32 whose first value is `first` + the row (so every
// row of every file differs), in gzipped chunks of (chunk_rows, 4): two chunks a band.
void write_shard(const std::string& path, hsize_t rows, hsize_t chunk_rows, float first) {
  std::vector<float> x(rows * kCols);
  for (hsize_t i = 0; i < rows; ++i) {
    for (hsize_t c = 0; c < kCols; ++c) x[i * kCols + c] = first + static_cast<float>(i) + 0.125f * c;
  }
  H5File f(path);
  const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  const std::vector<hsize_t> chunk{chunk_rows, 4};
  H5Pset_chunk(plist, 2, chunk.data());
  H5Pset_deflate(plist, 1);
  f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, kCols}, x, plist);
  H5Pclose(plist);
  f.int64s("y", std::vector<int64_t>(rows, 0));
}

// Three shards of 230, 170 and 300 rows in chunks of 20, 30 and 25 rows: 12 + 6 + 12 bands.
struct Shards {
  TempDir dir;
  std::string pattern;
  std::vector<float> firsts;  // the first value of each sample's row, by sample index
  size_t bands = 0;
  Shards() {
    const std::vector<std::array<hsize_t, 2>> shapes{{230, 20}, {170, 30}, {300, 25}};
    float first = 0;
    for (size_t k = 0; k < shapes.size(); ++k) {
      write_shard(dir.str() + "/feats-0000" + std::to_string(k) + ".h5", shapes[k][0], shapes[k][1], first);
      for (hsize_t i = 0; i < shapes[k][0]; ++i) firsts.push_back(first + static_cast<float>(i));
      bands += (shapes[k][0] + shapes[k][1] - 1) / shapes[k][1];
      first += 10000;
    }
    pattern = dir.str() + "/feats-*.h5";
  }
};

LoaderOptions small_loader(size_t chunk_shuffle_bytes) {
  LoaderOptions options;
  options.batch_size = 16;
  options.workers = 3;
  options.prefetch = 2;
  options.run_ahead = false;  // an epoch's decodes counted apart from the next one's
  options.transform = parse_transforms("none");
  options.chunk_shuffle_bytes = chunk_shuffle_bytes;
  return options;
}

struct Epoch {
  std::vector<uint64_t> order;
  size_t decoded = 0;    // chunks
  size_t most_kept = 0;  // bytes of bands in the cache, at most, over the epoch
};

// One epoch of `loader` from `first_batch`, each row checked against `firsts`.
Epoch run_epoch(Loader* loader, int64_t epoch, const std::vector<float>& firsts, int64_t first_batch = 0) {
  Epoch out;
  const size_t decoded_before = chunks_decoded();
  loader->start_epoch(epoch, first_batch);
  while (Batch batch = loader->next()) {
    const auto* values = static_cast<const float*>(batch.data());
    for (int slot = 0; slot < batch.size(); ++slot) {
      const uint64_t row = batch.indices()[slot];
      out.order.push_back(row);
      EXPECT_EQ(values[slot * static_cast<int>(kCols)], firsts[row]) << "sample " << row;
    }
    out.most_kept = std::max(out.most_kept, shared_bands_bytes());
  }
  out.decoded = chunks_decoded() - decoded_before;
  return out;
}

bool is_permutation_of(std::vector<uint64_t> order, size_t n) {
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != i) return false;
  }
  return order.size() == n;
}

TEST(Hdf5BandGroups, TheFilesOfAPatternAreShuffledByGroupsOfTheirBandsDecodedOncePerEpoch) {
  const Shards shards;
  const auto source = std::shared_ptr<const Source>(open_source(shards.pattern));
  ASSERT_EQ(source->size(), 700u);
  std::vector<uint64_t> starts;  // each file's bands in turn
  append_even_bands(0, 230, 20, &starts);
  append_even_bands(230, 170, 30, &starts);
  append_even_bands(400, 300, 25, &starts);
  EXPECT_EQ(source->band_starts(), starts);
  const size_t band = source->band_bytes();
  ASSERT_EQ(band, 30 * kCols * sizeof(float)) << "the largest file's band";

  // Groups of 4 bands; with the 32 rows in flight (2 batches of 16) reaching a group of 4 bands
  // (the fewest rows of a band: 10, the first file's last) on either side, 4 + 2 x 4 kept (loader.h).
  const LoaderOptions options = small_loader(12 * band);
  auto loader = std::make_unique<Loader>(source, options);
  const SamplerOptions& sampler = loader->options().sampler;
  ASSERT_TRUE(sampler.band_starts) << "the pattern's rows go by band groups";
  EXPECT_EQ(*sampler.band_starts, starts);
  EXPECT_EQ(sampler.group_bands, 4u);

  std::vector<std::vector<uint64_t>> orders;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const Epoch e = run_epoch(loader.get(), epoch, shards.firsts);
    EXPECT_TRUE(is_permutation_of(e.order, 700)) << "epoch " << epoch;
    // Two chunks a band, each band once (after the first epoch, bands still kept are not decoded).
    if (epoch == 0) {
      EXPECT_EQ(e.decoded, 2 * shards.bands);
    }
    EXPECT_LE(e.decoded, 2 * shards.bands) << "epoch " << epoch;
    EXPECT_GT(e.most_kept, 0u);
    EXPECT_LE(e.most_kept, options.chunk_shuffle_bytes) << "the bound holds over the files together";
    orders.push_back(e.order);
  }
  EXPECT_NE(orders[0], orders[1]) << "set_epoch: each epoch its own order";

  // Resumed mid-epoch: the rest of the same order.
  const Epoch resumed = run_epoch(loader.get(), 1, shards.firsts, 10);
  EXPECT_EQ(resumed.order, std::vector<uint64_t>(orders[1].begin() + 10 * 16, orders[1].end()));

  // Every rank computes the same order and takes its share: disjoint, covering every row.
  SamplerOptions ranked = sampler;
  ranked.world_size = 2;
  std::vector<uint64_t> both;
  for (int rank = 0; rank < 2; ++rank) {
    ranked.rank = rank;
    const std::vector<uint64_t> shard = plan_epoch(700, 16, ranked, 1).indices;
    for (size_t k = 0; k < shard.size(); ++k) ASSERT_EQ(shard[k], orders[1][k * 2 + static_cast<size_t>(rank)]);
    both.insert(both.end(), shard.begin(), shard.end());
  }
  EXPECT_TRUE(is_permutation_of(both, 700)) << "the ranks' shares are disjoint and cover every row";
  loader.reset();
  EXPECT_EQ(shared_bands_bytes(), 0u) << "the bands go with the loader";
}

// val_split's training part keeps the split's rows (a random share of each band, in file order)
// and is shuffled by groups of the bands they lie in.
TEST(Hdf5BandGroups, AHeldOutPartIsShuffledByTheBandsItsRowsLieIn) {
  const Shards shards;
  const auto source = std::shared_ptr<const Source>(open_source(shards.pattern));
  const HeldOut parts = hold_out(source, 0.25, 3);
  const std::vector<uint64_t> starts = parts.train->band_starts();
  ASSERT_EQ(starts.size(), shards.bands) << "each band keeps some rows for training";
  const size_t band = parts.train->band_bytes();
  ASSERT_EQ(band, source->band_bytes());
  auto loader = std::make_unique<Loader>(parts.train, small_loader(40 * band));
  ASSERT_TRUE(loader->options().sampler.band_starts);
  const size_t decoded_before = chunks_decoded();
  loader->start_epoch(0);
  std::vector<uint64_t> order;
  while (Batch batch = loader->next()) order.insert(order.end(), batch.indices(), batch.indices() + batch.size());
  EXPECT_TRUE(is_permutation_of(order, parts.train->size()));
  EXPECT_EQ(chunks_decoded() - decoded_before, 2 * shards.bands);
}

// Groups of one band, fewer rows than the workers have in flight (3 workers filling 2 batches of
// 16: 32 rows, against bands of 20-30 rows): the cache keeps the bands the rows in flight reach, so each
// band is still decoded once, epoch after epoch, and no worker waits forever; a bound too small
// for them shuffles every row alike.
TEST(Hdf5BandGroups, GroupsSmallerThanTheRowsInFlightDecodeEachBandOnce) {
  const Shards shards;
  const auto source = std::shared_ptr<const Source>(open_source(shards.pattern));
  const size_t band = source->band_bytes();
  // Groups of 1 band keep 1 + 2 x 4 bands (the 32 rows in flight reach 4 groups of 10 rows or
  // more on either side of a group), groups of 2 keep 2 + 2 x 4 (loader.h).
  const LoaderOptions options = small_loader(9 * band);
  auto loader = std::make_unique<Loader>(source, options);
  ASSERT_TRUE(loader->options().sampler.band_starts);
  ASSERT_EQ(loader->options().sampler.group_bands, 1u);
  for (int64_t epoch = 0; epoch < 40; ++epoch) {
    const Epoch e = run_epoch(loader.get(), epoch, shards.firsts);
    ASSERT_TRUE(is_permutation_of(e.order, 700));
    if (epoch == 0) {
      EXPECT_EQ(e.decoded, 2 * shards.bands);
    }
    ASSERT_LE(e.decoded, 2 * shards.bands) << "epoch " << epoch;
    ASSERT_LE(e.most_kept, options.chunk_shuffle_bytes);
  }
  loader.reset();
  const auto too_small = std::make_unique<Loader>(source, small_loader(8 * band));
  EXPECT_FALSE(too_small->options().sampler.band_starts) << "every row shuffled alike";
}

// In file order, the workers split the rows of a band between them (batches of 16 across bands
// of 20-30 rows): they read it through the one cache, so it is decoded once, not by each.
TEST(Hdf5BandGroups, InFileOrderSeveralWorkersDecodeEachBandOnce) {
  const Shards shards;
  const auto source = std::shared_ptr<const Source>(open_source(shards.pattern));
  LoaderOptions options = small_loader(0);
  options.sampler.shuffle = false;
  auto loader = std::make_unique<Loader>(source, options);
  const Epoch e = run_epoch(loader.get(), 0, shards.firsts);
  std::vector<uint64_t> in_order(700);
  for (size_t i = 0; i < in_order.size(); ++i) in_order[i] = i;
  EXPECT_EQ(e.order, in_order);
  EXPECT_EQ(e.decoded, 2 * shards.bands);
  EXPECT_GT(e.most_kept, 0u);
  EXPECT_LE(e.most_kept, kInOrderCacheBytes) << "the most one file's reader asks for in order, for every file";
}

// A pass in order over a source that keeps bands for a shuffle (validation over a held-out part
// of the training file, while the training loader lives) keeps them: the room asked for is the
// larger of the two, not the pass's two bands.
TEST(Hdf5BandGroups, BandsKeptForAShuffleStayWhileAPassInOrderRuns) {
  TempDir dir;
  const std::string path = dir.str() + "/wide.h5";
  const hsize_t chunk_rows = 2304, cols = 1024;  // bands of 9 MiB: two make the room of a pass in order
  {
    const std::vector<float> x(4 * chunk_rows * cols, 1.0f);
    H5File f(path);
    const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    const std::vector<hsize_t> chunk{chunk_rows, cols};
    H5Pset_chunk(plist, 2, chunk.data());
    H5Pset_deflate(plist, 1);
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {4 * chunk_rows, cols}, x, plist);
    H5Pclose(plist);
    f.int64s("y", std::vector<int64_t>(4 * chunk_rows, 0));
  }
  const auto source = open_source(path);
  const size_t band = source->band_bytes();
  ASSERT_GT(2 * band, kInOrderCacheBytes);
  source->keep_bands(4);
  SampleData sample;
  for (size_t b = 0; b < 4; ++b) ASSERT_TRUE(source->read(b * chunk_rows, &sample).ok());
  EXPECT_EQ(shared_bands_bytes(), 4 * band);
  source->expect_reads(Source::ReadOrder::kInOrder);
  EXPECT_EQ(shared_bands_bytes(), 4 * band);
  source->keep_bands(0);
  EXPECT_EQ(shared_bands_bytes(), 2 * band) << "the pass in order's room: two bands";
}

}  // namespace
}  // namespace stoker::data
