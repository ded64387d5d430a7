// Loader::reseed: epochs started after it draw with the new seed, counted from its epoch, as a
// loader made with that seed draws its first epochs; the loader's epoch numbers stay; nothing
// the workers ran ahead with the old seed reaches the consumer.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "support/counting_source.h"

namespace stoker::data {
namespace {
namespace reseed {

using stoker::testing::CountingSource;

// 40 samples in 10 batches of 4, shuffled and augmented so that seeds and epochs differ.
LoaderOptions options(uint64_t seed, int workers = 2) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = seed;
  o.max_bad_fraction = 0.05;
  o.transform = parse_transforms("RandomCrop(6), RandomHorizontalFlip(0.5), Grayscale, ToUint8");
  return o;
}

// The epoch's batches (pixels, labels, dataset indices), each released before the next.
std::vector<uint8_t> drain(Loader& loader) {
  std::vector<uint8_t> out;
  while (Batch batch = loader.next()) {
    const auto* p = static_cast<const uint8_t*>(batch.data());
    out.insert(out.end(), p, p + batch.bytes());
    const auto* l = reinterpret_cast<const uint8_t*>(batch.labels());
    out.insert(out.end(), l, l + sizeof(int64_t) * static_cast<size_t>(batch.size()));
    const auto* i = reinterpret_cast<const uint8_t*>(batch.indices());
    out.insert(out.end(), i, i + sizeof(uint64_t) * static_cast<size_t>(batch.size()));
  }
  return out;
}

// Epoch `epoch` of a fresh loader made with `seed`, which ran ahead into nothing.
std::vector<uint8_t> fresh(uint64_t seed, int64_t epoch, const std::vector<uint64_t>* order = nullptr) {
  LoaderOptions o = options(seed, 1);
  o.run_ahead = false;
  Loader loader(std::make_shared<CountingSource>(40), o);
  if (order != nullptr) {
    loader.start_epoch(epoch, *order);
  } else {
    loader.start_epoch(epoch);
  }
  return drain(loader);
}

TEST(LoaderReseedTest, EpochsAfterAReseedDrawAsALoaderMadeWithItsSeedAndKeepTheirNumbers) {
  Loader loader(std::make_shared<CountingSource>(40), options(7));
  EXPECT_EQ(loader.seed(), 7u);
  EXPECT_EQ(loader.seed_epoch(), 0);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    loader.start_epoch(epoch);
    EXPECT_EQ(drain(loader), fresh(7, epoch)) << "epoch " << epoch;
  }
  loader.reseed(11, 2);
  EXPECT_EQ(loader.seed(), 11u);
  EXPECT_EQ(loader.seed_epoch(), 2);
  EXPECT_EQ(loader.draws_epoch(3), 1);
  for (int64_t epoch = 2; epoch < 4; ++epoch) {
    loader.start_epoch(epoch);
    const LoaderState state = loader.state();
    EXPECT_EQ(state.seed, 11u);
    EXPECT_EQ(state.epoch, epoch);
    Batch first = loader.next();
    ASSERT_TRUE(first);
    EXPECT_EQ(first.epoch(), epoch);
    first.release();
    EXPECT_EQ(loader.epoch_stats().epoch, epoch);
    loader.start_epoch(epoch);  // again from its start, to compare the whole epoch
    EXPECT_EQ(drain(loader), fresh(11, epoch - 2)) << "epoch " << epoch;
  }
}

TEST(LoaderReseedTest, ARunAheadBegunWithTheOldSeedIsDrawnAgainWithTheNewOne) {
  for (int workers : {1, 3}) {
    SCOPED_TRACE(std::to_string(workers) + " workers");
    const auto source = std::make_shared<CountingSource>(40);
    Loader loader(source, options(7, workers));
    loader.start_epoch(0);
    EXPECT_EQ(drain(loader), fresh(7, 0));
    // Every sample of epoch 0 was read: the workers have run ahead into epoch 1 with seed 7.
    ASSERT_TRUE(source->wait_for_reads(40 + 4));
    loader.reseed(11, 1);
    loader.start_epoch(1);
    EXPECT_EQ(drain(loader), fresh(11, 0));
    loader.start_epoch(2);  // the run ahead after the reseed draws with it
    EXPECT_EQ(drain(loader), fresh(11, 1));
  }
}

TEST(LoaderReseedTest, TheEpochInProgressKeepsItsDraws) {
  Loader loader(std::make_shared<CountingSource>(40), options(7));
  loader.start_epoch(0);
  std::vector<uint8_t> epoch0;
  {
    Batch first = loader.next();
    ASSERT_TRUE(first);
    const auto* p = static_cast<const uint8_t*>(first.data());
    epoch0.assign(p, p + first.bytes());
  }
  loader.reseed(11, 1);
  EXPECT_EQ(loader.state().seed, 7u);  // the epoch in progress's
  std::vector<uint8_t> rest = drain(loader);
  loader.start_epoch(0);
  Batch again = loader.next();  // epoch 0, started after the reseed, draws with seed 11
  ASSERT_TRUE(again);
  EXPECT_NE(std::vector<uint8_t>(static_cast<const uint8_t*>(again.data()),
                                 static_cast<const uint8_t*>(again.data()) + again.bytes()),
            epoch0);
  again.release();
  EXPECT_FALSE(rest.empty());
  loader.start_epoch(1);
  EXPECT_EQ(drain(loader), fresh(11, 0));
}

TEST(LoaderReseedTest, AGivenOrderTakesTheNewDraws) {
  std::vector<uint64_t> order;
  for (uint64_t i = 0; i < 40; ++i) order.push_back((i * 13) % 40);
  Loader loader(std::make_shared<CountingSource>(40), options(7));
  loader.reseed(11, 5);
  loader.start_epoch(6, order);
  EXPECT_EQ(drain(loader), fresh(11, 1, &order));
}

TEST(LoaderReseedTest, AFailureNamesTheLoadersEpoch) {
  LoaderOptions o = options(7);
  o.max_bad_fraction = 0.0;
  Loader loader(std::make_shared<CountingSource>(40, 5, 0), o);
  loader.reseed(11, 3);
  loader.start_epoch(4);
  try {
    drain(loader);
    FAIL() << "no DataError";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("in epoch 4 "), std::string::npos) << message;
  }
}

TEST(LoaderReseedTest, ANegativeSeedEpochIsRefused) {
  Loader loader(std::make_shared<CountingSource>(40), options(7));
  EXPECT_THROW(loader.reseed(11, -1), UsageError);
  EXPECT_EQ(loader.seed(), 7u);
}

}  // namespace reseed
}  // namespace
}  // namespace stoker::data
