#include "stoker/data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace
}  // namespace stoker::data
