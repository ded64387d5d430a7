// Loader::reseed: epochs started after it draw with the new seed, counted from its epoch, as a
// loader made with that seed draws its first epochs; the loader's epoch numbers stay; nothing
// the workers ran ahead with the old seed reaches the consumer.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "data/pipeline/loader_testing.h"
#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "support/counting_source.h"

namespace stoker::data {
namespace {
namespace reseed {

using stoker::testing::CountingSource;
using stoker::testing::kNoLimit;

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

// The epoch's batches (pixels, labels, dataset indices), each released before the next. With
// `seconds`, a batch not ready after that long ends it, as a failure (a read the test holds back).
std::vector<uint8_t> drain(Loader& loader, double seconds = 0) {
  std::vector<uint8_t> out;
  for (;;) {
    Batch batch;
    if (seconds <= 0) {
      batch = loader.next();
    } else if (!loader.next_within(seconds, &batch)) {
      ADD_FAILURE() << "batch " << loader.state().next_batch << " not ready: it needs a read held back";
      return out;
    }
    if (!batch) break;
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

TEST(LoaderReseedTest, ARunAheadWhoseDrawsDoNotChangeIsKept) {
  const auto source = std::make_shared<CountingSource>(40);
  source->limit_reads(40 + 12);          // epoch 1, and the three batches (prefetch) run ahead into epoch 2
  Loader loader(source, options(7, 1));  // one worker reads in claim order: the limit holds none of epoch 1
  const struct Unlimited {
    CountingSource& source;
    ~Unlimited() { source.limit_reads(kNoLimit); }  // before the loader joins its workers
  } unlimited{*source};
  loader.reseed(11, 1);
  loader.start_epoch(1);
  EXPECT_EQ(drain(loader), fresh(11, 0));
  ASSERT_TRUE(source->wait_for_reads(40 + 12));
  loader.reseed(11, 1);     // the same draws: what ran ahead stays
  source->limit_reads(80);  // epoch 2's 28 other samples, and no sample read again
  loader.start_epoch(2);
  EXPECT_EQ(drain(loader, 20.0), fresh(11, 1));
  EXPECT_EQ(source->reads(), 80u);
  EXPECT_EQ(loader.stage_times().samples, 80u);
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

TEST(LoaderReseedTest, AStateTakenAfterAReseedResumesAFreshLoaderOnItsDraws) {
  Loader loader(std::make_shared<CountingSource>(40), options(7));
  loader.reseed(11, 2);
  loader.start_epoch(3);
  for (int b = 0; b < 4; ++b) ASSERT_TRUE(loader.next());
  const LoaderState state = loader.state();
  EXPECT_EQ(state.seed, 11u);
  EXPECT_EQ(state.epoch, 3);
  EXPECT_EQ(state.next_batch, 4);
  EXPECT_EQ(state.seed_epoch, 2);
  const std::vector<uint8_t> rest = drain(loader);
  ASSERT_FALSE(rest.empty());

  Loader resumed(std::make_shared<CountingSource>(40), options(7));  // made with another seed, not reseeded
  resumed.resume(state);
  EXPECT_EQ(resumed.seed(), 11u);
  EXPECT_EQ(resumed.seed_epoch(), 2);
  EXPECT_EQ(drain(resumed), rest);
  EXPECT_EQ(resumed.state().epoch, 3);
}

TEST(LoaderReseedTest, AStateNamesTheSeedEpochOfItsEpochsDraws) {
  Loader loader(std::make_shared<CountingSource>(40), options(7));
  EXPECT_EQ(loader.state().seed_epoch, 0);
  loader.reseed(11, 5);
  EXPECT_EQ(loader.state().seed_epoch, 5);  // before the first epoch: reseed()'s
  loader.start_epoch(2);                    // set back before the seed's first epoch: its draws wrap
  EXPECT_EQ(loader.draws_epoch(2), 2 - 5 + Loader::kDrawEpochs);
  EXPECT_EQ(loader.state().seed_epoch, 5);
  loader.reseed(13, 1);
  EXPECT_EQ(loader.state().seed_epoch, 5);  // the epoch in progress keeps its draws
  EXPECT_EQ(loader.state().seed, 11u);
}

// The race Loader::reseed closed: while it waits for the sample being written into the run ahead
// it drops, an idle worker must not plan and install another run ahead over it (that lost the
// dropped run's buffers, and the consumer was later told it held every buffer). Forced here: a
// worker is held in its read of the run ahead while reseed waits for it, and a buffer comes free
// meanwhile, waking the other worker.
TEST(LoaderReseedTest, AWorkerWokenWhileReseedWaitsBeginsNoRunAheadOverTheDroppedOne) {
  LoaderOptions o = options(7);
  o.batch_size = 1;
  o.prefetch = 2;
  const auto source = std::make_shared<CountingSource>(2);
  source->limit_reads(2);  // epoch 0's two samples; the run ahead's reads wait
  auto owner = std::make_unique<Loader>(source, o);
  Loader& loader = *owner;
  const auto idle = std::make_shared<std::atomic<int>>(0);  // also for a loader left below
  LoaderTesting::on_worker_idle(loader, [idle] { ++*idle; });
  loader.start_epoch(0);
  Batch first = loader.next();
  Batch second = loader.next();
  ASSERT_TRUE(first && second);  // both buffers held: the run ahead into epoch 1 waits for one
  first.release();
  ASSERT_TRUE(source->wait_for_waiting(1));  // a worker holds epoch 1's first sample, in its read

  std::thread reseeding([&] { loader.reseed(11, 1); });    // drops the run ahead: waits for that read
  while (loader.seed() != 11u) std::this_thread::yield();  // set under the lock reseed waits with
  const int idle_before = idle->load();
  second.release();  // wakes the other worker, a buffer free
  // It goes back to waiting, or (the race) plans epoch 1 again and reads into the free buffer.
  while (idle->load() == idle_before && source->waiting() < 2) std::this_thread::yield();
  const bool raced = source->waiting() > 1;
  source->limit_reads(kNoLimit);
  if (raced) {  // the runs' counts are then wrong, and reseed may wait forever: left, not joined
    reseeding.detach();
    static_cast<void>(owner.release());
    FAIL() << "a worker began a run ahead while reseed waited for the dropped one";
  }
  reseeding.join();

  // Both buffers came back: epoch 1 holds both batches at once, drawn with the new seed.
  LoaderOptions reference_options = o;
  reference_options.sampler.seed = 11;
  reference_options.run_ahead = false;
  Loader reference(std::make_shared<CountingSource>(2), reference_options);
  reference.start_epoch(0);
  loader.start_epoch(1);
  for (int b = 0; b < 2; ++b) {
    Batch expected = reference.next();
    Batch got;
    ASSERT_NO_THROW(got = loader.next()) << "batch " << b;
    ASSERT_TRUE(got && expected);
    EXPECT_EQ(got.indices()[0], expected.indices()[0]) << "batch " << b;
    EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.bytes())) << "batch " << b;
    (b == 0 ? first : second) = std::move(got);  // held: the second needs the other buffer
  }
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
