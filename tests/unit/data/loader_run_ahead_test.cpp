// Loader across an epoch's end: workers run ahead into epoch e + 1, and start_epoch(e + 1)
// keeps those batches. Batches, statistics, failures and resume points stay those of a loader
// that starts every epoch from nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "stoker/data/sampler.h"
#include "support/counting_source.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {
namespace run_ahead {

using stoker::testing::CountingSource;
using stoker::testing::kNoLimit;

// 40 samples in 10 batches of 4, augmented so that epochs differ.
LoaderOptions options(int workers, bool shuffle = true) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = 7;
  o.sampler.shuffle = shuffle;
  o.max_bad_fraction = 0.05;
  o.transform = parse_transforms("RandomCrop(6), RandomHorizontalFlip(0.5), Grayscale, ToUint8");
  return o;
}

void append(std::vector<uint8_t>& out, const Batch& batch) {
  const auto* p = static_cast<const uint8_t*>(batch.data());
  out.insert(out.end(), p, p + batch.bytes());
  const auto* l = reinterpret_cast<const uint8_t*>(batch.labels());
  out.insert(out.end(), l, l + sizeof(int64_t) * static_cast<size_t>(batch.size()));
}

// The batches next() gives until the end of the epoch, each released before the next.
std::vector<uint8_t> drain(Loader& loader) {
  std::vector<uint8_t> out;
  while (Batch batch = loader.next()) append(out, batch);
  return out;
}

// Epoch `epoch` from `first_batch` as a fresh loader, which has run ahead into nothing, makes it.
std::vector<uint8_t> fresh(std::shared_ptr<const Source> source, LoaderOptions o, int64_t epoch,
                           int64_t first_batch = 0) {
  o.run_ahead = false;
  Loader loader(std::move(source), o);
  loader.start_epoch(epoch, first_batch);
  return drain(loader);
}

TEST(LoaderRunAheadTest, EpochsInARowEqualAFreshLoadersForAnyWorkerCount) {
  // Sample 5 is bad from epoch 1 on: met ahead, it belongs to epoch 1, not epoch 0.
  const auto clean = std::make_shared<CountingSource>(40);
  const auto always_bad = std::make_shared<CountingSource>(40, 5, 0);
  for (bool shuffle : {false, true}) {
    for (int workers : {1, 2, 4}) {
      SCOPED_TRACE(std::to_string(workers) + " workers, shuffle " + (shuffle ? "on" : "off"));
      const LoaderOptions o = options(workers, shuffle);
      const auto source = std::make_shared<CountingSource>(40, 5, 1);
      Loader loader(source, o);
      for (int64_t epoch = 0; epoch < 4; ++epoch) {
        loader.start_epoch(epoch);
        EXPECT_EQ(drain(loader), fresh(epoch == 0 ? clean : always_bad, o, epoch)) << "epoch " << epoch;
        if (epoch == 0 && !shuffle) {
          // Unshuffled, sample 5 is in epoch 1's second batch: wait until workers met it ahead.
          ASSERT_TRUE(source->wait_for_reads(40 + 8 + 1));
        }
        const EpochStats stats = loader.epoch_stats();
        EXPECT_EQ(stats.epoch, epoch);
        EXPECT_EQ(stats.samples, 40u);
        EXPECT_EQ(stats.bad, epoch == 0 ? 0u : 1u) << "epoch " << epoch;
        if (epoch > 0 && stats.bad_samples.size() == 1) {
          EXPECT_EQ(stats.bad_samples[0].name, "sample-5");
        }
        EXPECT_EQ(loader.state().epoch, epoch) << "the consumer's position, not the workers'";
        EXPECT_EQ(loader.state().next_batch, 10);
      }
    }
  }
}

TEST(LoaderRunAheadTest, EachRankOfAShardedRunGetsItsOwnNextEpoch) {
  const auto source = std::make_shared<CountingSource>(40);
  for (int rank : {0, 1}) {
    LoaderOptions o = options(2);
    o.sampler.rank = rank;
    o.sampler.world_size = 2;
    Loader loader(source, o);
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      loader.start_epoch(epoch);
      EXPECT_EQ(drain(loader), fresh(source, o, epoch)) << "rank " << rank << ", epoch " << epoch;
    }
  }
}

TEST(LoaderRunAheadTest, TheNextEpochsFirstBatchesAreMadeBeforeItStarts) {
  const auto source = std::make_shared<CountingSource>(40);
  // One worker reads in claim order, so the limit cannot hold a read of epoch 0.
  const LoaderOptions o = options(1);
  // The prefetch bound: 3 buffers, so 3 batches (12 samples) of epoch 1 at most, and no read
  // beyond them is possible at all.
  source->limit_reads(40 + 12);
  Loader loader(source, o);
  loader.start_epoch(0);
  const std::vector<uint8_t> epoch0 = drain(loader);
  ASSERT_TRUE(source->wait_for_reads(40 + 12)) << "the workers did not run ahead into epoch 1";
  EXPECT_EQ(loader.state().epoch, 0);
  EXPECT_EQ(loader.state().next_batch, 10);

  // With every further read held, epoch 1's first three batches still come.
  loader.start_epoch(1);
  std::vector<uint8_t> epoch1;
  std::vector<Batch> held;
  for (int b = 0; b < 3; ++b) {
    held.push_back(loader.next());
    ASSERT_TRUE(held.back());
    EXPECT_EQ(held.back().epoch(), 1);
    EXPECT_EQ(held.back().index(), b);
    append(epoch1, held.back());
  }
  EXPECT_EQ(source->reads(), 40u + 12u);
  source->limit_reads(kNoLimit);
  held.clear();
  const std::vector<uint8_t> rest = drain(loader);
  epoch1.insert(epoch1.end(), rest.begin(), rest.end());
  EXPECT_EQ(epoch0, fresh(source, o, 0));
  EXPECT_EQ(epoch1, fresh(source, o, 1));
}

TEST(LoaderRunAheadTest, AnotherEpochOrAResumeAfterRunningAheadGetsItsOwnBatches) {
  const auto source = std::make_shared<CountingSource>(40);
  const LoaderOptions o = options(3);
  Loader loader(source, o);
  loader.start_epoch(0);
  drain(loader);
  ASSERT_TRUE(source->wait_for_reads(40 + 1));  // epoch 1 begun
  loader.start_epoch(5);
  EXPECT_EQ(drain(loader), fresh(source, o, 5));

  // Ran ahead into epoch 6; resumed at its batch 3 instead.
  loader.resume({o.sampler.seed, 6, 3});
  EXPECT_EQ(loader.state().next_batch, 3);
  EXPECT_EQ(drain(loader), fresh(source, o, 6, 3));
  // After a resume the run ahead goes on: epoch 7 from its start.
  loader.start_epoch(7);
  EXPECT_EQ(drain(loader), fresh(source, o, 7));
  // The same epoch again, and a resume at the very end (nothing left but the run ahead).
  loader.start_epoch(7);
  EXPECT_EQ(drain(loader), fresh(source, o, 7));
  loader.start_epoch(8, 10);
  EXPECT_FALSE(loader.next());
  loader.start_epoch(9);
  EXPECT_EQ(drain(loader), fresh(source, o, 9));
}

TEST(LoaderRunAheadTest, AFailureAheadSurfacesOnlyInItsOwnEpoch) {
  // Sample 5 (unshuffled: epoch 1's second batch) fails from its second read on.
  const auto source = std::make_shared<CountingSource>(40, 5, 1);
  LoaderOptions o = options(2, /*shuffle=*/false);
  o.on_error = OnError::kFail;
  Loader loader(source, o);
  loader.start_epoch(0);
  std::vector<uint8_t> epoch0;
  for (int b = 0; b < 9; ++b) append(epoch0, loader.next());
  // Batch 9 is in flight and 2 buffers are free: epoch 1's batches 0 and 1, each one worker's
  // claim, so once all 8 are read, sample 5 was read and found bad before 6 and 7.
  ASSERT_TRUE(source->wait_for_reads(40 + 8));
  const std::vector<uint8_t> last = drain(loader);  // epoch 0 ends without an error
  epoch0.insert(epoch0.end(), last.begin(), last.end());
  EXPECT_EQ(epoch0, fresh(std::make_shared<CountingSource>(40), o, 0));
  EXPECT_EQ(loader.epoch_stats().bad, 0u);
  EXPECT_FALSE(loader.next()) << "the end of epoch 0 stays the end";

  loader.start_epoch(1);
  EXPECT_NE(stoker::testing::error_text<DataError>([&] { drain(loader); }).find("bad sample sample-5: unreadable"),
            std::string::npos);
  EXPECT_EQ(loader.epoch_stats().epoch, 1);
  EXPECT_EQ(loader.epoch_stats().bad, 1u);
  // A new epoch clears it, as any failure.
  loader.start_epoch(2, 2);
  int batches = 0;
  while (loader.next()) ++batches;
  EXPECT_EQ(batches, 8);
}

TEST(LoaderRunAheadTest, AWorkerExceptionAheadSurfacesOnlyInItsOwnEpoch) {
  class Throwing final : public Source {
   public:
    explicit Throwing(std::shared_ptr<CountingSource> inner) : inner_(std::move(inner)) {}
    size_t size() const override { return inner_->size(); }
    std::string name(size_t i) const override { return inner_->name(i); }
    std::string describe() const override { return "throwing"; }
    TargetKind target_kind() const override { return TargetKind::kClass; }
    const std::vector<std::string>& class_names() const override { return inner_->class_names(); }
    int64_t label(size_t i) const override { return inner_->label(i); }
    void targets(size_t i, float* out) const override { inner_->targets(i, out); }
    void fixed_shape(int* w, int* h, int* c) const override { inner_->fixed_shape(w, h, c); }
    Status read(size_t i, SampleData* out) const override {
      if (!inner_->read(i, out).ok()) throw std::runtime_error("disk on fire");
      return Status::ok_status();
    }

   private:
    std::shared_ptr<CountingSource> inner_;
  };
  const auto counting = std::make_shared<CountingSource>(40, 0, 1);  // sample 0 throws from epoch 1 on
  Loader loader(std::make_shared<Throwing>(counting), options(2, /*shuffle=*/false));
  loader.start_epoch(0);
  drain(loader);
  ASSERT_TRUE(counting->wait_for_reads(40 + 1));
  EXPECT_FALSE(loader.next());
  loader.start_epoch(1);
  EXPECT_NE(
      stoker::testing::error_text<DataError>([&] { drain(loader); }).find("worker failed on sample-0: disk on fire"),
      std::string::npos);
}

TEST(LoaderRunAheadTest, TuningWorkersAndPrefetchWhileRunningAheadKeepsTheBatches) {
  const auto source = std::make_shared<CountingSource>(40);
  const LoaderOptions o = options(2);
  Loader loader(source, o);
  loader.start_epoch(0);
  drain(loader);
  ASSERT_TRUE(source->wait_for_reads(40 + 4));
  loader.set_prefetch(6);
  loader.set_workers(4);
  loader.start_epoch(1);
  std::vector<uint8_t> got;
  int b = 0;
  while (Batch batch = loader.next()) {
    append(got, batch);
    loader.set_workers(1 + b++ % 3);
  }
  EXPECT_EQ(got, fresh(source, o, 1));
  EXPECT_EQ(loader.prefetch(), 6);
  loader.start_epoch(2);
  EXPECT_EQ(drain(loader), fresh(source, o, 2));
}

TEST(LoaderRunAheadTest, OffItReadsNothingBetweenEpochs) {
  const auto source = std::make_shared<CountingSource>(40);
  LoaderOptions o = options(2);
  o.run_ahead = false;
  Loader loader(source, o);
  loader.start_epoch(0);
  drain(loader);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(source->reads(), 40u);
}

TEST(LoaderRunAheadTest, DestroyingTheLoaderWhileItRunsAheadDoesNotHang) {
  for (int workers : {1, 4}) {
    const auto source = std::make_shared<CountingSource>(40);
    Batch kept;
    {
      Loader loader(source, options(workers));
      loader.start_epoch(0);
      for (int b = 0; b < 9; ++b) kept = loader.next();
      ASSERT_TRUE(kept);
      ASSERT_TRUE(source->wait_for_reads(40 + 1));
      // Every buffer is held or filled ahead and a worker waits for one, or is mid-read.
    }
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept.index(), 8);
  }
  // Stopped while the worker is held inside a read (one worker: the limit cannot hold a read of
  // epoch 0): the destructor waits for that sample only.
  const auto held = std::make_shared<CountingSource>(40);
  held->limit_reads(40 + 2);
  std::thread release;
  {
    Loader loader(held, options(1));
    loader.start_epoch(0);
    drain(loader);
    ASSERT_TRUE(held->wait_for_reads(40 + 2));
    release = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      held->limit_reads(kNoLimit);
    });
  }
  release.join();
}

// A CountingSource whose owner changes its size between epochs, as a Python Dataset's len().
class ResizedSource final : public Source {
 public:
  explicit ResizedSource(size_t size) : inner_(1 << 10), size_(size) {}
  void resize(size_t size) { size_.store(size); }
  size_t size() const override { return size_.load(); }
  std::string name(size_t i) const override { return inner_.name(i); }
  std::string describe() const override { return "resized"; }
  TargetKind target_kind() const override { return inner_.target_kind(); }
  const std::vector<std::string>& class_names() const override { return inner_.class_names(); }
  int64_t label(size_t i) const override { return inner_.label(i); }
  void targets(size_t i, float* out) const override { inner_.targets(i, out); }
  void fixed_shape(int* w, int* h, int* c) const override { inner_.fixed_shape(w, h, c); }
  Status read(size_t i, SampleData* out) const override { return inner_.read(i, out); }

 private:
  CountingSource inner_;
  std::atomic<size_t> size_;
};

TEST(LoaderRunAheadTest, AnEpochIsPlannedForTheSizeItsSourceHasWhenItStarts) {
  for (const int world : {1, 2}) {
    const auto source = std::make_shared<ResizedSource>(10);
    LoaderOptions o = options(2);
    o.sampler.world_size = world;
    Loader loader(source, o);
    const std::vector<size_t> sizes{10, 14, 5, 5};  // grown, shrunk, kept: the last keeps what ran ahead
    for (int64_t epoch = 0; epoch < static_cast<int64_t>(sizes.size()); ++epoch) {
      const size_t size = sizes[static_cast<size_t>(epoch)];
      source->resize(size);  // after the last epoch's batches: the workers ran ahead for the old size
      loader.start_epoch(epoch);
      const EpochPlan plan = plan_epoch(size, o.batch_size, o.sampler, epoch);
      EXPECT_EQ(loader.batches_per_epoch(), plan.num_batches) << "world " << world << ", epoch " << epoch;
      EXPECT_EQ(loader.samples_per_epoch(), plan.indices.size()) << "world " << world << ", epoch " << epoch;
      std::vector<uint64_t> ids;
      while (Batch batch = loader.next()) ids.insert(ids.end(), batch.indices(), batch.indices() + batch.size());
      EXPECT_EQ(ids, plan.indices) << "world " << world << ", epoch " << epoch;
    }
  }
}

}  // namespace run_ahead
}  // namespace
}  // namespace stoker::data
