// Source::read_run: a source that reads_runs() gets each run of samples a worker claims in one
// call (a Python Dataset's items from worker processes, taken under one GIL hold), with the
// extras the run's samples replace in their slots; a bad sample's substitute, and what a run
// left unread, are read one by one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "stoker/data/loader.h"
#include "stoker/data/source.h"

namespace stoker::data {
namespace {
namespace read_runs {

// 1x1 grey samples whose pixel is the id; each carries its id as its extra. Sample `bad` fails.
// read_run reads at most `per_run` of a run (the rest are left to read()).
class RunSource final : public Source {
 public:
  RunSource(size_t size, bool runs, size_t per_run, uint64_t bad)
      : size_(size), runs_(runs), per_run_(per_run), bad_(bad) {}
  size_t size() const override { return size_; }
  std::string name(size_t i) const override { return "id-" + std::to_string(i); }
  std::string describe() const override { return "ids"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t, float* out) const override { out[0] = 0; }
  void fixed_shape(int* w, int* h, int* c) const override { *w = *h = *c = 1; }
  Status read(size_t i, SampleData* out) const override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      single_.push_back(i);
      if (out->retired) ++retired_;
    }
    return fill(i, out);
  }
  bool reads_runs() const override { return runs_; }
  size_t read_run(std::span<const uint64_t> indices, std::span<SampleData> outs,
                  std::span<Status> statuses) const override {
    const size_t n = std::min(indices.size(), per_run_);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      runs_read_.emplace_back(indices.begin(), indices.end());
      for (const SampleData& out : outs) retired_ += out.retired ? 1 : 0;
    }
    for (size_t k = 0; k < n; ++k) statuses[k] = fill(indices[k], &outs[k]);
    return n;
  }

  std::vector<std::vector<uint64_t>> runs() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return runs_read_;
  }
  std::vector<uint64_t> single() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return single_;
  }
  int retired() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return retired_;
  }

 private:
  Status fill(uint64_t i, SampleData* out) const {
    out->retired.reset();
    if (i == bad_) return Status::failure("bad on purpose");
    out->storage.assign(1, static_cast<uint8_t>(i));
    out->bytes = out->storage;
    out->raw = true;
    out->raw_width = out->raw_height = out->raw_channels = 1;
    out->extra = std::make_shared<const uint64_t>(i);
    return Status::ok_status();
  }

  size_t size_;
  bool runs_;
  size_t per_run_;
  uint64_t bad_;
  std::vector<std::string> classes_{"0"};
  mutable std::mutex mutex_;
  mutable std::vector<std::vector<uint64_t>> runs_read_;
  mutable std::vector<uint64_t> single_;
  mutable int retired_ = 0;
};

LoaderOptions options(int workers) {
  LoaderOptions o;
  o.batch_size = 8;
  o.workers = workers;
  o.prefetch = 2;
  o.run_ahead = false;
  o.sampler.shuffle = true;
  o.sampler.seed = 3;
  o.max_bad_fraction = 0.5;  // the one bad sample on purpose
  o.transform = parse_transforms("ToUint8");
  return o;
}

constexpr uint64_t kNone = ~uint64_t{0};

// Every batch of `epochs` epochs: each slot's pixel and extra are its index's (bad + 1's, its
// substitute's, for `bad`); returns the samples seen.
int check_batches(Loader& loader, int epochs, uint64_t bad) {
  int samples = 0;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    loader.start_epoch(epoch);
    while (Batch batch = loader.next()) {
      const auto* pixels = static_cast<const uint8_t*>(batch.data());
      const size_t sample_bytes = batch.bytes() / static_cast<size_t>(batch.size());  // the grey pixel as RGB
      for (int s = 0; s < batch.size(); ++s) {
        const uint64_t index = batch.indices()[s] == bad ? bad + 1 : batch.indices()[s];  // its substitute's
        EXPECT_EQ(pixels[static_cast<size_t>(s) * sample_bytes], static_cast<uint8_t>(index)) << "slot " << s;
        if (!batch.extra(s)) {
          ADD_FAILURE() << "slot " << s << " carries no extra";
        } else {
          EXPECT_EQ(*static_cast<const uint64_t*>(batch.extra(s).get()), index) << "slot " << s;
        }
        ++samples;
      }
    }
  }
  return samples;
}

TEST(LoaderReadRunsTest, EachClaimedRunIsReadInOneCallWithTheExtrasItsSlotsHeld) {
  for (const int workers : {1, 3}) {
    auto source = std::make_shared<RunSource>(40, true, 1000, kNone);
    Loader loader(source, options(workers));
    EXPECT_EQ(check_batches(loader, 3, kNone), 120) << workers << " workers";
    const auto runs = source->runs();
    size_t read = 0;
    for (const auto& run : runs) {
      EXPECT_GT(run.size(), 1U) << "runs of one are read with read()";
      read += run.size();
    }
    EXPECT_EQ(read, 120U) << workers << " workers: each sample read in its run";
    EXPECT_TRUE(source->single().empty());
    // Epochs 1 and 2 refill the buffers of earlier batches: the extras they held come with the runs.
    EXPECT_GT(source->retired(), 0) << workers << " workers";
  }
}

TEST(LoaderReadRunsTest, ASubstituteAndWhatARunLeftAreReadOnTheirOwn) {
  for (const size_t per_run : {size_t{1000}, size_t{3}}) {
    auto source = std::make_shared<RunSource>(40, true, per_run, 17);
    Loader loader(source, options(2));
    EXPECT_EQ(check_batches(loader, 1, 17), 40);
    const std::vector<uint64_t> single = source->single();
    EXPECT_EQ(std::count(single.begin(), single.end(), 18), 1) << "17's substitute, 18, read on its own";
    size_t run_reads = 0;
    for (const auto& run : source->runs()) run_reads += std::min(run.size(), per_run);
    // Each sample once in a run or on its own, and the substitute again (17 fails in its run or alone).
    EXPECT_EQ(run_reads + single.size(), 41U) << per_run << " read per run";
  }
}

TEST(LoaderReadRunsTest, ASourceThatDoesNotReadRunsIsReadSampleBySample) {
  auto source = std::make_shared<RunSource>(40, false, 1000, kNone);
  Loader loader(source, options(2));
  EXPECT_EQ(check_batches(loader, 1, kNone), 40);
  EXPECT_TRUE(source->runs().empty());
  const std::vector<uint64_t> single = source->single();
  EXPECT_EQ(single.size(), 40U);
  const std::set<uint64_t> distinct(single.begin(), single.end());
  EXPECT_EQ(distinct.size(), 40U);
}

}  // namespace read_runs
}  // namespace
}  // namespace stoker::data
