// The one cache of decoded bands of the process's chunked HDF5 datasets (Hdf5ChunkReader): every
// thread and every reader (the files of a pattern too) read through it, so a band read by several
// threads at once (the rows of a shuffled band group, a file read in order by several workers)
// is decoded once.
//
// A band asked for while kept is shared; one asked for while another thread decodes it is waited
// for, not decoded again. Bands are let go least recently used first, so that the bands kept and
// those being decoded take at most capacity_bytes(): the largest of the live readers' requests
// (request(): a loader's band groups, rows read in order). A band that finds no room (every place
// taken by a band being decoded) is decoded for its caller alone and not kept. Memory: at most
// capacity_bytes(), plus, for each thread, one band it decodes outside the cache or still copies
// from after it was let go; shared_bands_bytes() counts those kept.
//
// Thread safety: every call from any number of threads. Decode runs on the calling thread with
// no lock of this class held.
#pragma once

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
  using Band = std::vector<uint8_t>;  // the band decoded, laid out as its reader chooses
  // Decodes band `band` into `out`, which may hold another band (a buffer to reuse: resized and
  // written whole); a failure is the caller's to report.
  using Decode = std::function<Status(size_t band, Band* out)>;

  // The cache every Hdf5ChunkReader reads through. Never destroyed (threads may read during
  // static destruction).
  static SharedBands& process();

  SharedBands() = default;
  ~SharedBands();
  SharedBands(const SharedBands&) = delete;
  SharedBands& operator=(const SharedBands&) = delete;

  // Reader `reader` asks the cache to hold `bytes` from now on (0: it asks for nothing); the
  // capacity is the largest request, and bands beyond it go, least recently used first.
  void request(uint64_t reader, size_t bytes);
  size_t capacity_bytes() const;

  // Band `band` of reader `reader`, `bytes` decoded, by `decode` unless kept or being decoded by
  // another thread (then waited for). Null with the failure in *status when the decode failed.
  std::shared_ptr<const Band> get(uint64_t reader, size_t band, size_t bytes, const Decode& decode, Status* status);

  // Lets go of reader `reader`'s bands and its request (the reader is being destroyed: no thread
  // reads through it).
  void forget(uint64_t reader);

 private:
  struct Key {
    uint64_t reader;
    size_t band;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.reader * 0x9E3779B97F4A7C15ull ^ k.band); }
  };
  struct Entry {
    std::shared_ptr<Band> band;  // null while being decoded
    size_t bytes = 0;            // reserved while being decoded, as decoded after
    uint64_t used = 0;           // clock_ at its last use
  };
  size_t capacity_locked() const STOKER_REQUIRES(mutex_);
  // Lets go of decoded bands, least recently used first, until `room` more bytes fit; returns
  // the last let go when no reader holds it, else null.
  std::shared_ptr<Band> evict_for(size_t room) STOKER_REQUIRES(mutex_);
  void erase(std::unordered_map<Key, Entry, KeyHash>::iterator it) STOKER_REQUIRES(mutex_);

  mutable Mutex mutex_;
  std::condition_variable decoded_;
  uint64_t clock_ STOKER_GUARDED_BY(mutex_) = 0;
  size_t bytes_ STOKER_GUARDED_BY(mutex_) = 0;  // of the entries, those being decoded too
  std::unordered_map<uint64_t, size_t> requests_ STOKER_GUARDED_BY(mutex_);
  std::unordered_map<Key, Entry, KeyHash> entries_ STOKER_GUARDED_BY(mutex_);
};

}  // namespace stoker::data
