// Full-resolution decoded images kept in RAM across epochs (LoaderOptions::cache_decoded_bytes),
// so that from the second epoch on a worker only transforms: no read, no decode.
//
// Entries are added until the byte budget is reached and are never replaced or evicted, so a
// pointer find() returned stays valid for the cache's life. Thread-safe and lock-free: one
// atomic slot per dataset index, published with release/acquire.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "stoker/data/image.h"

namespace stoker::data {

class DecodedCache {
 public:
  DecodedCache(size_t samples, size_t budget_bytes);
  ~DecodedCache();
  DecodedCache(const DecodedCache&) = delete;
  DecodedCache& operator=(const DecodedCache&) = delete;

  // The cached image of sample `index`, or nullptr.
  const Image* find(uint64_t index) const;
  // Keeps a copy of `image` for `index` when the slot is empty and the budget has room;
  // true when stored. Once an image does not fit, full() is true (smaller ones still may).
  bool offer(uint64_t index, const Image& image);

  uint64_t entries() const { return entries_.load(std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t budget() const { return budget_; }
  bool full() const { return full_.load(std::memory_order_relaxed); }

 private:
  const size_t samples_;
  const uint64_t budget_;
  std::unique_ptr<std::atomic<const Image*>[]> slots_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<uint64_t> entries_{0};
  std::atomic<bool> full_{false};
};

}  // namespace stoker::data
