// Decoded bands of a chunked HDF5 dataset kept for every thread that reads it (Hdf5ChunkReader
// under Source::keep_bands), so that rows shuffled by band groups (sampler.h) decode each band
// once per epoch however many threads read them.
//
// Up to capacity() bands are kept, those used last; a band asked for while one thread decodes
// it is waited for, not decoded again. A band that finds every place taken by a band still
// being decoded is decoded for its caller alone and not kept. Memory: capacity() bands, plus,
// for each thread, one band it decodes outside the cache or still copies from after it was let
// go; shared_bands_bytes() counts those kept.
//
// Thread safety: every call from any number of threads. Decode runs on the calling thread with
// no lock of this class held.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/mutex.h"

namespace stoker::data {

// The bytes the SharedBands of the process keep, together.
size_t shared_bands_bytes();

class SharedBands {
 public:
  using Band = std::vector<std::vector<uint8_t>>;  // the band's chunks, decoded
  // Decodes band `band` into `out`, which may hold another band's chunks (buffers to reuse: each
  // chunk is written whole); a failure is the caller's to report.
  using Decode = std::function<Status(size_t band, Band* out)>;

  SharedBands() = default;
  ~SharedBands();
  SharedBands(const SharedBands&) = delete;
  SharedBands& operator=(const SharedBands&) = delete;

  // Keeps up to `bands` bands from now on (0: none, what it starts with); lets go of those used
  // least recently beyond it.
  void set_capacity(size_t bands);
  size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }  // takes no lock

  // Band `band`, decoded by `decode` unless kept or being decoded by another thread (then
  // waited for). Null with the failure in *status when the decode failed.
  std::shared_ptr<const Band> get(size_t band, const Decode& decode, Status* status);

 private:
  struct Entry {
    std::shared_ptr<Band> band;  // null while being decoded
    size_t bytes = 0;
    uint64_t used = 0;  // clock_ at its last use
  };
  // Lets go of decoded bands, least recently used first, until fewer than `room` remain; returns
  // the last let go when no reader holds it, else null.
  std::shared_ptr<Band> evict_to(size_t room) STOKER_REQUIRES(mutex_);

  Mutex mutex_;
  std::condition_variable decoded_;
  std::atomic<size_t> capacity_{0};  // written under mutex_
  uint64_t clock_ STOKER_GUARDED_BY(mutex_) = 0;
  std::unordered_map<size_t, Entry> entries_ STOKER_GUARDED_BY(mutex_);
};

}  // namespace stoker::data
