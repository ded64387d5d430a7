// start_epoch's on_order: the epoch's own plan from the first sample no worker has claimed,
// shown before the workers claim another (stoker's dataset_processes begin their pass there).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include "stoker/data/loader.h"
#include "stoker/data/sampler.h"
#include "support/counting_source.h"

namespace stoker::data {
namespace {
namespace on_order {

using stoker::testing::CountingSource;
using stoker::testing::kNoLimit;

// 40 samples in 10 batches of 4, shuffled.
LoaderOptions options(int workers, bool run_ahead = false) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = 11;
  o.sampler.shuffle = true;
  o.run_ahead = run_ahead;
  o.transform = parse_transforms("RandomCrop(6), ToUint8");
  return o;
}

std::vector<uint64_t> plan(const LoaderOptions& o, int64_t epoch) {
  return plan_epoch(40, o.batch_size, o.sampler, epoch).indices;
}

std::vector<uint64_t> ids_of(Loader& loader) {
  std::vector<uint64_t> ids;
  while (Batch batch = loader.next()) ids.insert(ids.end(), batch.indices(), batch.indices() + batch.size());
  return ids;
}

// A listener that keeps what it was shown.
Loader::OrderListener keep(std::vector<uint64_t>* shown) {
  return [shown](std::span<const uint64_t> unclaimed) { shown->assign(unclaimed.begin(), unclaimed.end()); };
}

TEST(LoaderOnOrderTest, ShowsTheEpochsPlanFromTheFirstBatchTheWorkersRead) {
  const LoaderOptions o = options(2);
  Loader loader(std::make_shared<CountingSource>(40), o);
  std::vector<uint64_t> shown;
  loader.start_epoch(2, 0, keep(&shown));
  EXPECT_EQ(shown, plan(o, 2));
  EXPECT_EQ(ids_of(loader), shown);

  // Resumed at batch 3: from its 13th sample.
  loader.start_epoch(4, 3, keep(&shown));
  const std::vector<uint64_t> epoch4 = plan(o, 4);
  EXPECT_EQ(shown, std::vector<uint64_t>(epoch4.begin() + 12, epoch4.end()));
  EXPECT_EQ(ids_of(loader), shown);

  // A given order of 10 ids under drop_last: the 8 of its whole batches.
  LoaderOptions dropping = o;
  dropping.sampler.drop_last = true;
  Loader given(std::make_shared<CountingSource>(40), dropping);
  const std::vector<uint64_t> order{9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  given.start_epoch(0, order, 0, keep(&shown));
  EXPECT_EQ(shown, std::vector<uint64_t>(order.begin(), order.begin() + 8));
  EXPECT_EQ(ids_of(given), shown);
  given.start_epoch(1, order, 1, keep(&shown));
  EXPECT_EQ(shown, std::vector<uint64_t>(order.begin() + 4, order.begin() + 8));
}

TEST(LoaderOnOrderTest, TheWorkersClaimNothingUntilItReturns) {
  const auto source = std::make_shared<CountingSource>(40);
  Loader loader(source, options(3));
  uint64_t during = kNoLimit;
  loader.start_epoch(0, 0, [&](std::span<const uint64_t>) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // time for workers that were free to read
    during = source->reads();
  });
  EXPECT_EQ(during, 0u);
  EXPECT_EQ(ids_of(loader).size(), 40u);
}

TEST(LoaderOnOrderTest, AfterARunAheadItShowsWhatTheWorkersLeft) {
  const auto source = std::make_shared<CountingSource>(40);
  const LoaderOptions o = options(1, /*run_ahead=*/true);
  // 3 buffers: epoch 1's first 3 batches (12 samples) are all the workers can claim ahead.
  source->limit_reads(40 + 12);
  Loader loader(source, o);
  loader.start_epoch(0);
  ids_of(loader);
  ASSERT_TRUE(source->wait_for_reads(40 + 12)) << "the workers did not run ahead into epoch 1";
  source->limit_reads(kNoLimit);
  std::vector<uint64_t> shown;
  loader.start_epoch(1, 0, keep(&shown));
  const std::vector<uint64_t> epoch1 = plan(o, 1);
  EXPECT_EQ(shown, std::vector<uint64_t>(epoch1.begin() + 12, epoch1.end()));
  EXPECT_EQ(ids_of(loader), epoch1) << "the batches run ahead are kept";
}

TEST(LoaderOnOrderTest, WhatItThrowsStartEpochThrowsAndTheEpochGoesOn) {
  Loader loader(std::make_shared<CountingSource>(40), options(2));
  EXPECT_THROW(loader.start_epoch(0, 0, [](std::span<const uint64_t>) { throw std::runtime_error("no processes"); }),
               std::runtime_error);
  EXPECT_EQ(ids_of(loader), plan(options(2), 0)) << "the workers were let go";
}

}  // namespace on_order
}  // namespace
}  // namespace stoker::data
