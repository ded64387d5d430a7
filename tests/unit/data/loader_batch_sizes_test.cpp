// Epochs in batches of sizes the caller gives (a Python script's batch sampler whose batches
// differ in size): plan_batches, Loader::start_epoch_in_batches and the buffers it grows and shrinks.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "stoker/data/sampler.h"
#include "support/counting_source.h"

namespace stoker::data {
namespace {
namespace batch_sizes {

using stoker::testing::CountingSource;

LoaderOptions options(int workers) {
  LoaderOptions o;
  o.batch_size = 2;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = 5;
  o.transform = parse_transforms("RandomCrop(6), RandomHorizontalFlip(0.5), ToUint8");
  return o;
}

// Each batch's ids, in order.
std::vector<std::vector<uint64_t>> batches_of(Loader& loader) {
  std::vector<std::vector<uint64_t>> batches;
  while (Batch batch = loader.next()) batches.emplace_back(batch.indices(), batch.indices() + batch.size());
  return batches;
}

// The bytes of every batch of the epoch, one after another.
std::vector<uint8_t> bytes_of(Loader& loader) {
  std::vector<uint8_t> bytes;
  while (Batch batch = loader.next()) {
    const auto* data = static_cast<const uint8_t*>(batch.data());
    bytes.insert(bytes.end(), data, data + batch.bytes());
  }
  return bytes;
}

TEST(PlanBatchesTest, CutsTheOrderIntoTheSizesGiven) {
  const EpochPlan plan = plan_batches({7, 1, 4, 4, 0, 2}, {1, 3, 2}, 10);
  EXPECT_EQ(plan.num_batches, 3);
  EXPECT_EQ(plan.batch_size, 3) << "the largest";
  EXPECT_EQ(plan.batch_begin(0), 0);
  EXPECT_EQ(plan.batch_begin(1), 1);
  EXPECT_EQ(plan.batch_begin(2), 4);
  EXPECT_EQ(plan.batch_begin(3), 6);
  EXPECT_EQ(plan.batch_samples(0), 1);
  EXPECT_EQ(plan.batch_samples(1), 3);
  EXPECT_EQ(plan.batch_samples(2), 2);
  EXPECT_EQ(plan.batch_of(0), 0);
  EXPECT_EQ(plan.batch_of(3), 1);
  EXPECT_EQ(plan.batch_of(4), 2);
  EXPECT_EQ(plan.stream(3), 14u) << "the second copy of 4 draws apart";
  EXPECT_THROW(plan_batches({1, 2}, {1, 0, 1}, 10), UsageError);
  EXPECT_THROW(plan_batches({1, 2}, {1, 2}, 10), UsageError);
}

TEST(LoaderBatchSizesTest, BatchesComeInTheSizesGivenAndResumeAtABatch) {
  const std::vector<uint64_t> order{9, 3, 4, 0, 8, 1, 2, 7, 6, 5, 11};
  const std::vector<int> sizes{3, 1, 5, 2};
  const std::vector<std::vector<uint64_t>> expected{{9, 3, 4}, {0}, {8, 1, 2, 7, 6}, {5, 11}};
  for (const int workers : {1, 3}) {
    Loader loader(std::make_shared<CountingSource>(12), options(workers));
    EXPECT_EQ(loader.batch_capacity(), 2);
    loader.start_epoch_in_batches(0, order, sizes);
    EXPECT_EQ(loader.batches_per_epoch(), 4);
    EXPECT_EQ(loader.batch_capacity(), 5) << "the buffers hold the largest batch";
    EXPECT_EQ(batches_of(loader), expected) << workers << " workers";
    loader.start_epoch_in_batches(0, order, sizes, 2);
    EXPECT_EQ(batches_of(loader), std::vector<std::vector<uint64_t>>(expected.begin() + 2, expected.end()));
    EXPECT_EQ(loader.prefetch(), 3) << "as many buffers as before";
  }
}

TEST(LoaderBatchSizesTest, PixelsAreTheSameForAnyWorkerCountAndAsInOneSize) {
  // The same order cut as batches of 2 (start_epoch) and in sizes given: the same samples.
  std::vector<uint64_t> order(12);
  std::iota(order.begin(), order.end(), uint64_t{0});
  Loader even(std::make_shared<CountingSource>(12), options(2));
  even.start_epoch(1, order);
  const std::vector<uint8_t> expected = bytes_of(even);
  for (const int workers : {1, 3}) {
    Loader loader(std::make_shared<CountingSource>(12), options(workers));
    loader.start_epoch_in_batches(1, order, {5, 1, 6});
    EXPECT_EQ(bytes_of(loader), expected) << workers << " workers";
  }
}

TEST(LoaderBatchSizesTest, ABatchHeldWhenTheBuffersGrowStaysValidAndItsBufferIsMadeAgain) {
  Loader loader(std::make_shared<CountingSource>(12), options(2));
  loader.start_epoch_in_batches(0, {0, 1, 2, 3}, {2, 2});
  Batch held = loader.next();
  ASSERT_TRUE(held);
  const std::vector<uint8_t> before(static_cast<const uint8_t*>(held.data()),
                                    static_cast<const uint8_t*>(held.data()) + held.bytes());
  loader.start_epoch_in_batches(1, {4, 5, 6, 7, 8, 9, 10, 11}, {6, 2});
  EXPECT_EQ(std::vector<uint8_t>(static_cast<const uint8_t*>(held.data()),
                                 static_cast<const uint8_t*>(held.data()) + held.bytes()),
            before);
  EXPECT_EQ(held.size(), 2);
  held.release();  // smaller than the buffers now: made again at their size by the next next()
  const std::vector<std::vector<uint64_t>> expected{{4, 5, 6, 7, 8, 9}, {10, 11}};
  EXPECT_EQ(batches_of(loader), expected);
  EXPECT_EQ(loader.prefetch(), 3);
  // Every buffer holds 6 now: an epoch of three batches of 6 needs each of them.
  std::vector<uint64_t> order(12);
  std::iota(order.begin(), order.end(), uint64_t{0});
  loader.start_epoch_in_batches(2, order, {6, 6});
  std::vector<Batch> kept;
  while (Batch batch = loader.next()) kept.push_back(std::move(batch));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].size(), 6);
  EXPECT_EQ(kept[1].bytes(), size_t{6} * 6 * 6 * 3);  // six 6x6 RGB samples
}

// Host memory that counts the bytes it holds.
class HeldBytes final : public BufferAllocator {
 public:
  void* allocate(size_t bytes) override {
    held_ += bytes;
    return host_allocator().allocate(bytes);
  }
  void deallocate(void* pointer, size_t bytes) override {
    held_ -= bytes;
    host_allocator().deallocate(pointer, bytes);
  }
  const char* name() const override { return "held bytes"; }
  size_t held() const { return held_; }

 private:
  std::atomic<size_t> held_{0};
};

TEST(LoaderBatchSizesTest, TheBuffersShrinkForAnEpochWhoseLargestBatchIsAtMostHalfTheirs) {
  HeldBytes allocator;
  LoaderOptions o = options(2);
  o.allocator = &allocator;
  std::vector<uint64_t> order(12);
  std::iota(order.begin(), order.end(), uint64_t{0});
  {
    Loader loader(std::make_shared<CountingSource>(12), o);
    const size_t at_two = allocator.held();
    loader.start_epoch_in_batches(0, order, {12});  // a bucketing sampler's one large batch
    Batch held = loader.next();
    ASSERT_EQ(held.size(), 12);
    EXPECT_EQ(loader.batch_capacity(), 12);
    EXPECT_GT(allocator.held(), at_two * 5);
    loader.start_epoch_in_batches(1, order, {3, 3, 3, 3});
    EXPECT_EQ(loader.batch_capacity(), 3) << "an epoch whose largest batch is at most half the buffers'";
    EXPECT_EQ(held.size(), 12) << "a batch the consumer holds stays as it was";
    held.release();  // made again at 3 samples by the next next()
    const std::vector<std::vector<uint64_t>> expected{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}};
    EXPECT_EQ(batches_of(loader), expected);
    EXPECT_EQ(loader.prefetch(), 3) << "as many buffers as before";
    EXPECT_LT(allocator.held(), at_two * 2) << "the large buffers were freed";
    loader.start_epoch_in_batches(2, order, {2, 2, 2, 2, 2, 2});
    EXPECT_EQ(loader.batch_capacity(), 3) << "more than half the buffers' size: they stay";
    loader.start_epoch_in_batches(3, order, {12});
    EXPECT_EQ(loader.batch_capacity(), 12);
    loader.start_epoch_in_batches(4, order, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
    EXPECT_EQ(loader.batch_capacity(), 2) << "never below the options' batch_size (start_epoch's batches)";
    loader.start_epoch(5, 0);
    std::vector<std::vector<uint64_t>> pairs = batches_of(loader);
    EXPECT_EQ(pairs.size(), 6u);
    EXPECT_EQ(pairs[0].size(), 2u);
  }
  EXPECT_EQ(allocator.held(), 0u);
}

TEST(LoaderBatchSizesTest, RefusesSizesThatDoNotFitTheOrder) {
  Loader loader(std::make_shared<CountingSource>(12), options(1));
  EXPECT_THROW(loader.start_epoch_in_batches(0, {0, 1, 2}, {2, 0, 1}), UsageError);
  EXPECT_THROW(loader.start_epoch_in_batches(0, {0, 1, 2}, {2, 2}), UsageError);
  EXPECT_THROW(loader.start_epoch_in_batches(0, {0, 1, 2}, {2, 1}, 3), UsageError);
  EXPECT_THROW(loader.start_epoch_in_batches(0, {0, 12}, {2}), UsageError);
}

}  // namespace batch_sizes
}  // namespace
}  // namespace stoker::data
