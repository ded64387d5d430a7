// Epochs in an order the caller gives (a Python script's sampler), what a source attaches to
// each sample (a Python Dataset's targets), and the worker-start hook.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "stoker/data/sampler.h"
#include "support/counting_source.h"

namespace stoker::data {
namespace {

using stoker::testing::CountingSource;

LoaderOptions given_order_options(int workers) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = workers;
  o.prefetch = 3;
  o.sampler.seed = 3;
  o.sampler.shuffle = true;
  o.sampler.world_size = 2;  // a given order ignores the options' sharding
  o.transform = parse_transforms("RandomCrop(6), RandomHorizontalFlip(0.5), Grayscale, ToUint8");
  return o;
}

std::vector<uint64_t> ids_of(Loader& loader) {
  std::vector<uint64_t> ids;
  while (Batch batch = loader.next()) ids.insert(ids.end(), batch.indices(), batch.indices() + batch.size());
  return ids;
}

TEST(PlanOrderTest, KeepsTheOrderCutsBatchesAndDrawsCopiesApart) {
  const EpochPlan plan = plan_order({5, 2, 5, 9, 5}, 10, 2, false);
  EXPECT_EQ(plan.indices, (std::vector<uint64_t>{5, 2, 5, 9, 5}));
  EXPECT_EQ(plan.num_batches, 3);
  EXPECT_EQ(plan.stream(0), 5u);
  EXPECT_EQ(plan.stream(2), 15u) << "the second copy of 5";
  EXPECT_EQ(plan.stream(4), 25u) << "the third copy";
  EXPECT_EQ(plan.stream(3), 9u);
  const EpochPlan dropped = plan_order({1, 2, 3, 4, 5}, 10, 2, true);
  EXPECT_EQ(dropped.num_batches, 2);
  EXPECT_EQ(dropped.indices.size(), 4u);
  EXPECT_TRUE(plan_order({0, 1, 2}, 3, 2, false).streams.empty()) << "no repeats: each id is its stream";
  EXPECT_THROW(plan_order({0}, 1, 0, false), UsageError);
}

TEST(LoaderGivenOrderTest, AnEpochVisitsTheGivenOrderForAnyWorkerCount) {
  const auto source = std::make_shared<CountingSource>(30);
  const std::vector<uint64_t> order{29, 3, 3, 17, 0, 8, 12, 5, 5, 5, 21};
  std::vector<uint8_t> first;
  for (int workers : {1, 3}) {
    Loader loader(source, given_order_options(workers));
    loader.start_epoch(4, order);
    EXPECT_EQ(loader.batches_per_epoch(), 3);
    EXPECT_EQ(loader.samples_per_epoch(), order.size());
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> ids;
    while (Batch batch = loader.next()) {
      EXPECT_EQ(batch.epoch(), 4);
      ids.insert(ids.end(), batch.indices(), batch.indices() + batch.size());
      const auto* p = static_cast<const uint8_t*>(batch.data());
      bytes.insert(bytes.end(), p, p + batch.bytes());
    }
    EXPECT_EQ(ids, order);
    if (first.empty()) {
      first = bytes;
    } else {
      EXPECT_EQ(bytes, first) << "the same batches for any worker count";
    }
  }
}

TEST(LoaderGivenOrderTest, ResumesMidEpochAndGoesBackToTheOptionsPlan) {
  const auto source = std::make_shared<CountingSource>(30);
  const std::vector<uint64_t> order{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  Loader loader(source, given_order_options(2));
  const int64_t planned = loader.batches_per_epoch();
  loader.start_epoch(0, order, 1);
  EXPECT_EQ(ids_of(loader), (std::vector<uint64_t>{5, 6, 7, 8, 9, 10}));
  loader.start_epoch(1);
  EXPECT_EQ(loader.batches_per_epoch(), planned);
  EXPECT_EQ(ids_of(loader).size(), 15u) << "half of 30 on rank 0 of 2";
  EXPECT_THROW(loader.start_epoch(0, {30}), UsageError) << "an id past the data";
  EXPECT_THROW(loader.start_epoch(0, order, 4), UsageError) << "past the 3 batches of this order";
}

// Attaches its index to every read; sample `bad` cannot be read.
class AttachingSource final : public Source {
 public:
  AttachingSource(size_t size, uint64_t bad, bool fail_start = false)
      : size_(size), bad_(bad), fail_start_(fail_start) {}
  size_t size() const override { return size_; }
  std::string name(size_t i) const override { return "item-" + std::to_string(i); }
  std::string describe() const override { return "attaching"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { out[0] = 0; }
  void fixed_shape(int* w, int* h, int* c) const override { *w = *h = 4, *c = 1; }
  void on_worker_start(int worker_id) const override {
    if (fail_start_) throw std::runtime_error("no handle for worker " + std::to_string(worker_id));
    std::lock_guard<std::mutex> lock(mutex_);
    started_.insert(worker_id);
  }
  Status read(size_t i, SampleData* out) const override {
    if (i == bad_) return Status::failure("unreadable");
    out->storage.assign(16, static_cast<uint8_t>(i));
    out->bytes = out->storage;
    out->raw = true;
    out->raw_width = out->raw_height = 4;
    out->raw_channels = 1;
    out->extra = std::make_shared<const uint64_t>(i);
    return Status::ok_status();
  }
  std::set<int> started() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }

 private:
  size_t size_;
  uint64_t bad_;
  bool fail_start_;
  std::vector<std::string> classes_{"only"};
  mutable std::mutex mutex_;
  mutable std::set<int> started_;
};

TEST(LoaderExtrasTest, EachSlotCarriesWhatTheSourceAttachedToItsSample) {
  const auto source = std::make_shared<AttachingSource>(20, 6);
  LoaderOptions o;
  o.batch_size = 3;
  o.workers = 3;
  o.prefetch = 2;
  o.max_bad_fraction = 0.5;
  o.transform = parse_transforms("Grayscale, ToUint8");
  auto loader_owner = std::make_unique<Loader>(source, o);
  Loader& loader = *loader_owner;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {  // buffers are reused: each slot's extra is its own sample's
    loader.start_epoch(epoch, {0, 6, 19, 6, 2});
    int seen = 0;
    while (Batch batch = loader.next()) {
      for (int s = 0; s < batch.size(); ++s, ++seen) {
        const uint64_t index = batch.indices()[s];
        ASSERT_NE(batch.extra(s), nullptr);
        const uint64_t attached = *static_cast<const uint64_t*>(batch.extra(s).get());
        EXPECT_EQ(attached, index == 6 ? 7u : index) << "a bad sample carries its substitute's (sample 7)";
        EXPECT_EQ(static_cast<const uint8_t*>(batch.data())[s * 16], static_cast<uint8_t>(attached));
      }
    }
    EXPECT_EQ(seen, 5);
  }
  loader_owner.reset();  // joins the workers: each has started by then
  EXPECT_EQ(source->started(), (std::set<int>{0, 1, 2})) << "on_worker_start once on each worker";
}

TEST(LoaderExtrasTest, AWorkerThatCannotStartFailsTheEpochNamingWhy) {
  const auto source = std::make_shared<AttachingSource>(20, 99, true);
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = 2;
  o.transform = parse_transforms("Grayscale, ToUint8");
  Loader loader(source, o);
  loader.start_epoch(0);
  try {
    while (loader.next()) {
    }
    FAIL() << "the epoch did not fail";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("could not start: no handle for worker"), std::string::npos) << e.what();
  }
  loader.start_epoch(1);
  EXPECT_THROW(loader.next(), DataError) << "and so does every later epoch";
}

}  // namespace
}  // namespace stoker::data
