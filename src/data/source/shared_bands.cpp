// Decoded bands kept for every thread (shared_bands.h).
#include "shared_bands.h"

#include <atomic>

namespace stoker::data {

namespace {

std::atomic<size_t> g_shared_bytes{0};

size_t bytes_of(const SharedBands::Band& band) {
  size_t bytes = 0;
  for (const auto& chunk : band) bytes += chunk.capacity();
  return bytes;
}

}  // namespace

size_t shared_bands_bytes() { return g_shared_bytes.load(std::memory_order_relaxed); }

SharedBands::~SharedBands() {
  const MutexLock lock(mutex_);
  for (const auto& [band, entry] : entries_) g_shared_bytes.fetch_sub(entry.bytes, std::memory_order_relaxed);
}

void SharedBands::set_capacity(size_t bands) {
  const MutexLock lock(mutex_);
  capacity_.store(bands, std::memory_order_relaxed);
  evict_to(bands + 1);  // what it returns goes here
}

std::shared_ptr<SharedBands::Band> SharedBands::evict_to(size_t room) {
  std::shared_ptr<Band> unheld;
  while (entries_.size() >= room) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.band && (oldest == entries_.end() || it->second.used < oldest->second.used)) oldest = it;
    }
    if (oldest == entries_.end()) break;  // every one is being decoded
    g_shared_bytes.fetch_sub(oldest->second.bytes, std::memory_order_relaxed);
    unheld = oldest->second.band.use_count() == 1 ? std::move(oldest->second.band) : nullptr;
    entries_.erase(oldest);
  }
  return unheld;
}

std::shared_ptr<const SharedBands::Band> SharedBands::get(size_t band, const Decode& decode, Status* status) {
  MutexLock lock(mutex_);
  for (auto it = entries_.find(band); it != entries_.end(); it = entries_.find(band)) {
    if (it->second.band) {
      it->second.used = ++clock_;
      *status = Status::ok_status();
      return it->second.band;
    }
    lock.wait(decoded_);  // another thread decodes it
  }
  const size_t capacity = capacity_.load(std::memory_order_relaxed);
  // The band let go to make room is decoded into (its buffers reused, not allocated again:
  // memory then stays where the threads' allocators first put it).
  std::shared_ptr<Band> decoded = evict_to(capacity);
  const bool keep = entries_.size() < capacity;
  if (keep) entries_.emplace(band, Entry{});
  lock.unlock();
  if (!decoded) decoded = std::make_shared<Band>();
  *status = decode(band, decoded.get());
  lock.lock();
  if (keep) {
    const auto it = entries_.find(band);
    if (status->ok()) {
      it->second.band = decoded;
      it->second.bytes = bytes_of(*decoded);
      it->second.used = ++clock_;
      g_shared_bytes.fetch_add(it->second.bytes, std::memory_order_relaxed);
    } else {
      entries_.erase(it);
    }
    decoded_.notify_all();
  }
  if (!status->ok()) return nullptr;
  return decoded;
}

}  // namespace stoker::data
