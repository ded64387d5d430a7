// Source::finish_batch: what a source makes of each whole batch (a Python Dataset's images
// stacked), made on the worker that writes the batch's last sample, before next() hands it out.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "stoker/data/loader.h"
#include "stoker/data/source.h"

namespace stoker::data {
namespace {
namespace finish_batch {

constexpr int kSide = 4;

// What the test source makes of a batch: its slots' ids, in order, and the thread that made it.
struct Finished {
  std::vector<uint64_t> ids;
  std::thread::id thread;
};

// 4x4 grey samples, each carrying its id as its extra; finishes batches when `finishes`, and
// holds each finish_batch back until released when `gated`.
class IdSource final : public Source {
 public:
  IdSource(size_t size, bool finishes, bool gated = false) : size_(size), finishes_(finishes), gated_(gated) {}
  size_t size() const override { return size_; }
  std::string name(size_t i) const override { return "id-" + std::to_string(i); }
  std::string describe() const override { return "ids"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { out[0] = 0; }
  void fixed_shape(int* w, int* h, int* c) const override { *w = *h = kSide, *c = 1; }
  Status read(size_t i, SampleData* out) const override {
    out->storage.assign(kSide * kSide, static_cast<uint8_t>(i));
    out->bytes = out->storage;
    out->raw = true;
    out->raw_width = out->raw_height = kSide;
    out->raw_channels = 1;
    out->extra = std::make_shared<const uint64_t>(i);
    return Status::ok_status();
  }
  bool finishes_batches() const override { return finishes_; }
  std::shared_ptr<const void> finish_batch(std::span<const std::shared_ptr<const void>> extras) const override {
    std::unique_lock<std::mutex> lock(mutex_);
    ++calls_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !gated_ || released_; });
    auto finished = std::make_shared<Finished>();
    finished->thread = std::this_thread::get_id();
    for (const auto& extra : extras) finished->ids.push_back(*static_cast<const uint64_t*>(extra.get()));
    return finished;
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  // Waits until finish_batch was called `count` times; false after 20 s (the loader never called it).
  bool wait_for_calls(int count) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return calls_ >= count; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  size_t size_;
  bool finishes_;
  bool gated_;
  std::vector<std::string> classes_{"0"};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable int calls_ = 0;
  bool released_ = false;
};

LoaderOptions options(int workers) {
  LoaderOptions o;
  o.batch_size = 3;
  o.workers = workers;
  o.prefetch = 2;
  o.sampler.shuffle = true;
  o.sampler.seed = 7;
  o.transform = parse_transforms("ToUint8");
  return o;
}

const Finished& finished_of(const Batch& batch) { return *static_cast<const Finished*>(batch.finished().get()); }

TEST(LoaderFinishBatchTest, EachBatchComesFinishedOnAWorkerFromItsOwnSamples) {
  for (const int workers : {1, 3}) {
    auto source = std::make_shared<IdSource>(11, true);
    Loader loader(source, options(workers));
    int batches = 0;
    for (int64_t epoch = 0; epoch < 3; ++epoch) {  // the buffers are used again: each batch is finished anew
      loader.start_epoch(epoch);
      while (Batch batch = loader.next()) {
        ASSERT_TRUE(batch.finished()) << workers << " workers";
        const Finished& finished = finished_of(batch);
        EXPECT_EQ(finished.ids, std::vector<uint64_t>(batch.indices(), batch.indices() + batch.size()));
        EXPECT_NE(finished.thread, std::this_thread::get_id()) << "made on a worker, not the consumer";
        ++batches;
      }
    }
    EXPECT_EQ(batches, 12);
    // Once per batch: epochs 1 and 2 take the batches run ahead into them, finished then; epoch 3's
    // run ahead fills the free buffers (prefetch) at most.
    EXPECT_GE(source->calls(), batches);
    EXPECT_LE(source->calls(), batches + 2);
  }
}

TEST(LoaderFinishBatchTest, ABatchIsNotHandedOutBeforeItIsFinished) {
  auto source = std::make_shared<IdSource>(6, true, /*gated=*/true);
  Loader loader(source, options(2));
  loader.start_epoch(0);
  struct Release {  // also when an assertion returns early, so that the workers can stop
    IdSource& source;
    ~Release() { source.release(); }
  } release{*source};
  ASSERT_TRUE(source->wait_for_calls(1)) << "the first batch, written, is being finished";
  Batch batch;
  EXPECT_FALSE(loader.next_within(0.05, &batch)) << "written, not finished: not ready";
  source->release();
  ASSERT_TRUE(loader.next_within(60, &batch));
  ASSERT_TRUE(batch);
  EXPECT_EQ(finished_of(batch).ids.size(), 3u);
}

TEST(LoaderFinishBatchTest, ASourceThatFinishesNothingIsNeverAsked) {
  auto source = std::make_shared<IdSource>(6, false);
  Loader loader(source, options(2));
  loader.start_epoch(0);
  while (Batch batch = loader.next()) EXPECT_FALSE(batch.finished());
  EXPECT_EQ(source->calls(), 0);
}

}  // namespace finish_batch
}  // namespace
}  // namespace stoker::data
