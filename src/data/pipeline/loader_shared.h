// State shared by the Loader, its worker threads and outstanding Batches.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "decoded_cache.h"
#include "stoker/core/mutex.h"
#include "stoker/data/loader.h"

namespace stoker::data {

// One pooled batch: sample memory from the allocator plus target/index arrays, all sized
// once for `capacity` samples (the loader's batch_capacity when it was made).
struct BatchBuffer {
  void* data = nullptr;
  size_t capacity_bytes = 0;
  int capacity = 0;  // samples it holds
  std::vector<int64_t> labels;
  std::vector<float> targets;
  std::vector<uint64_t> indices;
  std::vector<std::shared_ptr<const void>> extras;  // SampleData::extra of each slot
  std::shared_ptr<const void> finished;             // Source::finish_batch's, once the batch is written
  std::vector<SampleRecord> records;                // how each slot's sample was made
  std::vector<GeometryTargets> geometry;            // each slot's keypoints and boxes, moved
  std::vector<GpuSample> gpu;                       // each slot's JPEG left for the GPU (gpu_handoff)
  std::vector<uint8_t> on_gpu;                      // 1 where gpu[slot] is the slot's (Batch::gpu_sample)
  int samples = 0;
  int64_t epoch = 0;
  int64_t batch_index = 0;
  // Its epoch run's draws (EpochRun::seed, rng_epoch), set when the batch is claimed.
  uint64_t seed = 0;
  int64_t rng_epoch = 0;
};

// A batch whose samples are being written or are all written.
struct InFlight {
  int64_t batch_index = 0;
  BatchBuffer* buffer = nullptr;
  int remaining = 0;  // samples not yet written
};

// One epoch being produced: its plan, the samples claimed so far, its batches in flight and
// its statistics. A Loader has two: the consumer's epoch and the one workers run ahead into.
struct EpochRun {
  bool active = false;  // workers may claim its samples
  int64_t epoch = 0;
  // What its order and samples draw from: SampleRng(seed, rng_epoch, i), fixed when the run is
  // made (Loader::reseed changes the runs made after it).
  uint64_t seed = 0;
  int64_t rng_epoch = 0;
  EpochPlan plan;
  int64_t next_claim = 0;          // next position in plan.indices to hand to a worker
  std::deque<InFlight> in_flight;  // ordered by batch_index
  int busy = 0;                    // workers writing its claimed samples
  std::string failure;             // non-empty: the epoch failed; next() throws this once it is current
  // The failure is max_bad_fraction's: its line counts the samples before the epoch's end, which
  // a worker still writing an earlier position may move down (a past-the-end position read
  // ahead is reported first). next() writes the line once no worker is writing (busy == 0).
  bool failure_counts_samples = false;
  bool given_order = false;  // the consumer gave its order (no run-ahead after it: the next is unknown)
  // The first position whose sample the source has not (Status::past_end): the epoch ends there.
  int64_t end = std::numeric_limits<int64_t>::max();
  EpochStats stats;

  bool fully_claimed() const { return next_claim >= std::min(end, static_cast<int64_t>(plan.indices.size())); }
  // Batch `batch` is past the epoch's end: it starts at or after `end`, or, with `drop_last`,
  // would be cut short by it.
  bool ends_before(int64_t batch, bool drop_last) const {
    const int64_t begin = plan.batch_begin(batch);
    return begin >= end || (drop_last && begin + plan.batch_samples(batch) > end);
  }
  // Workers may claim from it now.
  bool claimable() const { return active && failure.empty() && !fully_claimed(); }
  // The failure next() throws is final: no worker still writing could change its line.
  bool failure_settled() const { return !failure.empty() && (!failure_counts_samples || busy == 0); }
};

struct LoaderShared {
  // Immutable after construction.
  TransformSpec spec;
  int frames = 0;           // LoaderOptions::clip.frames
  size_t sample_bytes = 0;  // one sample's: spec.sample_bytes(), times the frames of a clip
  int target_dim = 1;
  int claim_chunk = 1;          // consecutive samples of one batch a worker claims at once
  bool run_ahead = true;        // LoaderOptions::run_ahead
  bool drop_last = false;       // LoaderOptions::sampler.drop_last (an epoch that ends early: EpochRun::end)
  bool finish_batches = false;  // Source::finishes_batches()
  BufferAllocator* allocator = nullptr;
  std::unique_ptr<DecodedCache> cache;  // null unless options.cache_decoded_bytes > 0
  // Loader::gpu_share(): the consumer sets it, workers read it (relaxed: a sample's decision
  // needs no ordering with anything else).
  std::atomic<double> gpu_share{1.0};

  Mutex mutex;
  std::condition_variable work_cv;   // workers: a sample to claim or a buffer came free
  std::condition_variable ready_cv;  // consumer: a batch completed, or a failure
  std::condition_variable idle_cv;   // start_epoch: all claimed samples finished

  std::vector<std::unique_ptr<BatchBuffer>> buffers STOKER_GUARDED_BY(mutex);  // every buffer ever made (owned)
  bool stop STOKER_GUARDED_BY(mutex) = false;
  // Workers with an id below this claim samples; the rest are parked.
  int active_workers STOKER_GUARDED_BY(mutex) = 0;
  // runs[current_run] is the consumer's epoch; the other, when active, the next one (e + 1),
  // begun by workers once every sample of the current one was claimed. Claims point at their
  // run, so which one is current can change while samples are being written.
  EpochRun runs[2] STOKER_GUARDED_BY(mutex);
  int current_run STOKER_GUARDED_BY(mutex) = 0;
  int64_t next_consume STOKER_GUARDED_BY(mutex) = 0;  // next batch of the current run next() returns
  // Bumped by every start_epoch. A worker planning the next epoch (outside the lock) installs
  // it only if no start_epoch came in between; ahead_generation marks a generation whose
  // run-ahead was begun, so it is begun once.
  uint64_t generation STOKER_GUARDED_BY(mutex) = 0;
  uint64_t ahead_generation STOKER_GUARDED_BY(mutex) = ~uint64_t{0};
  std::vector<BatchBuffer*> free_buffers STOKER_GUARDED_BY(mutex);
  // Samples every buffer workers fill holds: batch_size, or a given epoch's largest batch
  // (Loader::fit_buffers). A buffer given back at another size waits in unfit_buffers until
  // the consumer makes it again at this one (outside the lock: the allocator may take the GIL).
  int batch_capacity STOKER_GUARDED_BY(mutex) = 0;
  std::vector<BatchBuffer*> unfit_buffers STOKER_GUARDED_BY(mutex);
  // Loader::reseed's: epoch e of a run made now draws with `seed` from epoch e - seed_epoch.
  uint64_t seed STOKER_GUARDED_BY(mutex) = 0;
  int64_t seed_epoch STOKER_GUARDED_BY(mutex) = 0;
  // Why a worker could not start (Source::on_worker_start threw): every epoch fails with it.
  std::string start_failure STOKER_GUARDED_BY(mutex);
  // start_epoch waits on idle_cv for a run's busy == 0.
  bool epoch_switch_waiting STOKER_GUARDED_BY(mutex) = false;
  // start_epoch's on_order runs: workers claim nothing until it returns.
  bool claims_held STOKER_GUARDED_BY(mutex) = false;
  // Tests only (loader_testing.h): called each time a worker found nothing to claim and no epoch to
  // run ahead into, before it waits for work.
  std::function<void()> on_worker_idle STOKER_GUARDED_BY(mutex);

  EpochRun& current() STOKER_REQUIRES(mutex) { return runs[current_run]; }
  const EpochRun& current() const STOKER_REQUIRES(mutex) { return runs[current_run]; }
  EpochRun& ahead() STOKER_REQUIRES(mutex) { return runs[1 - current_run]; }
  // The epoch whose draws epoch `epoch` (>= 0) takes under the seed now (Loader::draws_epoch).
  int64_t rng_epoch(int64_t epoch) const STOKER_REQUIRES(mutex) {
    return epoch >= seed_epoch ? epoch - seed_epoch : epoch - seed_epoch + Loader::kDrawEpochs;
  }
  // Whether `run` draws as epoch run.epoch would under the seed now.
  bool draws_now(const EpochRun& run) const STOKER_REQUIRES(mutex) {
    return run.seed == seed && run.rng_epoch == rng_epoch(run.epoch);
  }

  ~LoaderShared() {
    for (auto& buffer : buffers) allocator->deallocate(buffer->data, buffer->capacity_bytes);
  }

  // Returns a buffer to the pool (called by Batch).
  void give_back(BatchBuffer* buffer) STOKER_EXCLUDES(mutex) {
    {
      MutexLock lock(mutex);
      (buffer->capacity != batch_capacity ? unfit_buffers : free_buffers).push_back(buffer);
    }
    work_cv.notify_all();
    ready_cv.notify_all();  // a consumer counting down to "every buffer held" looks again
  }

  // Abandons both runs (start_epoch, or buffers made again at a larger size): a plan being made
  // for a run ahead is not installed, workers claim nothing more, the samples being written
  // finish (the call waits for them, releasing the lock meanwhile), their batches' buffers come
  // free and both runs are empty and inactive. `lock` holds `mutex`.
  void abandon_runs(MutexLock& lock) STOKER_REQUIRES(mutex) {
    ++generation;
    for (EpochRun& run : runs) run.active = false;
    epoch_switch_waiting = true;
    while (runs[0].busy != 0 || runs[1].busy != 0) lock.wait(idle_cv);
    epoch_switch_waiting = false;
    for (EpochRun& run : runs) {
      for (const InFlight& entry : run.in_flight) free_buffers.push_back(entry.buffer);
      run = EpochRun{};
    }
  }

  // The buffers `from` names (free_buffers or unfit_buffers), taken out of the pool (`buffers`)
  // and `from` emptied.
  std::vector<std::unique_ptr<BatchBuffer>> take_buffers(std::vector<BatchBuffer*>& from) STOKER_REQUIRES(mutex) {
    std::vector<std::unique_ptr<BatchBuffer>> taken;
    for (BatchBuffer* buffer : from) {
      const auto owned =
          std::find_if(buffers.begin(), buffers.end(), [buffer](const auto& b) { return b.get() == buffer; });
      taken.push_back(std::move(*owned));
      buffers.erase(owned);
    }
    from.clear();
    return taken;
  }

  // No buffer is free or being filled while batches remain: the consumer holds them all.
  bool consumer_holds_every_buffer() const STOKER_REQUIRES(mutex) {
    const EpochRun& run = current();
    return run.active && run.in_flight.empty() && free_buffers.empty() && unfit_buffers.empty() &&
           next_consume < run.plan.num_batches;
  }

  // The batch next() returns is complete, the epoch ended before it, or the epoch failed
  // (and its failure is settled).
  bool next_ready() const STOKER_REQUIRES(mutex) {
    const EpochRun& run = current();
    if (!run.failure.empty()) return run.failure_settled();
    return run.ends_before(next_consume, drop_last) ||
           (!run.in_flight.empty() && run.in_flight.front().batch_index == next_consume &&
            run.in_flight.front().remaining == 0);
  }
};

}  // namespace stoker::data
