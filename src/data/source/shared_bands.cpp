// The process's cache of decoded bands (shared_bands.h).
#include "shared_bands.h"

#include <algorithm>
#include <atomic>

namespace stoker::data {

namespace {

std::atomic<size_t> g_shared_bytes{0};

}  // namespace

size_t shared_bands_bytes() { return g_shared_bytes.load(std::memory_order_relaxed); }

SharedBands& SharedBands::process() {
  static auto* bands = new SharedBands;
  return *bands;
}

SharedBands::~SharedBands() {
  const MutexLock lock(mutex_);
  while (!entries_.empty()) erase(entries_.begin());
}

void SharedBands::erase(std::unordered_map<Key, Entry, KeyHash>::iterator it) {
  bytes_ -= it->second.bytes;
  if (it->second.band) g_shared_bytes.fetch_sub(it->second.bytes, std::memory_order_relaxed);
  entries_.erase(it);
}

size_t SharedBands::capacity_locked() const {
  size_t most = 0;
  for (const auto& [reader, bytes] : requests_) most = std::max(most, bytes);
  return most;
}

size_t SharedBands::capacity_bytes() const {
  const MutexLock lock(mutex_);
  return capacity_locked();
}

void SharedBands::request(uint64_t reader, size_t bytes) {
  const MutexLock lock(mutex_);
  if (bytes == 0) {
    requests_.erase(reader);
  } else {
    requests_[reader] = bytes;
  }
  evict_for(0);  // what it returns goes here
}

void SharedBands::forget(uint64_t reader) {
  const MutexLock lock(mutex_);
  requests_.erase(reader);
  for (auto it = entries_.begin(); it != entries_.end();) {
    const auto next = std::next(it);
    if (it->first.reader == reader) erase(it);
    it = next;
  }
  evict_for(0);
}

std::shared_ptr<SharedBands::Band> SharedBands::evict_for(size_t room) {
  const size_t capacity = capacity_locked();
  std::shared_ptr<Band> unheld;
  while (bytes_ + room > capacity) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.band && (oldest == entries_.end() || it->second.used < oldest->second.used)) oldest = it;
    }
    if (oldest == entries_.end()) break;  // every one is being decoded
    unheld = oldest->second.band.use_count() == 1 ? std::move(oldest->second.band) : nullptr;
    g_shared_bytes.fetch_sub(oldest->second.bytes, std::memory_order_relaxed);
    oldest->second.band = nullptr;
    bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
  }
  return unheld;
}

std::shared_ptr<const SharedBands::Band> SharedBands::get(uint64_t reader, size_t band, size_t bytes,
                                                          const Decode& decode, Status* status) {
  const Key key{reader, band};
  MutexLock lock(mutex_);
  for (auto it = entries_.find(key); it != entries_.end(); it = entries_.find(key)) {
    if (it->second.band) {
      it->second.used = ++clock_;
      *status = Status::ok_status();
      return it->second.band;
    }
    lock.wait(decoded_);  // another thread decodes it
  }
  // The band let go to make room is decoded into (its buffers reused, not allocated again:
  // memory then stays where the threads' allocators first put it).
  const bool fits = bytes <= capacity_locked();  // else the kept bands stay, and this one is not kept
  std::shared_ptr<Band> decoded = fits ? evict_for(bytes) : nullptr;
  const bool keep = fits && bytes_ + bytes <= capacity_locked();
  if (keep) {
    entries_.emplace(key, Entry{nullptr, bytes, 0});
    bytes_ += bytes;
  }
  lock.unlock();
  if (!decoded) decoded = std::make_shared<Band>();
  *status = decode(band, decoded.get());
  lock.lock();
  if (keep) {
    const auto it = entries_.find(key);
    if (status->ok()) {
      it->second.band = decoded;
      it->second.used = ++clock_;
      g_shared_bytes.fetch_add(it->second.bytes, std::memory_order_relaxed);
    } else {
      erase(it);
    }
    decoded_.notify_all();
  }
  if (!status->ok()) return nullptr;
  return decoded;
}

}  // namespace stoker::data
