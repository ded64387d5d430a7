// Loader on raw (IDX) samples: ordering, determinism across worker counts, resume,
// back-pressure and lifetime. Decoding paths are covered in tests/integration.
#include "stoker/data/loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "stoker/core/error.h"
#include "support/hang_guard.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::kHangGuard;
using stoker::testing::TempDir;

// An IDX dataset of `count` 16x12 images whose pixels encode their index.
std::shared_ptr<const Source> make_idx(const TempDir& dir, uint32_t count) {
  std::vector<uint8_t> images = {0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 16};
  std::vector<uint8_t> labels = {0, 0, 8, 1, 0, 0, 0, 0};
  for (int k = 4; k < 8; ++k) images[k] = labels[k] = static_cast<uint8_t>(count >> (8 * (7 - k)));
  for (uint32_t i = 0; i < count; ++i) {
    for (int p = 0; p < 16 * 12; ++p) images.push_back(static_cast<uint8_t>(i * 7 + p * 3));
    labels.push_back(static_cast<uint8_t>(i % 10));
  }
  dir.write("train-images-idx3-ubyte", images);
  dir.write("train-labels-idx1-ubyte", labels);
  return open_source(dir.str());
}

LoaderOptions augmenting_options(int workers) {
  LoaderOptions options;
  options.batch_size = 8;
  options.workers = workers;
  options.prefetch = 3;
  options.sampler.seed = 42;
  options.transform = parse_transforms(
      "RandomResizedCrop(10), RandomHorizontalFlip(0.5), ColorJitter(0.4, 0.4, 0.4, 0.1), "
      "Normalize(mean=(0.5,0.5,0.5), std=(0.25,0.25,0.25))");
  return options;
}

// Appends a batch's bytes and labels.
void append_batch(std::vector<uint8_t>& out, const Batch& batch) {
  const auto* p = static_cast<const uint8_t*>(batch.data());
  out.insert(out.end(), p, p + batch.bytes());
  const auto* l = reinterpret_cast<const uint8_t*>(batch.labels());
  out.insert(out.end(), l, l + sizeof(int64_t) * static_cast<size_t>(batch.size()));
}

// Every byte of every batch of one epoch, plus labels, in order.
std::vector<uint8_t> epoch_bytes(Loader& loader, int64_t epoch, int64_t first_batch = 0,
                                 int64_t max_batches = 1 << 30) {
  std::vector<uint8_t> out;
  loader.start_epoch(epoch, first_batch);
  int64_t taken = 0;
  while (taken < max_batches) {
    Batch batch = loader.next();
    if (!batch) break;
    append_batch(out, batch);
    ++taken;
  }
  return out;
}

TEST(LoaderTest, BatchesHaveTheAdvertisedShapeAndLabels) {
  TempDir dir;
  auto source = make_idx(dir, 20);
  LoaderOptions options;
  options.batch_size = 8;
  options.sampler.shuffle = false;
  options.transform = parse_transforms("none, ToUint8");
  options.transform.channels = 1;
  Loader loader(source, options);
  EXPECT_EQ(loader.batches_per_epoch(), 3);
  loader.start_epoch(0);
  std::vector<int> sizes;
  while (Batch batch = loader.next()) {
    sizes.push_back(batch.size());
    EXPECT_EQ(batch.shape(), (std::vector<int64_t>{batch.size(), 1, 12, 16}));
    EXPECT_EQ(batch.frames(), 0);
    const auto* pixels = static_cast<const uint8_t*>(batch.data());
    for (int s = 0; s < batch.size(); ++s) {
      const uint64_t index = batch.indices()[s];
      EXPECT_EQ(index, static_cast<uint64_t>(batch.index() * 8 + s));
      EXPECT_EQ(batch.labels()[s], static_cast<int64_t>(index % 10));
      EXPECT_EQ(pixels[s * 16 * 12 + 5], static_cast<uint8_t>(index * 7 + 15)) << "sample " << index;
    }
  }
  EXPECT_EQ(sizes, (std::vector<int>{8, 8, 4}));
  EXPECT_FALSE(loader.next()) << "the end stays the end";
}

TEST(LoaderTest, BitIdenticalForAnyWorkerCount) {
  TempDir dir;
  auto source = make_idx(dir, 100);
  Loader one(source, augmenting_options(1));
  const auto reference0 = epoch_bytes(one, 0);
  const auto reference1 = epoch_bytes(one, 1);
  EXPECT_NE(reference0, reference1) << "epochs must differ (shuffle and augmentation)";
  for (int workers : {2, 3, 8}) {
    Loader many(source, augmenting_options(workers));
    EXPECT_EQ(epoch_bytes(many, 0), reference0) << workers << " workers, epoch 0";
    EXPECT_EQ(epoch_bytes(many, 1), reference1) << workers << " workers, epoch 1";
  }
}

// Repeated augmentation: the copies of a sample sit in a row and each is transformed with its
// own draws; copy 0 is the sample exactly as the plain loader makes it in the same epoch, and
// any worker count gives the same bytes.
TEST(LoaderTest, RepeatedCopiesAreTransformedApartAndCopyZeroAsWithout) {
  TempDir dir;
  auto source = make_idx(dir, 60);
  LoaderOptions plain_options = augmenting_options(2);
  plain_options.batch_size = 60;  // one batch: every sample, by index
  Loader plain(source, plain_options);
  plain.start_epoch(3);
  Batch all = plain.next();
  ASSERT_TRUE(all);
  const size_t sample_bytes = all.bytes() / static_cast<size_t>(all.size());
  std::vector<const uint8_t*> by_index(60);
  for (int s = 0; s < all.size(); ++s) {
    by_index[all.indices()[s]] = static_cast<const uint8_t*>(all.data()) + static_cast<size_t>(s) * sample_bytes;
  }

  LoaderOptions options = augmenting_options(1);
  options.batch_size = 6;
  options.sampler.repetitions = 3;
  Loader repeated(source, options);
  EXPECT_EQ(repeated.samples_per_epoch(), 60u);  // fewer than 256: as many as without
  EXPECT_EQ(repeated.batches_per_epoch(), 10);
  repeated.start_epoch(3);
  int copies_apart = 0;
  while (Batch batch = repeated.next()) {
    const auto* p = static_cast<const uint8_t*>(batch.data());
    for (int s = 0; s < batch.size(); s += 3) {
      const uint64_t id = batch.indices()[s];
      ASSERT_EQ(batch.indices()[s + 1], id);
      ASSERT_EQ(batch.indices()[s + 2], id);
      const uint8_t* copy0 = p + static_cast<size_t>(s) * sample_bytes;
      EXPECT_EQ(std::memcmp(copy0, by_index[id], sample_bytes), 0) << "sample " << id;
      for (int k = 1; k < 3; ++k) {
        copies_apart += std::memcmp(copy0, copy0 + static_cast<size_t>(k) * sample_bytes, sample_bytes) != 0;
      }
    }
  }
  EXPECT_EQ(copies_apart, 40) << "20 samples x 2 later copies, each drawn apart from copy 0";
  Loader more(source, [&] {
    LoaderOptions o = options;
    o.workers = 3;
    return o;
  }());
  EXPECT_EQ(epoch_bytes(more, 3), epoch_bytes(repeated, 3));
}

TEST(LoaderTest, ChangingWorkersAndPrefetchMidEpochKeepsTheBatches) {
  TempDir dir;
  auto source = make_idx(dir, 200);
  Loader reference(source, augmenting_options(2));
  const auto expected = epoch_bytes(reference, 0);

  Loader tuned(source, augmenting_options(1));
  std::vector<uint8_t> got;
  tuned.start_epoch(0);
  const int plan[] = {1, 4, 2, 1, 3, 3, 1, 5};  // grow, park, wake parked threads, grow again
  int64_t b = 0;
  while (Batch batch = tuned.next()) {
    append_batch(got, batch);
    batch.release();
    tuned.set_workers(plan[b % 8]);
    if (b == 5) tuned.set_prefetch(6);
    EXPECT_EQ(tuned.workers(), plan[b % 8]);
    ++b;
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(tuned.prefetch(), 6);
  tuned.set_prefetch(2);  // grow-only: keeps what it has
  EXPECT_EQ(tuned.prefetch(), 6);
  EXPECT_EQ(epoch_bytes(tuned, 1), epoch_bytes(reference, 1));
  EXPECT_THROW(tuned.set_workers(0), UsageError);
  EXPECT_THROW(tuned.set_prefetch(1025), UsageError);
}

TEST(LoaderTest, ResumedMidEpochEqualsUninterrupted) {
  TempDir dir;
  auto source = make_idx(dir, 100);
  Loader full(source, augmenting_options(2));
  const auto uninterrupted = epoch_bytes(full, 3);

  Loader first(source, augmenting_options(3));
  auto head = epoch_bytes(first, 3, 0, 5);
  const LoaderState state = first.state();
  EXPECT_EQ(state.epoch, 3);
  EXPECT_EQ(state.next_batch, 5);

  Loader resumed(source, augmenting_options(1));
  resumed.resume(state);
  std::vector<uint8_t> tail;
  while (Batch batch = resumed.next()) {
    const auto* p = static_cast<const uint8_t*>(batch.data());
    tail.insert(tail.end(), p, p + batch.bytes());
    const auto* l = reinterpret_cast<const uint8_t*>(batch.labels());
    tail.insert(tail.end(), l, l + sizeof(int64_t) * static_cast<size_t>(batch.size()));
  }
  head.insert(head.end(), tail.begin(), tail.end());
  EXPECT_EQ(head, uninterrupted);
}

TEST(LoaderTest, AbandoningAnEpochAndHoldingBatchesIsSafe) {
  TempDir dir;
  auto source = make_idx(dir, 200);
  Loader loader(source, augmenting_options(3));
  loader.start_epoch(0);
  Batch held = loader.next();
  ASSERT_TRUE(held);
  loader.start_epoch(1);  // abandon epoch 0 with buffers in flight and one held
  int batches = 0;
  while (Batch batch = loader.next()) ++batches;
  EXPECT_EQ(batches, 25);
  EXPECT_EQ(held.epoch(), 0);
  held.release();
  EXPECT_FALSE(held);
}

TEST(LoaderTest, BatchOutlivesItsLoader) {
  TempDir dir;
  auto source = make_idx(dir, 20);
  Batch kept;
  std::vector<uint8_t> copy;
  {
    Loader loader(source, augmenting_options(2));
    loader.start_epoch(0);
    kept = loader.next();
    const auto* p = static_cast<const uint8_t*>(kept.data());
    copy.assign(p, p + kept.bytes());
  }
  ASSERT_TRUE(kept);
  EXPECT_EQ(std::memcmp(kept.data(), copy.data(), copy.size()), 0);
}

TEST(LoaderTest, BackPressureBoundsWorkAhead) {
  TempDir dir;
  auto source = make_idx(dir, 400);
  LoaderOptions options = augmenting_options(2);
  options.prefetch = 2;
  Loader loader(source, options);
  loader.start_epoch(0);
  Batch first = loader.next();
  Batch second = loader.next();  // both buffers held: workers must wait, not overrun
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const StageTimes times = loader.stage_times();
  EXPECT_LE(times.samples, 16u) << "workers wrote samples with no free buffer";
  first.release();
  second.release();
  int rest = 0;
  while (Batch batch = loader.next()) ++rest;
  EXPECT_EQ(rest, 48);
  // The wait is booked when it ends, so only now must it show (how long it was, the machine's load decides).
  EXPECT_GT(loader.stage_times().wait_free_buffer, 0.0);
}

TEST(LoaderTest, AConsumerHoldingEveryBufferGetsAnErrorNotAHang) {
  TempDir dir;
  auto source = make_idx(dir, 64);
  LoaderOptions options = augmenting_options(2);
  options.prefetch = 2;
  Loader loader(source, options);
  loader.start_epoch(0);
  Batch first = loader.next();
  Batch second = loader.next();
  const auto started = std::chrono::steady_clock::now();
  try {
    loader.next();
    FAIL() << "next() returned with every buffer held";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("all 2 batch buffers are held by the consumer"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, kHangGuard);
  // Released on another thread while next() waits (300 ms in, within the grace second): the
  // wait goes on and the batch comes. A loaded machine may run the releaser after the grace: a
  // next() that began before the release may then throw, one that began after it may not.
  std::atomic<bool> released{false};
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    first.release();
    released = true;
  });
  Batch third;
  for (bool done = false; !done;) {
    const bool released_before = released;
    try {
      third = loader.next();
      done = true;
    } catch (const UsageError& e) {
      ASSERT_FALSE(released_before) << "next() threw with a buffer released before it was called: " << e.what();
    }
  }
  releaser.join();
  ASSERT_TRUE(third);
  EXPECT_EQ(third.index(), 2);
}

TEST(LoaderTest, BuffersForTheConsumerAreAddedWhenItHoldsEveryBufferAndNoMore) {
  TempDir dir;
  auto source = make_idx(dir, 64);
  LoaderOptions options = augmenting_options(2);
  options.prefetch = 2;
  options.buffers_for_consumer = 2;
  Loader loader(source, options);
  loader.start_epoch(0);
  // A script that keeps the first batch it looked at, then iterates: two buffers held by it.
  Batch first = loader.next();
  Batch second = loader.next();
  Batch third = loader.next();  // a third buffer is made for it, at once
  ASSERT_TRUE(third);
  EXPECT_EQ(third.index(), 2);
  Batch fourth = loader.next();
  ASSERT_TRUE(fourth);
  EXPECT_EQ(loader.prefetch(), 4);
  // Past the allowance a consumer keeping every batch still gets the error, not a hang.
  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(loader.next(), UsageError);
  EXPECT_LT(std::chrono::steady_clock::now() - started, kHangGuard);
  EXPECT_EQ(loader.prefetch(), 4);
  first.release();
  int rest = 0;
  while (Batch batch = loader.next()) ++rest;
  EXPECT_EQ(rest, 4);
}

TEST(LoaderTest, NextWithinReturnsWhenTheBatchIsLateAndHandsItOverOnceReady) {
  TempDir dir;
  auto source = make_idx(dir, 64);
  LoaderOptions options = augmenting_options(1);
  options.prefetch = 1;
  Loader loader(source, options);
  loader.start_epoch(0);
  Batch held = loader.next();
  Batch batch;
  // The only buffer is held: nothing can be ready, and a short wait says so.
  EXPECT_FALSE(loader.next_within(0.05, &batch));
  EXPECT_FALSE(batch);
  held.release();
  int64_t expected = 1;
  for (;;) {
    if (!loader.next_within(0.05, &batch)) continue;
    if (!batch) break;
    EXPECT_EQ(batch.index(), expected++);
    batch.release();
  }
  EXPECT_EQ(expected, loader.batches_per_epoch());
}

// Host memory that runs out after `budget` allocations.
class ExhaustedAllocator final : public BufferAllocator {
 public:
  explicit ExhaustedAllocator(int budget) : budget_(budget) {}
  void* allocate(size_t bytes) override {
    if (budget_-- <= 0) throw std::bad_alloc();
    return host_allocator().allocate(bytes);
  }
  void deallocate(void* pointer, size_t bytes) override { host_allocator().deallocate(pointer, bytes); }
  const char* name() const override { return "exhausted"; }

 private:
  int budget_;
};

TEST(LoaderTest, BuffersThatDoNotFitAreOneLineNamingTheirSizes) {
  TempDir dir;
  auto source = make_idx(dir, 10);
  ExhaustedAllocator allocator(2);
  LoaderOptions options = augmenting_options(1);
  options.prefetch = 4;
  options.allocator = &allocator;
  try {
    Loader loader(source, options);
    FAIL() << "the third buffer could not be allocated, and the loader was made";
  } catch (const UsageError& e) {
    EXPECT_STREQ(
        e.what(),
        "the loader's batch buffers do not fit in memory: buffer 3 of 4 could not be allocated, each holds "
        "batch_size 8 samples of 1,200 bytes (9,600 bytes per buffer, 38,400 bytes in all); lower batch_size or "
        "prefetch");
  }
}

TEST(LoaderTest, NextBeforeStartAndBadOptionsAreUsageErrors) {
  TempDir dir;
  auto source = make_idx(dir, 10);
  Loader loader(source, augmenting_options(1));
  EXPECT_THROW(loader.next(), UsageError);
  EXPECT_THROW(loader.start_epoch(0, 99), UsageError);

  struct Case {
    void (*mutate)(LoaderOptions&);
    const char* expected;
  };
  const Case cases[] = {
      {[](LoaderOptions& o) { o.batch_size = 0; }, "batch_size must be between 1 and 65536 (got 0)"},
      {[](LoaderOptions& o) { o.workers = 0; }, "workers must be between 1 and 1024 (got 0)"},
      {[](LoaderOptions& o) { o.prefetch = 0; }, "prefetch must be between 1 and 1024 (got 0)"},
      {[](LoaderOptions& o) { o.max_bad_fraction = 2; }, "max_bad_fraction must be in [0, 1]"},
      {[](LoaderOptions& o) { o.sampler.rank = 3; }, "rank must be in [0, 0] (got 3)"},
  };
  for (const Case& c : cases) {
    LoaderOptions options = augmenting_options(1);
    c.mutate(options);
    try {
      Loader bad(source, options);
      ADD_FAILURE() << "accepted: " << c.expected;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace stoker::data
