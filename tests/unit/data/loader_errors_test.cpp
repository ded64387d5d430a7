// Loader failure paths: bad samples, on_error=fail, the bad-fraction limit, and a source
// that throws. Whatever happens in a worker surfaces on the consumer's next() call.
#include <gtest/gtest.h>

#include <stdexcept>

#include "stoker/core/error.h"
#include "stoker/data/loader.h"

namespace stoker::data {
namespace {

// 8x8 gray raw samples; the listed indices fail to read (or throw).
class FlakySource final : public Source {
 public:
  FlakySource(size_t size, std::vector<uint64_t> bad, bool throw_instead = false)
      : size_(size), bad_(std::move(bad)), throw_(throw_instead) {}
  size_t size() const override { return size_; }
  std::string name(size_t i) const override { return "sample-" + std::to_string(i); }
  std::string describe() const override { return "flaky"; }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t i) const override { return static_cast<int64_t>(i % 2); }
  void targets(size_t i, float* out) const override { out[0] = static_cast<float>(label(i)); }
  void fixed_shape(int* w, int* h, int* c) const override { *w = *h = 8, *c = 1; }
  Status read(size_t i, SampleData* out) const override {
    for (uint64_t b : bad_) {
      if (b == i) {
        if (throw_) throw std::runtime_error("disk on fire");
        return Status::failure("unreadable");
      }
    }
    out->storage.assign(64, static_cast<uint8_t>(i));
    out->bytes = out->storage;
    out->raw = true;
    out->raw_width = out->raw_height = 8;
    out->raw_channels = 1;
    return Status::ok_status();
  }

 private:
  size_t size_;
  std::vector<uint64_t> bad_;
  bool throw_;
  std::vector<std::string> classes_{"0", "1"};
};

LoaderOptions raw_options() {
  LoaderOptions options;
  options.batch_size = 4;
  options.workers = 2;
  options.sampler.shuffle = false;
  options.transform = parse_transforms("none, Grayscale, ToUint8");
  return options;
}

TEST(LoaderErrorsTest, BadSamplesAreSubstitutedByTheNextGoodOneAndListed) {
  auto source = std::make_shared<FlakySource>(200, std::vector<uint64_t>{5, 6});
  LoaderOptions options = raw_options();
  options.max_bad_fraction = 0.05;
  Loader loader(source, options);
  loader.start_epoch(0);
  Batch first = loader.next();
  Batch second = loader.next();
  ASSERT_TRUE(second);
  const auto* pixels = static_cast<const uint8_t*>(second.data());
  // Samples 5 and 6 fail: both are replaced by sample 7 (the next that loads), label included.
  EXPECT_EQ(pixels[1 * 64], 7);
  EXPECT_EQ(pixels[2 * 64], 7);
  EXPECT_EQ(second.labels()[1], 1);
  EXPECT_EQ(second.indices()[1], 5u) << "indices name the sample asked for";
  while (loader.next()) {
  }
  const EpochStats stats = loader.epoch_stats();
  EXPECT_EQ(stats.bad, 2u);
  ASSERT_EQ(stats.bad_samples.size(), 2u);
  EXPECT_EQ(stats.bad_samples[0].name, "sample-5");
  EXPECT_EQ(stats.bad_samples[0].reason, "unreadable");
}

TEST(LoaderErrorsTest, OnErrorFailStopsWithThePath) {
  auto source = std::make_shared<FlakySource>(40, std::vector<uint64_t>{13});
  LoaderOptions options = raw_options();
  options.on_error = OnError::kFail;
  Loader loader(source, options);
  loader.start_epoch(0);
  try {
    while (loader.next()) {
    }
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad sample sample-13: unreadable"), std::string::npos) << e.what();
  }
  // The loader stays usable: a new epoch clears the failure. Resumed past sample 13's batch,
  // the rest of the epoch loads.
  loader.start_epoch(1, 4);
  int batches = 0;
  while (loader.next()) ++batches;
  EXPECT_EQ(batches, 6);
}

TEST(LoaderErrorsTest, TooManyBadSamplesFailTheEpoch) {
  auto source = std::make_shared<FlakySource>(100, std::vector<uint64_t>{1, 2});
  LoaderOptions options = raw_options();  // default limit 1 %: 2 of 100 is over
  Loader loader(source, options);
  loader.start_epoch(0);
  try {
    while (loader.next()) {
    }
    FAIL() << "no error";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("2 of 100 samples in epoch 0 are bad"), std::string::npos) << message;
    EXPECT_NE(message.find("max_bad_fraction=1%"), std::string::npos) << message;
    EXPECT_NE(message.find("sample-1: unreadable"), std::string::npos) << message;
  }
}

TEST(LoaderErrorsTest, AWorkerExceptionSurfacesOnNextNotAsTerminate) {
  auto source = std::make_shared<FlakySource>(40, std::vector<uint64_t>{9}, true);
  Loader loader(source, raw_options());
  loader.start_epoch(0);
  try {
    while (loader.next()) {
    }
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("worker failed on sample-9: disk on fire"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stoker::data
