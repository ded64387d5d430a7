#include "decoded_cache.h"

#include <cstring>

namespace stoker::data {

DecodedCache::DecodedCache(size_t samples, size_t budget_bytes)
    : samples_(samples), budget_(budget_bytes), slots_(new std::atomic<const Image*>[samples]) {
  for (size_t i = 0; i < samples_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
}

DecodedCache::~DecodedCache() {
  for (size_t i = 0; i < samples_; ++i) delete slots_[i].load(std::memory_order_relaxed);
}

const Image* DecodedCache::find(uint64_t index) const {
  if (index >= samples_) return nullptr;
  return slots_[index].load(std::memory_order_acquire);
}

bool DecodedCache::offer(uint64_t index, const Image& image) {
  if (index >= samples_ || slots_[index].load(std::memory_order_relaxed) != nullptr) return false;
  const uint64_t size = static_cast<uint64_t>(image.stride()) * static_cast<uint64_t>(image.height());
  // Reserve the bytes first; give them back when over budget or when another worker won.
  const uint64_t before = bytes_.fetch_add(size, std::memory_order_relaxed);
  if (before + size > budget_) {
    bytes_.fetch_sub(size, std::memory_order_relaxed);
    full_.store(true, std::memory_order_relaxed);
    return false;
  }
  auto copy = std::make_unique<Image>();
  copy->reshape(image.width(), image.height(), image.channels());
  std::memcpy(copy->data(), image.data(), size);
  const Image* expected = nullptr;
  if (!slots_[index].compare_exchange_strong(expected, copy.get(), std::memory_order_release,
                                             std::memory_order_relaxed)) {
    bytes_.fetch_sub(size, std::memory_order_relaxed);
    return false;
  }
  copy.release();
  entries_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace stoker::data
