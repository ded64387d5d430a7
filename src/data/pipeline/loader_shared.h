// State shared by the Loader, its worker threads and outstanding Batches.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "decoded_cache.h"
#include "stoker/core/mutex.h"
#include "stoker/data/loader.h"

namespace stoker::data {

// One pooled batch: sample memory from the allocator plus target/index arrays, all sized
// once for batch_size samples.
struct BatchBuffer {
  void* data = nullptr;
  size_t capacity_bytes = 0;
  std::vector<int64_t> labels;
  std::vector<float> targets;
  std::vector<uint64_t> indices;
  int samples = 0;
  int64_t epoch = 0;
  int64_t batch_index = 0;
};

// A batch whose samples are being written or are all written.
struct InFlight {
  int64_t batch_index = 0;
  BatchBuffer* buffer = nullptr;
  int remaining = 0;  // samples not yet written
};

struct LoaderShared {
  // Immutable after construction.
  TransformSpec spec;
  int target_dim = 1;
  int claim_chunk = 1;  // consecutive samples of one batch a worker claims at once
  BufferAllocator* allocator = nullptr;
  std::unique_ptr<DecodedCache> cache;  // null unless options.cache_decoded_bytes > 0

  Mutex mutex;
  std::condition_variable work_cv;   // workers: a sample to claim or a buffer came free
  std::condition_variable ready_cv;  // consumer: a batch completed, or a failure
  std::condition_variable idle_cv;   // start_epoch: all claimed samples finished

  std::vector<std::unique_ptr<BatchBuffer>> buffers STOKER_GUARDED_BY(mutex);  // every buffer ever made (owned)
  bool stop STOKER_GUARDED_BY(mutex) = false;
  // Workers with an id below this claim samples; the rest are parked.
  int active_workers STOKER_GUARDED_BY(mutex) = 0;
  bool active STOKER_GUARDED_BY(mutex) = false;  // an epoch is being produced
  int64_t epoch STOKER_GUARDED_BY(mutex) = 0;
  EpochPlan plan STOKER_GUARDED_BY(mutex);
  int64_t next_claim STOKER_GUARDED_BY(mutex) = 0;    // next position in plan.indices to hand to a worker
  int64_t next_consume STOKER_GUARDED_BY(mutex) = 0;  // next batch next() returns
  std::deque<InFlight> in_flight STOKER_GUARDED_BY(mutex);  // ordered by batch_index
  std::vector<BatchBuffer*> free_buffers STOKER_GUARDED_BY(mutex);
  int busy_workers STOKER_GUARDED_BY(mutex) = 0;  // workers writing claimed samples
  // start_epoch waits on idle_cv for busy_workers == 0.
  bool epoch_switch_waiting STOKER_GUARDED_BY(mutex) = false;
  std::string failure STOKER_GUARDED_BY(mutex);  // non-empty: the epoch failed; next() throws this
  EpochStats stats STOKER_GUARDED_BY(mutex);

  ~LoaderShared() {
    for (auto& buffer : buffers) allocator->deallocate(buffer->data, buffer->capacity_bytes);
  }

  // Returns a buffer to the pool (called by Batch).
  void give_back(BatchBuffer* buffer) STOKER_EXCLUDES(mutex) {
    {
      MutexLock lock(mutex);
      free_buffers.push_back(buffer);
    }
    work_cv.notify_all();
    ready_cv.notify_all();  // a consumer counting down to "every buffer held" looks again
  }

  // No buffer is free or being filled while batches remain: the consumer holds them all.
  bool consumer_holds_every_buffer() const STOKER_REQUIRES(mutex) {
    return active && in_flight.empty() && free_buffers.empty() && next_consume < plan.num_batches;
  }

  // The batch next() returns is complete, or the epoch failed.
  bool next_ready() const STOKER_REQUIRES(mutex) {
    return !failure.empty() ||
           (!in_flight.empty() && in_flight.front().batch_index == next_consume && in_flight.front().remaining == 0);
  }
};

}  // namespace stoker::data
