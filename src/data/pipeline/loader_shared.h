// State shared by the Loader, its worker threads and outstanding Batches.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "decoded_cache.h"
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

  std::vector<std::unique_ptr<BatchBuffer>> buffers;  // every buffer ever made (owned)

  std::mutex mutex;
  std::condition_variable work_cv;   // workers: a sample to claim or a buffer came free
  std::condition_variable ready_cv;  // consumer: a batch completed, or a failure
  std::condition_variable idle_cv;   // start_epoch: all claimed samples finished

  // Everything below is guarded by `mutex` (and `buffers` grows only under it).
  bool stop = false;
  int active_workers = 0;  // workers with an id below this claim samples; the rest are parked
  bool active = false;  // an epoch is being produced
  int64_t epoch = 0;
  EpochPlan plan;
  int64_t next_claim = 0;          // next position in plan.indices to hand to a worker
  int64_t next_consume = 0;        // next batch next() returns
  std::deque<InFlight> in_flight;  // ordered by batch_index
  std::vector<BatchBuffer*> free_buffers;
  int busy_workers = 0;            // workers writing claimed samples
  bool epoch_switch_waiting = false;  // start_epoch waits on idle_cv for busy_workers == 0
  std::string failure;             // non-empty: the epoch failed; next() throws this
  EpochStats stats;

  ~LoaderShared() {
    for (auto& buffer : buffers) allocator->deallocate(buffer->data, buffer->capacity_bytes);
  }

  // Returns a buffer to the pool (called by Batch).
  void give_back(BatchBuffer* buffer) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      free_buffers.push_back(buffer);
    }
    work_cv.notify_all();
  }
};

}  // namespace stoker::data
