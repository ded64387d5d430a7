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

TEST(SamplerTest, BadArgumentsAreUsageErrors) {
  SamplerOptions options;
  EXPECT_THROW(plan_epoch(10, 0, options, 0), UsageError);
  options.world_size = 2;
  options.rank = 2;
  EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError);
  options.world_size = 0;
  options.rank = 0;
  EXPECT_THROW(plan_epoch(10, 1, options, 0), UsageError);
}

}  // namespace
}  // namespace stoker::data
