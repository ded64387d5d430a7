#include "stoker/data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <set>

#include "stoker/core/error.h"

namespace stoker::data {
namespace {

TEST(SamplerTest, SequentialWithoutShuffle) {
  SamplerOptions options;
  options.shuffle = false;
  const EpochPlan plan = plan_epoch(10, 4, options, 0);
  EXPECT_EQ(plan.indices, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(plan.num_batches, 3);
  EXPECT_EQ(plan.batch_samples(0), 4);
  EXPECT_EQ(plan.batch_samples(2), 2);
}

TEST(SamplerTest, DropLastDropsTheShortBatch) {
  SamplerOptions options;
  options.drop_last = true;
  const EpochPlan plan = plan_epoch(10, 4, options, 0);
  EXPECT_EQ(plan.num_batches, 2);
  EXPECT_EQ(plan.indices.size(), 8u);
}

TEST(SamplerTest, ShuffleIsAPermutationThatDependsOnSeedAndEpoch) {
  SamplerOptions options;
  options.seed = 3;
  const EpochPlan a = plan_epoch(1000, 32, options, 0);
  const EpochPlan again = plan_epoch(1000, 32, options, 0);
  const EpochPlan next_epoch = plan_epoch(1000, 32, options, 1);
  options.seed = 4;
  const EpochPlan other_seed = plan_epoch(1000, 32, options, 0);
  EXPECT_EQ(a.indices, again.indices);
  EXPECT_NE(a.indices, next_epoch.indices);
  EXPECT_NE(a.indices, other_seed.indices);
  std::vector<uint64_t> sorted = a.indices;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
}

TEST(SamplerTest, RanksPartitionThePaddedEpoch) {
  SamplerOptions options;
  options.world_size = 3;
  std::multiset<uint64_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    options.rank = rank;
    const EpochPlan plan = plan_epoch(10, 2, options, 5);
    EXPECT_EQ(plan.indices.size(), 4u) << "every rank gets ceil(10/3) samples";
    seen.insert(plan.indices.begin(), plan.indices.end());
  }
  EXPECT_EQ(seen.size(), 12u);
  for (uint64_t i = 0; i < 10; ++i) EXPECT_GE(seen.count(i), 1u) << "sample " << i << " missing";
}

// torchvision's RASampler, worked by hand for 10 samples in order, 3 copies, 2 ranks: the list
// 0,0,0,1,1,1,...,9,9,9 dealt alternately, each rank keeping ceil(10 / 2) = 5. A copy's stream
// is its id + copy x 10.
TEST(SamplerTest, RepeatedAugmentationDealsCopiesInARow) {
  SamplerOptions options;
  options.shuffle = false;
  options.repetitions = 3;
  options.world_size = 2;
  const EpochPlan rank0 = plan_epoch(10, 2, options, 0);
  EXPECT_EQ(rank0.indices, (std::vector<uint64_t>{0, 0, 1, 2, 2}));
  EXPECT_EQ(rank0.streams, (std::vector<uint64_t>{0, 20, 11, 2, 22}));
  EXPECT_EQ(rank0.num_batches, 3);
  options.rank = 1;
  const EpochPlan rank1 = plan_epoch(10, 2, options, 0);
  EXPECT_EQ(rank1.indices, (std::vector<uint64_t>{0, 1, 1, 2, 3}));
  EXPECT_EQ(rank1.streams, (std::vector<uint64_t>{10, 1, 21, 12, 3}));
  EXPECT_EQ(rank1.stream(2), 21u);
  const EpochPlan plain = plan_epoch(10, 2, SamplerOptions{}, 0);
  EXPECT_TRUE(plain.streams.empty());
  EXPECT_EQ(plain.stream(4), plain.indices[4]);
}

// One process, 600 shuffled samples, 4 copies: floor(600 / 256) x 256 = 512 positions, 128
// distinct samples of the shuffled order, each 4 times in a row with streams id, id + n, ...
TEST(SamplerTest, RepeatedAugmentationKeepsTheEpochsLengthInWholeMultiplesOf256) {
  SamplerOptions options;
  options.seed = 9;
  const EpochPlan order = plan_epoch(600, 32, options, 2);
  options.repetitions = 4;
  const EpochPlan plan = plan_epoch(600, 32, options, 2);
  ASSERT_EQ(plan.indices.size(), 512u);
  ASSERT_EQ(plan.streams.size(), 512u);
  EXPECT_EQ(plan.num_batches, 16);
  std::set<uint64_t> distinct, streams;
  for (size_t k = 0; k < 512; ++k) {
    ASSERT_EQ(plan.indices[k], order.indices[k / 4]) << k;
    ASSERT_EQ(plan.streams[k], plan.indices[k] + (k % 4) * 600) << k;
    distinct.insert(plan.indices[k]);
    streams.insert(plan.streams[k]);
  }
  EXPECT_EQ(distinct.size(), 128u);
  EXPECT_EQ(streams.size(), 512u) << "every copy draws its own transform";
  options.drop_last = true;
  options.repetitions = 3;  // floor(600 / 256) x 256 = 512 again, 16 batches of 32
  const EpochPlan dropped = plan_epoch(600, 30, options, 2);
  EXPECT_EQ(dropped.indices.size(), 510u);
  EXPECT_EQ(dropped.streams.size(), 510u);
}

TEST(SamplerTest, BadArgumentsAreUsageErrors) {
  SamplerOptions options;
  EXPECT_THROW(plan_epoch(10, 0, options, 0), UsageError);
  options.world_size = 2;
  options.rank = 2;
  EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError);
  options.world_size = 0;
  options.rank = 0;
  EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError);
  options.world_size = 1;
  options.repetitions = 0;
  EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError);
}

// Bands of `band_rows` rows over `n` rows.
std::shared_ptr<const std::vector<uint64_t>> even_bands(uint64_t n, uint64_t band_rows) {
  auto starts = std::make_shared<std::vector<uint64_t>>();
  append_even_bands(0, n, band_rows, starts.get());
  return starts;
}

// The epoch's groups in order: the set of bands each holds, a group closing once every row of
// its bands came (rows of `band_rows`, `n` rows, the last band short).
std::vector<std::set<uint64_t>> groups_of(const std::vector<uint64_t>& order, uint64_t band_rows, uint64_t n) {
  std::vector<std::set<uint64_t>> groups(1);
  std::map<uint64_t, uint64_t> left;  // rows still to come of each band of the open group
  for (const uint64_t row : order) {
    const uint64_t band = row / band_rows;
    if (groups.back().insert(band).second) left[band] = std::min(n, (band + 1) * band_rows) - band * band_rows;
    if (--left[band] == 0) left.erase(band);
    if (left.empty()) groups.emplace_back();
  }
  groups.pop_back();
  return groups;
}

TEST(SamplerTest, BandGroupsVisitEveryRowAGroupOfBandsAtATime) {
  constexpr uint64_t kRows = 1000, kBandRows = 64, kGroup = 3;  // 16 bands, the last of 40 rows
  SamplerOptions options;
  options.seed = 7;
  options.band_starts = even_bands(kRows, kBandRows);
  options.group_bands = kGroup;
  const EpochPlan plan = plan_epoch(kRows, 32, options, 0);
  std::vector<uint64_t> sorted = plan.indices;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint64_t> all(kRows);
  std::iota(all.begin(), all.end(), uint64_t{0});
  EXPECT_EQ(sorted, all) << "a permutation of every row";

  const std::vector<std::set<uint64_t>> groups = groups_of(plan.indices, kBandRows, kRows);
  ASSERT_EQ(groups.size(), 6u) << "16 bands in groups of 3: 5 full and one of 1";
  std::set<uint64_t> bands;
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(groups[g].size(), g + 1 < groups.size() ? kGroup : 1u) << "group " << g;
    bands.insert(groups[g].begin(), groups[g].end());
  }
  EXPECT_EQ(bands.size(), 16u);
  std::vector<uint64_t> first_bands;  // the bands in the order the epoch first meets them
  for (const auto& group : groups) first_bands.insert(first_bands.end(), group.begin(), group.end());
  EXPECT_FALSE(std::is_sorted(first_bands.begin(), first_bands.end())) << "the bands are shuffled";

  // Within a group the rows are shuffled: the next row is no more often from the same band than
  // chance (1 in 3) allows, far from the 63 in 64 of rows read band after band.
  size_t same_band = 0, pairs = 0;
  for (size_t i = 0; i + 1 < 5 * kGroup * kBandRows; ++i, ++pairs) {
    same_band += plan.indices[i] / kBandRows == plan.indices[i + 1] / kBandRows;
  }
  EXPECT_LT(same_band, pairs / 2);
  EXPECT_FALSE(std::is_sorted(plan.indices.begin(), plan.indices.begin() + 64));

  const EpochPlan next = plan_epoch(kRows, 32, options, 1);
  EXPECT_NE(next.indices, plan.indices) << "each epoch its own order";
  EXPECT_NE(groups_of(next.indices, kBandRows, kRows), groups) << "and its own groups";
  options.band_starts = nullptr;
  EXPECT_NE(plan_epoch(kRows, 32, options, 0).indices, plan.indices) << "a full shuffle otherwise";
}

TEST(SamplerTest, BandGroupsAreShardedAsOnePermutation) {
  constexpr uint64_t kRows = 1000;
  SamplerOptions options;
  options.seed = 11;
  options.band_starts = even_bands(kRows, 50);
  options.group_bands = 4;
  const std::vector<uint64_t> whole = plan_epoch(kRows, 1, options, 2).indices;
  options.world_size = 3;
  std::multiset<uint64_t> seen;
  for (int rank = 0; rank < 3; ++rank) {
    options.rank = rank;
    const std::vector<uint64_t> shard = plan_epoch(kRows, 8, options, 2).indices;
    ASSERT_EQ(shard.size(), 334u) << "ceil(1000 / 3) on every rank";
    for (size_t k = 0; k < shard.size(); ++k) {
      ASSERT_EQ(shard[k], whole[(k * 3 + static_cast<size_t>(rank)) % kRows]) << "rank " << rank << ", " << k;
    }
    seen.insert(shard.begin(), shard.end());
  }
  EXPECT_EQ(seen.size(), 1002u);
  for (uint64_t i = 0; i < kRows; ++i) EXPECT_EQ(seen.count(i), i == whole[0] || i == whole[1] ? 2u : 1u) << i;
}

TEST(SamplerTest, BandsWithoutAGroupOrOutsideTheRowsAreAUsageError) {
  SamplerOptions options;
  options.band_starts = even_bands(10, 4);
  EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError);
  options.group_bands = 1;
  EXPECT_NO_THROW(plan_epoch(10, 1, options, 0));
  for (const std::vector<uint64_t>& bad : {std::vector<uint64_t>{1, 4}, {0, 4, 4}, {0, 6, 3}, {0, 10}}) {
    options.band_starts = std::make_shared<const std::vector<uint64_t>>(bad);
    EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError) << bad.back();
  }
}

// Bands of several files one after another (each file's own band length, its last band short):
// the groups are made of those bands, whatever their lengths.
TEST(SamplerTest, BandsOfSeveralLengthsAreGroupedAsGiven) {
  auto starts = std::make_shared<std::vector<uint64_t>>();
  append_even_bands(0, 230, 20, starts.get());
  append_even_bands(230, 170, 30, starts.get());
  append_even_bands(400, 300, 25, starts.get());
  ASSERT_EQ(starts->size(), 30u);
  SamplerOptions options;
  options.seed = 5;
  options.band_starts = starts;
  options.group_bands = 4;
  const std::vector<uint64_t> order = plan_epoch(700, 16, options, 0).indices;
  std::vector<uint64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint64_t> all(700);
  std::iota(all.begin(), all.end(), uint64_t{0});
  EXPECT_EQ(sorted, all) << "a permutation of every row";
  const auto band_of = [&](uint64_t row) {
    return static_cast<size_t>(std::upper_bound(starts->begin(), starts->end(), row) - starts->begin()) - 1;
  };
  // Walk the groups: each takes four bands (the last two), whole, before the next begins.
  size_t at = 0, groups = 0;
  std::set<size_t> seen;
  while (at < order.size()) {
    std::set<size_t> group;
    size_t rows = 0, expected = 0;
    while (at < order.size() && (group.size() < 4 || rows < expected)) {
      const size_t band = band_of(order[at]);
      if (group.insert(band).second) {
        ASSERT_TRUE(seen.insert(band).second) << "band " << band << " in two groups";
        expected += (band + 1 < starts->size() ? (*starts)[band + 1] : 700) - (*starts)[band];
      }
      ++rows;
      ++at;
    }
    EXPECT_EQ(rows, expected) << "group " << groups;
    ++groups;
  }
  EXPECT_EQ(groups, 8u) << "30 bands in groups of 4";
  EXPECT_NE(plan_epoch(700, 16, options, 1).indices, order);
}

}  // namespace
}  // namespace stoker::data
