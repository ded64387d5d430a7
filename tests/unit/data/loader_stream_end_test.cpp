// An epoch that ends where the source says its stream ended (Status::past_end): the batch
// holding the end comes short (or goes, with drop_last), no bad sample is counted, and the next
// epoch runs again to its own end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"
#include "support/counting_source.h"

namespace stoker::data {
namespace {
namespace stream_end {

using stoker::testing::CountingSource;
using namespace std::chrono_literals;

// A CountingSource whose samples from `end` on are past the end of its stream; `end` may change
// between epochs (a stream of another length).
class EndingSource final : public Source {
 public:
  EndingSource(size_t size, uint64_t end, uint64_t bad = stoker::testing::kNoLimit) : inner_(size, bad), end_(end) {}
  size_t size() const override { return inner_.size(); }
  std::string name(size_t i) const override { return inner_.name(i); }
  std::string describe() const override { return "ending"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return inner_.class_names(); }
  int64_t label(size_t i) const override { return inner_.label(i); }
  void targets(size_t i, float* out) const override { inner_.targets(i, out); }
  void fixed_shape(int* w, int* h, int* c) const override { inner_.fixed_shape(w, h, c); }
  Status read(size_t i, SampleData* out) const override {
    if (i == hold_) {  // until a later position was found past the end, and a while after
      for (int k = 0; k < 500 && !later_past_end_.load(); ++k) std::this_thread::sleep_for(10ms);
      std::this_thread::sleep_for(200ms);
    }
    if (i >= end_.load()) {
      if (i > hold_) later_past_end_ = true;
      return Status::past_end();
    }
    return inner_.read(i, out);
  }
  void set_end(uint64_t end) { end_ = end; }
  // Reading position `hold` waits until a later position was read past the end: a worker
  // reading ahead reports a later end first.
  void hold(uint64_t position) { hold_ = position; }

 private:
  CountingSource inner_;
  std::atomic<uint64_t> end_;
  uint64_t hold_ = stoker::testing::kNoLimit;
  mutable std::atomic<bool> later_past_end_{false};
};

LoaderOptions options(int workers, bool drop_last) {
  LoaderOptions o;
  o.batch_size = 4;
  o.workers = workers;
  o.prefetch = 3;
  o.run_ahead = false;
  o.sampler.shuffle = false;  // the stream's order: sample i at position i
  o.sampler.drop_last = drop_last;
  o.transform = parse_transforms("Grayscale, ToUint8");
  return o;
}

std::vector<int> sizes_of(Loader& loader, std::vector<uint64_t>* ids) {
  std::vector<int> sizes;
  while (Batch batch = loader.next()) {
    sizes.push_back(batch.size());
    ids->insert(ids->end(), batch.indices(), batch.indices() + batch.size());
  }
  return sizes;
}

TEST(LoaderStreamEndTest, EndsAtTheFirstSampleThatIsNotWithTheShortBatchForAnyWorkerCount) {
  for (int workers : {1, 3}) {
    const auto source = std::make_shared<EndingSource>(64, 10);
    Loader loader(source, options(workers, false));
    loader.start_epoch(0);
    std::vector<uint64_t> ids;
    EXPECT_EQ(sizes_of(loader, &ids), (std::vector<int>{4, 4, 2})) << workers << " workers";
    EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    EXPECT_FALSE(loader.next()) << "the end stays the end";
    EXPECT_EQ(loader.epoch_stats().bad, 0u) << "past the end is no bad sample";
    EXPECT_EQ(loader.epoch_stats().samples, 10u);

    source->set_end(8);  // the next pass is shorter, at a batch's edge
    loader.start_epoch(1);
    ids.clear();
    EXPECT_EQ(sizes_of(loader, &ids), (std::vector<int>{4, 4}));
    source->set_end(0);  // an empty stream
    loader.start_epoch(2);
    EXPECT_EQ(sizes_of(loader, &ids), std::vector<int>{});
  }
}

TEST(LoaderStreamEndTest, DropLastDropsTheShortBatch) {
  const auto source = std::make_shared<EndingSource>(64, 10);
  Loader loader(source, options(2, true));
  loader.start_epoch(0);
  std::vector<uint64_t> ids;
  EXPECT_EQ(sizes_of(loader, &ids), (std::vector<int>{4, 4}));
  source->set_end(3);
  loader.start_epoch(1);
  EXPECT_EQ(sizes_of(loader, &ids), std::vector<int>{});
}

TEST(LoaderStreamEndTest, AStreamAsLongAsThePlanEndsAsThePlanDoes) {
  const auto source = std::make_shared<EndingSource>(12, 12);
  Loader loader(source, options(2, false));
  loader.start_epoch(0);
  std::vector<uint64_t> ids;
  EXPECT_EQ(sizes_of(loader, &ids), (std::vector<int>{4, 4, 4}));
}

TEST(LoaderStreamEndTest, MaxBadCountsTheBadSamplesAgainstTheSamplesBeforeTheEnd) {
  LoaderOptions o = options(2, false);
  o.max_bad_fraction = 0.05;  // 1 of the 10 samples is over it; 1 of the 64 planned would not be
  const auto source = std::make_shared<EndingSource>(64, 10, 3);
  source->hold(10);  // the end at 12 (the next batch's worker) is found before the one at 10
  Loader loader(source, o);
  loader.start_epoch(0);
  try {
    while (loader.next()) {
    }
    FAIL() << "the epoch should stop";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of 10 samples in epoch 0 are bad"), std::string::npos) << e.what();
  }
}

}  // namespace stream_end
}  // namespace
}  // namespace stoker::data
