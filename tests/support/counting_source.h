// A Source for loader tests: 8x8 grey raw samples whose pixels encode their index, that counts
// its reads and can hold them back, and can turn one sample bad after some reads.
// Thread safety: every member may be called from any thread (the loader's workers read).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::testing {

constexpr int kSide = 8;
constexpr uint64_t kNoLimit = ~uint64_t{0};

// Reads beyond a limit wait until it is raised. Sample `bad` fails every read after its first
// `good_reads` (so it is bad from epoch good_reads on).
class CountingSource final : public data::Source {
 public:
  explicit CountingSource(size_t size, uint64_t bad = kNoLimit, int good_reads = 0)
      : size_(size), bad_(bad), good_reads_(good_reads) {}
  size_t size() const override { return size_; }
  std::string name(size_t i) const override { return "sample-" + std::to_string(i); }
  std::string describe() const override { return "counting"; }
  data::TargetKind target_kind() const override { return data::TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t i) const override { return static_cast<int64_t>(i % 2); }
  void targets(size_t i, float* out) const override { out[0] = static_cast<float>(label(i)); }
  void fixed_shape(int* w, int* h, int* c) const override { *w = *h = kSide, *c = 1; }
  Status read(size_t i, data::SampleData* out) const override {
    bool bad = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++waiting_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return reads_ < limit_; });
      --waiting_;
      ++reads_;
      if (i == bad_) bad = bad_reads_seen_++ >= good_reads_;
      changed_.notify_all();
    }
    if (bad) return Status::failure("unreadable");
    out->storage.resize(kSide * kSide);
    for (int p = 0; p < kSide * kSide; ++p) out->storage[static_cast<size_t>(p)] = static_cast<uint8_t>(i * 7 + p * 3);
    out->bytes = out->storage;
    out->raw = true;
    out->raw_width = out->raw_height = kSide;
    out->raw_channels = 1;
    return Status::ok_status();
  }

  uint64_t reads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return reads_;
  }
  // Reads begun and not yet past the limit (at most momentarily, without one).
  uint64_t waiting() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return waiting_;
  }
  // Waits until `count` reads wait at the limit; false after 20 s (the loader never began them).
  bool wait_for_waiting(uint64_t count) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return waiting_ >= count; });
  }
  // Reads beyond `limit` wait until it is raised. With several workers a later sample may be
  // read before an earlier one: only one worker reads strictly in claim order.
  void limit_reads(uint64_t limit) {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = limit;
    changed_.notify_all();
  }
  // Waits until `count` reads were made; false after 20 s (the loader never made them).
  bool wait_for_reads(uint64_t count) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return reads_ >= count; });
  }

 private:
  size_t size_;
  uint64_t bad_;
  int good_reads_;
  std::vector<std::string> classes_{"0", "1"};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable uint64_t reads_ = 0;
  mutable uint64_t waiting_ = 0;
  mutable int bad_reads_seen_ = 0;
  uint64_t limit_ = kNoLimit;
};

}  // namespace stoker::testing
