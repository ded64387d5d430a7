#include "stoker/data/loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <thread>

#include "data/transform/features.h"
#include "data/transform/fit_cache.h"
#include "loader_shared.h"
#include "sample_loader.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/numbers.h"
#include "stoker/data/loader_keys.h"

namespace stoker::data {

namespace {

constexpr int kSubstituteTries = 16;
constexpr size_t kMaxBadListed = 1000;

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2g%%", fraction * 100.0);
  return text;
}

// The total of buffers in flight (LoaderOptions::prefetch, set_prefetch).
std::string buffers_message(int prefetch) {
  if (prefetch >= 1 && prefetch <= kMaxBuffers) return "";
  return fmt::format("prefetch must be between 1 and {} (got {})", kMaxBuffers, prefetch);
}

void validate(const LoaderOptions& options, const Source& source) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw UsageError(message);
  };
  // The ranges are the loader's table's (stoker/data/loader_keys.h); messages name the members.
  for (const std::string& message :
       {range_message(LoaderKey::kBatchSize, int64_t{options.batch_size}, "batch_size"),
        range_message(LoaderKey::kWorkers, int64_t{options.workers}, "workers"), buffers_message(options.prefetch),
        range_message(LoaderKey::kMaxBadFraction, options.max_bad_fraction, "max_bad_fraction")}) {
    require(message.empty(), message);
  }
  require(options.decode.max_pixels >= 1,
          "max_pixels must be >= 1 (got " + std::to_string(options.decode.max_pixels) + ")");
  require(source.size() > 0, "the dataset is empty");
  options.transform.validate();
  require(!options.clip.enabled() || options.cache_decoded_bytes == 0,
          "the decoded cache keeps single images, not clips' frames; leave cache_decoded_bytes 0 with frames_per_clip");
}

// Bytes of one sample in a batch: a clip's frames one after another.
size_t sample_bytes_of(const LoaderOptions& options) {
  return options.transform.sample_bytes() * static_cast<size_t>(std::max(1, options.clip.frames));
}

}  // namespace

// ---- a sample into its slot: the workers', and redo_on_cpu's ---------------------------------

namespace {

// `sampler` drawing with `seed` (Loader::reseed's, not the options').
SamplerOptions seeded(SamplerOptions sampler, uint64_t seed) {
  sampler.seed = seed;
  return sampler;
}

// Where one sample goes and which it is.
struct SlotJob {
  EpochRun* run;  // the epoch run its statistics go to
  int64_t epoch;
  BatchBuffer* buffer;
  int slot;
  uint64_t index;   // the dataset sample to load (a bad one's substitutes follow it)
  uint64_t stream;  // of the sample's random draws (EpochPlan::stream)
};

// Why the epoch stops when more of its samples are bad than max_bad_fraction allows, else "".
std::string over_max_bad(const Source& source, const LoaderOptions& options, const EpochStats& stats, int64_t epoch) {
  if (static_cast<double>(stats.bad) <= options.max_bad_fraction * static_cast<double>(stats.samples)) return "";
  const bool python = options.words == FrontEnd::kPython;
  const std::string_view max_bad =
      python ? loader_key(LoaderKey::kMaxBadFraction).python : loader_key(LoaderKey::kMaxBadFraction).yaml;
  const BadSample& first = stats.bad_samples.front();
  return fmt::format(
      "{} of {} samples in epoch {} are bad, over the limit {}={}; first: {}: {}. Fix or remove them, {}, or raise {}",
      stats.bad, stats.samples, epoch, max_bad, percent(options.max_bad_fraction), source.shown_name(first.index),
      first.reason,
      python ? "leave them out of the data or the sampler (stats()['bad_samples'] names them; stoker scan -o "
               "bad.txt lists all of a path's)"
             : "leave them out with --exclude-list (stoker scan -o bad.txt lists them all)",
      max_bad);
}

// The line next() throws for `run`'s settled failure (EpochRun::failure_settled): max_bad_fraction's
// written now, when the end can no longer move, so it counts the samples before that end.
std::string failure_line(const Source& source, const LoaderOptions& options, const EpochRun& run) {
  if (run.failure_counts_samples) {
    if (std::string line = over_max_bad(source, options, run.stats, run.epoch); !line.empty()) return line;
  }
  return run.failure;
}

// Records sample `index` as bad in `run`'s statistics, and fails the run as the options say
// (on_error=fail, or over max_bad_fraction).
void record_bad(LoaderShared& shared, const Source& source, const LoaderOptions& options, EpochRun& run, int64_t epoch,
                uint64_t index, const std::string& reason) STOKER_EXCLUDES(shared.mutex) {
  MutexLock lock(shared.mutex);
  EpochStats& stats = run.stats;  // the epoch run ahead into keeps its own statistics and failure
  ++stats.bad;
  // Kept sorted by index, so the report is the same whatever order the workers ran in.
  auto& listed = stats.bad_samples;
  const auto at =
      std::lower_bound(listed.begin(), listed.end(), index, [](const BadSample& b, uint64_t i) { return b.index < i; });
  if (at != listed.end() && at->index == index) return;  // a repeated sample, listed once
  if (listed.size() < kMaxBadListed || at != listed.end()) {
    listed.insert(at, {index, source.name(index), reason});
    if (listed.size() > kMaxBadListed) listed.pop_back();
  }
  if (!run.failure.empty()) return;
  // In the words of the front end the options came from (stoker train's keys, or Python's).
  const bool python = options.words == FrontEnd::kPython;
  const LoaderKeySpec& on_error = loader_key(LoaderKey::kOnError);
  if (options.on_error == OnError::kFail) {
    run.failure =
        fmt::format("bad sample {}: {} ({})", source.shown_name(index), reason,
                    python ? fmt::format("{0}='raise'; {0}='substitute' replaces bad samples", on_error.python)
                           : "on_error=fail; use on_error=substitute to replace bad samples");
  } else {
    run.failure = over_max_bad(source, options, stats, epoch);
    run.failure_counts_samples = !run.failure.empty();
  }
}

// Position `position` of `run` has no sample (Status::past_end): the epoch ends there, its
// samples those before it (max_bad_fraction counts the bad ones against them). The open batch's
// slots that nobody claimed yet never will be: it is complete without them.
void mark_end(LoaderShared& shared, const Source& source, const LoaderOptions& options, EpochRun& run, int64_t position)
    STOKER_EXCLUDES(shared.mutex) {
  {
    MutexLock lock(shared.mutex);
    if (position >= run.end) return;
    run.end = position;
    run.stats.samples = std::min(run.stats.samples, static_cast<uint64_t>(position));
    if (run.failure.empty() && options.on_error == OnError::kSubstitute) {
      run.failure = over_max_bad(source, options, run.stats, run.epoch);
      run.failure_counts_samples = !run.failure.empty();
    }
    if (!run.in_flight.empty()) {
      InFlight& open = run.in_flight.back();
      const int64_t batch_end = run.plan.batch_begin(open.batch_index) + open.buffer->samples;
      if (run.next_claim < batch_end) {
        open.remaining -= static_cast<int>(batch_end - run.next_claim);
        run.next_claim = batch_end;
      }
    }
  }
  shared.ready_cv.notify_all();
}

// Loads job.index with `loader` into its slot (pixels, targets, extra, record, keypoints and
// boxes, the sample left for the GPU), or, when it is bad, records it and loads the next
// sample in dataset order that loads, with job.index's random stream.
void fill_slot(SampleLoader& loader, LoaderShared& shared, const Source& source, const LoaderOptions& options,
               const SlotJob& job) {
  const size_t sample_bytes = shared.sample_bytes;
  const auto slot = static_cast<size_t>(job.slot);
  uint8_t* out = static_cast<uint8_t*>(job.buffer->data) + slot * sample_bytes;
  const uint64_t seed = job.buffer->seed;
  const int64_t rng_epoch = job.buffer->rng_epoch;
  const size_t n = source.size();

  uint64_t used = job.index;
  loader.retire(std::move(job.buffer->extras[slot]));  // a Python item let go of under its read's GIL
  Status status = loader.load(job.index, seed, rng_epoch, job.stream, out);
  loader.retire(nullptr);
  if (status.is_past_end()) {  // no sample: the slot stays out of the batch
    mark_end(shared, source, options, *job.run, job.run->plan.batch_begin(job.buffer->batch_index) + job.slot);
    job.buffer->extras[slot].reset();
    job.buffer->records[slot] = SampleRecord{};
    job.buffer->geometry[slot].clear();
    job.buffer->on_gpu[slot] = 0;
    return;
  }
  if (!status.ok()) {
    record_bad(shared, source, options, *job.run, job.epoch, job.index, status.reason());
    if (options.on_error == OnError::kFail) return;
    status = Status::failure("no substitute");
    for (int k = 1; k <= kSubstituteTries && !status.ok() && static_cast<size_t>(k) < n; ++k) {
      used = (job.index + static_cast<uint64_t>(k)) % n;
      status = loader.load(used, seed, rng_epoch, job.stream, out);
    }
    if (!status.ok()) std::memset(out, 0, sample_bytes);  // nothing loadable nearby
  }
  const int dim = shared.target_dim;
  job.buffer->labels[slot] = source.target_kind() == TargetKind::kClass ? source.label(used) : 0;
  float* const targets = job.buffer->targets.data() + slot * dim;
  source.targets(used, targets);
  job.buffer->extras[slot] = loader.take_extra();  // drops the slot's last one
  SampleRecord& record = job.buffer->records[slot];
  record = status.ok() ? loader.record() : SampleRecord{};
  record.index = used;
  if (record.clip_frames > 0 && record.clip_frames < options.clip.span()) {
    MutexLock lock(shared.mutex);
    ++job.run->stats.short_clips;
  }
  if (record.params.flip) {
    for (const int t : options.target_geometry.flip_negate) targets[t] = -targets[t];
  }
  GeometryTargets& geometry = job.buffer->geometry[slot];
  if (status.ok()) {
    loader.take_geometry(&geometry);
  } else {
    geometry.clear();
  }
  job.buffer->on_gpu[slot] = status.ok() && loader.take_gpu_sample(&job.buffer->gpu[slot]) ? 1 : 0;
}

}  // namespace

// ---- worker side --------------------------------------------------------------------------

namespace {

class Worker {
 public:
  Worker(int id, LoaderShared& shared, const Source& source, const LoaderOptions& options)
      : id_(id),
        shared_(shared),
        source_(source),
        options_(options),
        loader_(source, shared.spec, options.decode, shared.cache.get(), options.clip, &options.target_geometry,
                options.gpu_handoff, &shared.gpu_share) {}

  void run();
  StageClocks& clocks() { return loader_.clocks(); }

 private:
  // A claimed sample: where to write it and what it is.
  struct Claim {
    EpochRun* run;  // stays valid until its busy count drops (start_epoch waits for that)
    int64_t epoch;
    int64_t batch_index;
    BatchBuffer* buffer;
    int slot;
    uint64_t index;
    uint64_t stream;  // of the sample's random draws (EpochPlan::stream)
  };
  // A run of consecutive samples of one batch claimed at once: `first` and chunk_indices_.
  struct Chunk {
    Claim first;
    int count;
  };
  // The epoch to run ahead into, planned by one worker outside the lock.
  struct Ahead {
    int64_t epoch;
    uint64_t generation;  // LoaderShared::generation when it was decided
    uint64_t seed;        // its draws (EpochRun::seed, rng_epoch), as the seed was then
    int64_t rng_epoch;
  };
  enum class Found { kSamples, kRunAhead, kStop };
  // Waits for samples to claim (kSamples, in *out), for the next epoch to plan (kRunAhead, in
  // *ahead) or for the loader to stop.
  Found claim(MutexLock& lock, Chunk* out, Ahead* ahead) STOKER_REQUIRES(shared_.mutex);
  // Every sample of the consumer's epoch is claimed and nobody began the next: true with it,
  // marked begun.
  bool take_run_ahead(Ahead* ahead) STOKER_REQUIRES(shared_.mutex);
  // Makes the planned epoch claimable, unless a start_epoch came in between.
  void install_run_ahead(const Ahead& ahead, EpochPlan plan) STOKER_REQUIRES(shared_.mutex);
  void produce(const Claim& claim);

  const int id_;
  LoaderShared& shared_;
  const Source& source_;
  const LoaderOptions& options_;
  SampleLoader loader_;
  std::vector<uint64_t> chunk_indices_;                   // dataset indices of the claimed chunk
  std::vector<uint64_t> chunk_streams_;                   // their random streams
  std::vector<std::shared_ptr<const void>> run_retired_;  // read_ahead's: the extras the chunk's samples replace
};

// Samples are claimed up to claim_chunk consecutive ones of one batch.
Worker::Found Worker::claim(MutexLock& lock, Chunk* out, Ahead* ahead) {
  for (;;) {
    if (shared_.stop) return Found::kStop;
    if (id_ >= shared_.active_workers || shared_.claims_held) {  // parked by set_workers(), or held by start_epoch
      lock.wait(shared_.work_cv);
      continue;
    }
    // The consumer's epoch first; its successor only once every sample of it is claimed.
    EpochRun* run = shared_.current().claimable() ? &shared_.current()
                    : shared_.ahead().claimable() ? &shared_.ahead()
                                                  : nullptr;
    if (run == nullptr) {
      if (take_run_ahead(ahead)) return Found::kRunAhead;
      if (shared_.on_worker_idle) shared_.on_worker_idle();
      lock.wait(shared_.work_cv);
      continue;
    }
    const auto total = static_cast<int64_t>(run->plan.indices.size());
    const int64_t position = run->next_claim;
    const int64_t batch = run->plan.batch_of(position);
    if (run->in_flight.empty() || run->in_flight.back().batch_index < batch) {
      if (shared_.free_buffers.empty()) {
        // Back-pressure is waiting for buffers the consumer's epoch needs. Ahead of it, the
        // wait is the one between epochs (validation, say), as idle workers always had.
        const bool counted = run == &shared_.current();
        Stopwatch waited;
        lock.wait(shared_.work_cv);
        if (counted) loader_.clocks().add(loader_.clocks().wait_free_ns, waited.lap());
        continue;
      }
      BatchBuffer* buffer = shared_.free_buffers.back();
      shared_.free_buffers.pop_back();
      buffer->samples = run->plan.batch_samples(batch);
      buffer->epoch = run->epoch;
      buffer->seed = run->seed;
      buffer->rng_epoch = run->rng_epoch;
      buffer->batch_index = batch;
      run->in_flight.push_back({batch, buffer, buffer->samples});
    }
    InFlight& target = run->in_flight.back();
    const int64_t batch_end = std::min(total, run->plan.batch_begin(batch + 1));
    const auto count = static_cast<int>(std::min<int64_t>(shared_.claim_chunk, batch_end - position));
    const auto from = run->plan.indices.begin() + position;
    chunk_indices_.assign(from, from + count);
    chunk_streams_.resize(static_cast<size_t>(count));
    for (int k = 0; k < count; ++k) {
      chunk_streams_[static_cast<size_t>(k)] = run->plan.stream(static_cast<size_t>(position + k));
    }
    out->first = {run,
                  run->epoch,
                  batch,
                  target.buffer,
                  static_cast<int>(position - run->plan.batch_begin(batch)),
                  chunk_indices_.front(),
                  chunk_streams_.front()};
    out->count = count;
    run->next_claim += count;
    ++run->busy;
    return Found::kSamples;
  }
}

bool Worker::take_run_ahead(Ahead* ahead) {
  const EpochRun& current = shared_.current();
  if (!shared_.run_ahead || current.given_order || !current.active || !current.failure.empty() ||
      !current.fully_claimed() || shared_.ahead().active || shared_.ahead_generation == shared_.generation) {
    return false;
  }
  shared_.ahead_generation = shared_.generation;  // one worker plans it
  *ahead = {current.epoch + 1, shared_.generation, shared_.seed, shared_.rng_epoch(current.epoch + 1)};
  return true;
}

void Worker::install_run_ahead(const Ahead& next, EpochPlan plan) {
  if (next.generation != shared_.generation || shared_.stop) return;
  EpochRun& ahead = shared_.ahead();
  ahead = EpochRun{};
  ahead.epoch = next.epoch;
  ahead.seed = next.seed;
  ahead.rng_epoch = next.rng_epoch;
  ahead.plan = std::move(plan);
  ahead.stats.epoch = next.epoch;
  ahead.stats.samples = ahead.plan.indices.size();
  ahead.active = true;
  shared_.work_cv.notify_all();  // the other idle workers
}

void Worker::run() {
  try {
    source_.on_worker_start(id_);
  } catch (const std::exception& e) {  // every epoch fails with it, from the one started now on
    MutexLock lock(shared_.mutex);
    shared_.start_failure = "worker " + std::to_string(id_) + " could not start: " + e.what();
    for (EpochRun& run : shared_.runs) {
      if (run.failure.empty()) run.failure = shared_.start_failure;
    }
    shared_.ready_cv.notify_all();
    return;
  }
  MutexLock lock(shared_.mutex);
  Chunk chunk{};
  for (;;) {
    Ahead ahead{};
    const Found found = claim(lock, &chunk, &ahead);
    if (found == Found::kStop) return;
    if (found == Found::kRunAhead) {
      lock.unlock();  // a plan shuffles the whole dataset: not under the lock
      std::optional<EpochPlan> plan;
      try {
        plan = plan_epoch(source_.size(), options_.batch_size, seeded(options_.sampler, ahead.seed), ahead.rng_epoch);
      } catch (const std::exception&) {  // no room for it: the next epoch starts when asked
      }
      lock.lock();
      if (plan) install_run_ahead(ahead, std::move(*plan));
      continue;
    }
    lock.unlock();
    // The buffer's last batch's finish_batch goes before any of this one is written (its first
    // slot is claimed first), outside the lock: it may hold Python objects.
    if (chunk.first.slot == 0 && shared_.finish_batches) chunk.first.buffer->finished.reset();
    if (chunk.count > 1 && source_.reads_runs()) {  // the run's reads at once; its slots' last extras let go there
      run_retired_.resize(static_cast<size_t>(chunk.count));
      for (int k = 0; k < chunk.count; ++k) {
        run_retired_[static_cast<size_t>(k)] =
            std::move(chunk.first.buffer->extras[static_cast<size_t>(chunk.first.slot + k)]);
      }
      loader_.read_ahead(chunk_indices_, run_retired_);
    }
    constexpr int kPrefetchAhead = 4;  // random rows of an in-memory source miss the cache
    for (int k = 0; k < chunk.count && k < kPrefetchAhead; ++k)
      source_.prefetch(chunk_indices_[static_cast<size_t>(k)]);
    for (int k = 0; k < chunk.count; ++k) {
      if (k + kPrefetchAhead < chunk.count) source_.prefetch(chunk_indices_[static_cast<size_t>(k + kPrefetchAhead)]);
      Claim job = chunk.first;
      job.slot += k;
      job.index = chunk_indices_[static_cast<size_t>(k)];
      job.stream = chunk_streams_[static_cast<size_t>(k)];
      try {
        produce(job);
      } catch (const std::exception& e) {  // no exception crosses the thread
        MutexLock guard(shared_.mutex);
        if (job.run->failure.empty()) {
          job.run->failure = "worker failed on " + source_.shown_name(job.index) + ": " + e.what();
        }
      }
    }
    lock.lock();
    EpochRun& run = *chunk.first.run;
    const auto in_flight = [&]() -> InFlight& {
      return *std::find_if(run.in_flight.begin(), run.in_flight.end(),
                           [&](const InFlight& e) { return e.batch_index == chunk.first.batch_index; });
    };
    const bool batch_done = (in_flight().remaining -= chunk.count) == 0;
    if (batch_done && shared_.finish_batches) {
      // The source finishes the written batch (Source::finish_batch) without the lock; meanwhile the
      // batch is not ready and its run still busy, so that next() and an epoch switch wait for it.
      in_flight().remaining = 1;
      BatchBuffer& buffer = *chunk.first.buffer;
      lock.unlock();
      buffer.finished = source_.finish_batch(std::span(buffer.extras.data(), static_cast<size_t>(buffer.samples)));
      lock.lock();
      in_flight().remaining = 0;
    }
    --run.busy;
    // Wake others only when it matters: a futex wake per sample costs measurable CPU. A batch
    // of the epoch run ahead into is not awaited yet.
    if (run.busy == 0 && shared_.epoch_switch_waiting) shared_.idle_cv.notify_all();
    if (&run == &shared_.current() && (batch_done || !run.failure.empty())) shared_.ready_cv.notify_all();
  }
}

void Worker::produce(const Claim& job) {
  job.buffer->indices[static_cast<size_t>(job.slot)] = job.index;
  fill_slot(loader_, shared_, source_, options_, {job.run, job.epoch, job.buffer, job.slot, job.index, job.stream});
}

}  // namespace

// ---- Loader -------------------------------------------------------------------------------

struct LoaderThreads {
  Mutex mutex;  // set_workers() grows the two vectors, stage_times() reads them
  std::vector<std::unique_ptr<Worker>> workers STOKER_GUARDED_BY(mutex);
  std::vector<std::thread> threads STOKER_GUARDED_BY(mutex);

  // Starts workers until there are `count`.
  void grow(int count, LoaderShared& shared, const Source& source, const LoaderOptions& options)
      STOKER_REQUIRES(mutex) {
    while (static_cast<int>(workers.size()) < count) {
      workers.push_back(std::make_unique<Worker>(static_cast<int>(workers.size()), shared, source, options));
      threads.emplace_back([w = workers.back().get()] { w->run(); });
    }
  }
};

namespace {

// "1,200 bytes" below a megabyte, megabytes() from there.
std::string size_text(double bytes) { return bytes < 1e6 ? grouped(bytes) + " bytes" : megabytes(bytes); }

// Buffer `number` (from 1) of `count`, for `samples` samples; throws UsageError naming the sizes
// when memory runs out.
std::unique_ptr<BatchBuffer> make_buffer(BufferAllocator& allocator, const LoaderOptions& options, int samples,
                                         int target_dim, int number, int count) {
  const auto batch = static_cast<size_t>(samples);
  auto buffer = std::make_unique<BatchBuffer>();
  buffer->capacity = samples;
  buffer->capacity_bytes = batch * sample_bytes_of(options);
  try {
    buffer->data = allocator.allocate(buffer->capacity_bytes);
  } catch (const std::bad_alloc&) {
    throw UsageError(fmt::format(
        "the loader's batch buffers do not fit in memory: buffer {} of {} could not be allocated, each holds "
        "{} samples of {} ({} per buffer, {} in all); lower {} or prefetch",
        number, count,
        samples == options.batch_size ? fmt::format("batch_size {}", samples)
                                      : fmt::format("the largest batch's {}", samples),
        size_text(static_cast<double>(sample_bytes_of(options))),
        size_text(static_cast<double>(buffer->capacity_bytes)),
        size_text(static_cast<double>(buffer->capacity_bytes) * count),
        samples == options.batch_size ? "batch_size" : "the largest batch"));
  }
  // Written once now: the pool is resident from the start. Untouched, a buffer's pages became
  // resident the first time the workers ran far enough ahead to use it, which could be hours
  // into a run (one 38.5 MB step in RSS at epoch 16 of a soak): an out-of-memory then, and a
  // memory figure that looks like a leak.
  std::memset(buffer->data, 0, buffer->capacity_bytes);
  buffer->labels.resize(batch);
  buffer->targets.resize(batch * static_cast<size_t>(target_dim));
  buffer->indices.resize(batch);
  buffer->extras.resize(batch);
  buffer->records.resize(batch);
  buffer->geometry.resize(batch);
  buffer->gpu.resize(batch);
  buffer->on_gpu.assign(batch, 0);
  return buffer;
}

}  // namespace

Loader::Loader(std::shared_ptr<const Source> source, LoaderOptions options)
    : source_(std::move(source)), options_(std::move(options)) {
  if (!source_) throw UsageError("Loader needs a source");
  options_.clip.validate();
  if (std::string refusal = options_.clip.source_refusal(source_->holds_clips(), source_->describe());
      !refusal.empty()) {
    throw UsageError(refusal);
  }
  if (const BoxCropSpec& box = options_.transform.box_crop; box.enabled()) {
    if (!source_->has_geometry()) {
      throw UsageError(fmt::format(
          "BoxCrop crops each sample around its box or keypoints, and {} has neither; give them ({}), or leave BoxCrop "
          "out",
          source_->describe(),
          options_.clip.enabled() ? "boxes= or keypoints= with a row per frame, or stoker.Boxes (T, 4) or "
                                    "stoker.Keypoints (T, P, 2) beside a Dataset's clips"
                                  : "keypoints=, boxes=, or stoker.Keypoints / stoker.Boxes in a Dataset's items"));
    }
    if (box.union_box && !options_.clip.enabled()) {
      throw UsageError(
          "BoxCrop(union=True) crops the frames of a clip around the union of their boxes, and these samples are "
          "single images (no frames_per_clip); leave union out");
    }
    if (options_.transform.geometry == Geometry::kNone) {
      throw UsageError(fmt::format(
          "the chain '{}' keeps BoxCrop's crops at their own sizes, one per sample; add Resize((224, 224)) (or another "
          "crop) after BoxCrop, so that every sample has one size",
          options_.transform.describe()));
    }
  }
  if (source_->has_geometry()) {  // keypoints and boxes come with each read and follow the chain
    check_targets_can_follow(options_.transform);
    options_.cache_decoded_bytes = 0;
  }
  check_target_indices(*source_, options_.target_geometry.flip_negate, "flip_negate");
  check_flip_pairs(options_.target_geometry);
  if (options_.gpu_handoff != GpuHandoff::kOff) {
    if (const std::string blocker = gpu_handoff_blocker(options_, *source_); !blocker.empty()) {
      throw UsageError("the GPU cannot finish these samples: " + blocker);
    }
  }
  if (const int features = source_->feature_count(); features > 0) {
    prepare_feature_spec(features);
  } else if (options_.transform.features.standardize) {
    throw UsageError("Standardize is for feature vectors (.npz/.npy/numeric CSV), and " + source_->describe() +
                     " holds images; images use Normalize(mean, std)");
  } else if (options_.transform.geometry == Geometry::kNone) {
    int width = 0, height = 0, channels = 0;
    source_->fixed_shape(&width, &height, &channels);
    if (width == 0) {
      throw UsageError(fmt::format(
          "the chain '{}' neither resizes nor crops, so it needs images of one size (as IDX files hold), and {} "
          "holds images of any size; add RandomResizedCrop(size) or Resize(size), CenterCrop(size)",
          options_.transform.describe(), source_->describe()));
    }
    // Pad alone pads every image by the same amount.
    const PadSpec& pad = options_.transform.pad;
    options_.transform.out_width = width + pad.left + pad.right;
    options_.transform.out_height = height + pad.top + pad.bottom;
  } else if (const TransformSpec& t = options_.transform; t.geometry == Geometry::kRandomCrop && !t.pad.if_needed) {
    // Images of one size: a crop larger than them, padded, would fail every sample.
    int source_w = 0, source_h = 0, channels = 0;
    source_->fixed_shape(&source_w, &source_h, &channels);
    const auto [width, height] = resized_size(t.resize, source_w, source_h);
    const int padded_w = width + t.pad.left + t.pad.right;
    const int padded_h = height + t.pad.top + t.pad.bottom;
    if (source_w > 0 && (padded_w < t.out_width || padded_h < t.out_height)) {
      throw UsageError(
          fmt::format("RandomCrop's {}x{} crop is larger than the data's {}x{} images{} padded to {}x{} ({}); add "
                      "pad_if_needed=True, padding={} or a smaller size",
                      t.out_width, t.out_height, source_w, source_h,
                      t.resize.enabled() ? fmt::format(" resized to {}x{} and", width, height) : "", padded_w, padded_h,
                      source_->describe(), std::max((t.out_width - width + 1) / 2, (t.out_height - height + 1) / 2)));
    }
  }
  validate(options_, *source_);
  shuffle_by_band_groups();
  const EpochPlan first = plan_epoch(source_->size(), options_.batch_size, options_.sampler, 0);
  planned_batches_ = batches_per_epoch_ = first.num_batches;  // the same for every planned epoch
  planned_samples_ = samples_per_epoch_ = first.indices.size();
  planned_size_ = source_->size();

  shared_ = std::make_shared<LoaderShared>();
  shared_->spec = options_.transform;
  shared_->frames = options_.clip.frames;
  shared_->sample_bytes = sample_bytes_of(options_);
  // Cheap samples (feature vectors, small raw images) are claimed in runs of about 64 KiB of
  // output, so the shared mutex is taken once per run rather than once per sample.
  // Encoded images stay one at a time: their decode costs far more than the lock.
  if (source_->cheap_reads()) {
    shared_->claim_chunk = static_cast<int>(std::clamp<size_t>((size_t{64} << 10) / shared_->sample_bytes, 1, 256));
  }
  shared_->target_dim = source_->target_dim();
  shared_->run_ahead = options_.run_ahead;
  {
    MutexLock lock(shared_->mutex);
    shared_->seed = options_.sampler.seed;
  }
  shared_->drop_last = options_.sampler.drop_last;
  shared_->finish_batches = source_->finishes_batches();
  shared_->allocator = options_.allocator != nullptr ? options_.allocator : &host_allocator();
  if (options_.cache_decoded_bytes > 0) {
    shared_->cache = std::make_unique<DecodedCache>(source_->size(), options_.cache_decoded_bytes);
  }
  {
    MutexLock pool(shared_->mutex);
    shared_->batch_capacity = options_.batch_size;
    for (int b = 0; b < options_.prefetch; ++b) {
      shared_->buffers.push_back(make_buffer(*shared_->allocator, options_, shared_->batch_capacity,
                                             shared_->target_dim, b + 1, options_.prefetch));
      shared_->free_buffers.push_back(shared_->buffers.back().get());
    }
  }
  shared_->active_workers = options_.workers;

  threads_ = std::make_unique<LoaderThreads>();
  MutexLock lock(threads_->mutex);
  threads_->grow(options_.workers, *shared_, *source_, options_);
}

namespace {

// A consumer call in progress: a second one on another thread throws instead of racing.
class ConsumerCall {
 public:
  ConsumerCall(std::atomic<bool>& in_call, const char* call) : in_call_(in_call) {
    if (in_call_.exchange(true, std::memory_order_acquire)) {
      throw UsageError(
          fmt::format("Loader::{}() was called while another thread is in a call of the same Loader: a Loader has one "
                      "consumer at a time; give each consuming thread a Loader of its own",
                      call));
    }
  }
  ~ConsumerCall() { in_call_.store(false, std::memory_order_release); }
  ConsumerCall(const ConsumerCall&) = delete;
  ConsumerCall& operator=(const ConsumerCall&) = delete;

 private:
  std::atomic<bool>& in_call_;
};

}  // namespace

void Loader::prepare_feature_spec(int features) {
  TransformSpec& spec = options_.transform;
  spec.features.length = features;
  spec.validate();  // before the sizes change: names the image transform a feature source cannot take
  spec.out_width = features;
  spec.out_height = 1;
  spec.channels = 1;
  if (spec.features.standardize && spec.features.mean.empty()) {
    fit_note_ = fit_standardize_cached(*source_, &spec.features.mean, &spec.features.std, options_.workers,
                                       spec.features.fit_rows);
  }
  options_.cache_decoded_bytes = 0;  // the features are in memory already
}

void Loader::set_workers(int workers) {
  const ConsumerCall call(consumer_in_call_, "set_workers");
  if (std::string message = range_message(LoaderKey::kWorkers, int64_t{workers}, "workers"); !message.empty()) {
    throw UsageError(message);
  }
  {
    MutexLock lock(threads_->mutex);
    threads_->grow(workers, *shared_, *source_, options_);
  }
  {
    MutexLock lock(shared_->mutex);
    shared_->active_workers = workers;
    options_.workers = workers;
  }
  shared_->work_cv.notify_all();
}

int Loader::workers() const {
  MutexLock lock(shared_->mutex);
  return shared_->active_workers;
}

void Loader::set_prefetch(int prefetch) {
  const ConsumerCall call(consumer_in_call_, "set_prefetch");
  if (std::string message = buffers_message(prefetch); !message.empty()) throw UsageError(message);
  {
    MutexLock lock(shared_->mutex);
    while (static_cast<int>(shared_->buffers.size()) < prefetch) {
      const int number = static_cast<int>(shared_->buffers.size()) + 1;
      shared_->buffers.push_back(
          make_buffer(*shared_->allocator, options_, shared_->batch_capacity, shared_->target_dim, number, prefetch));
      shared_->free_buffers.push_back(shared_->buffers.back().get());
    }
    options_.prefetch = static_cast<int>(shared_->buffers.size());
  }
  shared_->work_cv.notify_all();
}

int Loader::prefetch() const {
  MutexLock lock(shared_->mutex);
  return static_cast<int>(shared_->buffers.size());
}

void Loader::set_gpu_share(double share) {
  if (!(share >= 0.0 && share <= 1.0)) {
    throw UsageError(
        fmt::format("gpu_share must be in [0, 1] (the share of the engine's JPEGs left for the GPU), got {}", share));
  }
  shared_->gpu_share.store(share, std::memory_order_relaxed);
}

double Loader::gpu_share() const { return shared_->gpu_share.load(std::memory_order_relaxed); }

namespace {

// The bands a cache keeps so that groups of `group` bands, of `fewest` rows or more each, with
// `in_flight` rows read at once, decode each band once (LoaderOptions::chunk_shuffle_bytes).
size_t bands_kept(size_t group, size_t fewest, size_t in_flight) {
  const size_t group_rows = group * fewest;
  const size_t groups_in_flight = (in_flight + group_rows - 1) / group_rows;
  return group + 2 * std::min(in_flight, group * groups_in_flight);
}

}  // namespace

void Loader::shuffle_by_band_groups() {
  SamplerOptions& sampler = options_.sampler;
  const size_t band_bytes = source_->band_bytes();
  if (!sampler.shuffle || sampler.repetitions > 1 || band_bytes == 0) return;
  const size_t fit = options_.chunk_shuffle_bytes / band_bytes;
  if (fit == 0) return;
  auto starts = std::make_shared<const std::vector<uint64_t>>(source_->band_starts());
  const size_t bands = starts->size();
  if (bands < 2 || bands == source_->size()) return;  // one band, or a row each
  size_t fewest = source_->size() - starts->back();
  for (size_t b = 0; b + 1 < bands; ++b) fewest = std::min<size_t>(fewest, (*starts)[b + 1] - (*starts)[b]);
  const auto in_flight = static_cast<size_t>(options_.prefetch) * static_cast<size_t>(options_.batch_size);
  size_t group = std::min(fit, bands);
  while (group > 0 && bands_kept(group, fewest, in_flight) > fit) --group;
  if (group == 0) return;
  sampler.group_bands = group;
  sampler.band_starts = std::move(starts);
  source_->keep_bands(bands_kept(group, fewest, in_flight));
  keeps_bands_ = true;
}

Loader::~Loader() {
  if (keeps_bands_) source_->keep_bands(0);
  {
    MutexLock lock(shared_->mutex);
    shared_->stop = true;
  }
  shared_->work_cv.notify_all();
  MutexLock lock(threads_->mutex);
  for (auto& thread : threads_->threads) thread.join();
  // Buffers still in flight go back to the pool; Batches the consumer holds keep `shared_`.
}

void Loader::start_epoch(int64_t epoch, int64_t first_batch, const OrderListener& on_order) {
  const ConsumerCall call(consumer_in_call_, "start_epoch");
  const size_t size = source_->size();
  const bool resized = size != planned_size_;  // a Dataset object's len() changed between passes
  const SamplerOptions sampler = seeded(options_.sampler, seed());
  const int64_t rng_epoch = draws_epoch(epoch);
  std::optional<EpochPlan> plan;
  if (resized) {
    plan = plan_epoch(size, options_.batch_size, sampler, rng_epoch);
    planned_batches_ = plan->num_batches;
    planned_samples_ = plan->indices.size();
    planned_size_ = size;
  }
  check_start(epoch, first_batch, planned_batches_);
  // An epoch in file order (validation) reads ahead; a shuffled one reads the pages it needs.
  // Sources over one mapped file share the advice: the last epoch started sets it.
  source_->expect_reads(options_.sampler.shuffle ? Source::ReadOrder::kShuffled : Source::ReadOrder::kInOrder);
  const bool hold = static_cast<bool>(on_order);
  if (first_batch != 0 || resized || !take_run_ahead(epoch, hold)) {
    batches_per_epoch_ = planned_batches_;
    samples_per_epoch_ = planned_samples_;
    install_epoch(epoch, plan ? std::move(*plan) : plan_epoch(size, options_.batch_size, sampler, rng_epoch),
                  first_batch, false, hold);
  }
  tell_order(on_order);
}

void Loader::start_epoch(int64_t epoch, std::vector<uint64_t> order, int64_t first_batch,
                         const OrderListener& on_order) {
  const ConsumerCall call(consumer_in_call_, "start_epoch");
  for (const uint64_t id : order) {
    if (id >= source_->size()) {
      throw UsageError(fmt::format("the epoch's order names sample {}, and the data has {} (ids 0 to {})", id,
                                   source_->size(), source_->size() - 1));
    }
  }
  EpochPlan plan = plan_order(std::move(order), source_->size(), options_.batch_size, options_.sampler.drop_last);
  check_start(epoch, first_batch, plan.num_batches);
  source_->expect_reads(Source::ReadOrder::kShuffled);
  batches_per_epoch_ = plan.num_batches;
  samples_per_epoch_ = plan.indices.size();
  install_epoch(epoch, std::move(plan), first_batch, true, static_cast<bool>(on_order));
  tell_order(on_order);
}

void Loader::start_epoch_in_batches(int64_t epoch, std::vector<uint64_t> order, const std::vector<int>& batch_sizes,
                                    int64_t first_batch, const OrderListener& on_order) {
  const ConsumerCall call(consumer_in_call_, "start_epoch_in_batches");
  for (const uint64_t id : order) {
    if (id >= source_->size()) {
      throw UsageError(fmt::format("the epoch's order names sample {}, and the data has {} (ids 0 to {})", id,
                                   source_->size(), source_->size() - 1));
    }
  }
  EpochPlan plan = plan_batches(std::move(order), batch_sizes, source_->size());
  check_start(epoch, first_batch, plan.num_batches);
  source_->expect_reads(Source::ReadOrder::kShuffled);
  fit_buffers(plan.batch_size);
  batches_per_epoch_ = plan.num_batches;
  samples_per_epoch_ = plan.indices.size();
  install_epoch(epoch, std::move(plan), first_batch, true, static_cast<bool>(on_order));
  tell_order(on_order);
}

int Loader::batch_capacity() const {
  MutexLock lock(shared_->mutex);
  return shared_->batch_capacity;
}

void Loader::fit_buffers(int samples) {
  // Never below batch_size: start_epoch's batches are that size.
  const int fit = std::max(samples, options_.batch_size);
  std::vector<std::unique_ptr<BatchBuffer>> unfit;
  {
    MutexLock lock(shared_->mutex);
    const int capacity = shared_->batch_capacity;
    if (fit <= capacity && fit * kShrinkFactor > capacity) return;
    // Whatever is in flight is abandoned (install_epoch follows), so its buffers are free too.
    shared_->abandon_runs(lock);
    shared_->batch_capacity = fit;
    std::vector<BatchBuffer*> kept;
    for (BatchBuffer* buffer : shared_->free_buffers) {
      (buffer->capacity == fit ? kept : shared_->unfit_buffers).push_back(buffer);
    }
    shared_->free_buffers = std::move(kept);
    unfit = shared_->take_buffers(shared_->unfit_buffers);
  }
  remake_buffers(std::move(unfit));
}

void Loader::remake_buffers(std::vector<std::unique_ptr<BatchBuffer>> unfit) {
  if (unfit.empty()) return;
  int samples = 0, count = 0;
  {
    MutexLock lock(shared_->mutex);
    samples = shared_->batch_capacity;
    count = static_cast<int>(shared_->buffers.size() + unfit.size());
  }
  std::vector<std::unique_ptr<BatchBuffer>> made;
  for (auto& buffer : unfit) {
    shared_->allocator->deallocate(buffer->data, buffer->capacity_bytes);
    buffer->data = nullptr;
  }
  for (size_t k = 0; k < unfit.size(); ++k) {
    made.push_back(make_buffer(*shared_->allocator, options_, samples, shared_->target_dim,
                               count - static_cast<int>(unfit.size() - k) + 1, count));
  }
  {
    MutexLock lock(shared_->mutex);
    for (auto& buffer : made) {
      shared_->free_buffers.push_back(buffer.get());
      shared_->buffers.push_back(std::move(buffer));
    }
  }
  shared_->work_cv.notify_all();
}

void Loader::tell_order(const OrderListener& on_order) {
  if (!on_order) return;
  struct Release {
    LoaderShared& shared;
    ~Release() {
      {
        MutexLock lock(shared.mutex);
        shared.claims_held = false;
      }
      shared.work_cv.notify_all();
    }
  } release{*shared_};
  std::vector<uint64_t> unclaimed;
  {
    MutexLock lock(shared_->mutex);
    const EpochRun& run = shared_->current();
    const auto from = std::min<size_t>(static_cast<size_t>(run.next_claim), run.plan.indices.size());
    unclaimed.assign(run.plan.indices.begin() + static_cast<std::ptrdiff_t>(from), run.plan.indices.end());
  }
  on_order(unclaimed);
}

void Loader::check_start(int64_t epoch, int64_t first_batch, int64_t batches) {
  if (epoch < 0) throw UsageError("epoch must be >= 0 (got " + std::to_string(epoch) + ")");
  if (first_batch < 0 || first_batch > batches) {
    throw UsageError("resume batch must be in [0, " + std::to_string(batches) +
                     "] for this dataset and batch size (got " + std::to_string(first_batch) + ")");
  }
}

void Loader::install_epoch(int64_t epoch, EpochPlan plan, int64_t first_batch, bool given_order, bool hold) {
  {
    MutexLock lock(shared_->mutex);
    shared_->abandon_runs(lock);
    EpochRun& run = shared_->current();
    run.plan = std::move(plan);
    run.epoch = epoch;
    run.seed = shared_->seed;
    run.rng_epoch = shared_->rng_epoch(epoch);
    run.next_claim = run.plan.batch_begin(first_batch);
    run.stats.epoch = epoch;
    run.stats.samples = run.plan.indices.size();
    run.failure = shared_->start_failure;
    run.active = true;
    run.given_order = given_order;
    shared_->next_consume = first_batch;
    shared_->claims_held = hold;
  }
  shared_->work_cv.notify_all();
}

bool Loader::take_run_ahead(int64_t epoch, bool hold) {
  {
    MutexLock lock(shared_->mutex);
    const EpochRun& ahead = shared_->ahead();
    if (!ahead.active || ahead.epoch != epoch || !shared_->draws_now(ahead)) return false;
    ++shared_->generation;
    // What is left of the finished epoch goes: normally nothing, as the consumer took it all.
    EpochRun& done = shared_->current();
    done.active = false;
    shared_->epoch_switch_waiting = true;
    while (done.busy != 0) lock.wait(shared_->idle_cv);
    shared_->epoch_switch_waiting = false;
    for (const InFlight& entry : done.in_flight) shared_->free_buffers.push_back(entry.buffer);
    done = EpochRun{};
    shared_->current_run = 1 - shared_->current_run;
    shared_->next_consume = 0;
    shared_->claims_held = hold;
  }
  shared_->work_cv.notify_all();
  return true;
}

Batch Loader::next() {
  const ConsumerCall call(consumer_in_call_, "next");
  Batch batch;
  next_until(std::nullopt, &batch);
  return batch;
}

bool Loader::next_within(double seconds, Batch* out) {
  const ConsumerCall call(consumer_in_call_, "next_within");
  const auto wait = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::max(0.0, seconds)));
  return next_until(std::chrono::steady_clock::now() + wait, out);
}

bool Loader::next_until(const std::optional<std::chrono::steady_clock::time_point>& deadline, Batch* out) {
  using Clock = std::chrono::steady_clock;
  // How long every buffer may sit with the consumer before next() gives up: a release on
  // another thread (a tensor freed elsewhere) has that long to arrive.
  constexpr auto kHeldGrace = std::chrono::seconds(1);
  constexpr auto kTick = std::chrono::milliseconds(100);
  *out = Batch();
  MutexLock lock(shared_->mutex);
  while (!shared_->unfit_buffers.empty()) {
    // Buffers the consumer gave back from before the pool grew: made again at its size, outside
    // the lock (a Python allocator takes the GIL).
    std::vector<std::unique_ptr<BatchBuffer>> unfit = shared_->take_buffers(shared_->unfit_buffers);
    lock.unlock();
    remake_buffers(std::move(unfit));
    lock.lock();
  }
  const EpochRun& run = shared_->current();
  if (!run.active && run.stats.epoch < 0) {
    throw UsageError("Loader::next() called before start_epoch()");
  }
  if (run.failure_settled()) throw DataError(failure_line(*source_, options_, run));
  if (run.failure.empty() &&
      (shared_->next_consume >= run.plan.num_batches || run.ends_before(shared_->next_consume, shared_->drop_last))) {
    return true;
  }
  if (!shared_->next_ready()) {
    Stopwatch waited;
    while (!shared_->next_ready()) {
      const Clock::time_point now = Clock::now();
      // Kept across calls: next_within's short waits add up to the grace.
      std::optional<Clock::time_point>& held_since = all_held_since_;
      if (!shared_->unfit_buffers.empty()) {  // given back while this call waits
        std::vector<std::unique_ptr<BatchBuffer>> unfit = shared_->take_buffers(shared_->unfit_buffers);
        lock.unlock();
        remake_buffers(std::move(unfit));
        lock.lock();
        continue;
      }
      if (shared_->consumer_holds_every_buffer() && added_for_consumer_ < options_.buffers_for_consumer) {
        // One more buffer for the batches the consumer keeps, made outside the lock (a Python
        // allocator takes the GIL, which a thread releasing a batch may hold while it waits for the lock).
        ++added_for_consumer_;
        const int number = static_cast<int>(shared_->buffers.size()) + 1;
        const int samples = shared_->batch_capacity;
        lock.unlock();
        std::unique_ptr<BatchBuffer> added =
            make_buffer(*shared_->allocator, options_, samples, shared_->target_dim, number, number);
        lock.lock();
        shared_->free_buffers.push_back(added.get());
        shared_->buffers.push_back(std::move(added));
        shared_->work_cv.notify_all();
        held_since.reset();
        continue;
      }
      if (shared_->consumer_holds_every_buffer()) {
        if (!held_since) held_since = now;
        if (now - *held_since >= kHeldGrace) {
          held_since.reset();  // a caller that catches this and releases a batch may go on
          consumer_wait_ns_.fetch_add(waited.lap(), std::memory_order_relaxed);
          throw UsageError(fmt::format(
              "all {} batch buffers are held by the consumer (earlier batches still in use), so no further batch "
              "can be filled; release batches once used (keep a copy of what must stay: clone()) or give the "
              "loader more buffers (prefetch)",
              shared_->buffers.size()));
        }
      } else {
        held_since.reset();
      }
      if (deadline && now >= *deadline) {
        consumer_wait_ns_.fetch_add(waited.lap(), std::memory_order_relaxed);
        return false;
      }
      Clock::time_point until = now + kTick;
      if (deadline && *deadline < until) until = *deadline;
      lock.wait_until(shared_->ready_cv, until);
    }
    consumer_wait_ns_.fetch_add(waited.lap(), std::memory_order_relaxed);
  }
  all_held_since_.reset();
  if (!run.failure.empty()) throw DataError(failure_line(*source_, options_, run));
  if (run.ends_before(shared_->next_consume, shared_->drop_last)) return true;
  BatchBuffer* buffer = shared_->current().in_flight.front().buffer;
  // The batch that holds the epoch's end (Status::past_end) comes with the samples before it.
  const int64_t begin = run.plan.batch_begin(shared_->next_consume);
  if (run.end < begin + buffer->samples) buffer->samples = static_cast<int>(run.end - begin);
  shared_->current().in_flight.pop_front();
  ++shared_->next_consume;
  *out = Batch(shared_, buffer);
  return true;
}

LoaderState Loader::state() const {
  const ConsumerCall call(consumer_in_call_, "state");
  MutexLock lock(shared_->mutex);
  const EpochRun& run = shared_->current();
  const bool started = run.active || run.stats.epoch >= 0;
  if (!started) return {shared_->seed, run.epoch, shared_->next_consume, shared_->seed_epoch};
  // The run draws as epoch rng_epoch = epoch - seed_epoch, wrapped by kDrawEpochs below seed_epoch
  // (LoaderShared::rng_epoch).
  const int64_t seed_epoch =
      run.rng_epoch <= run.epoch ? run.epoch - run.rng_epoch : run.epoch - run.rng_epoch + kDrawEpochs;
  return {run.seed, run.epoch, shared_->next_consume, seed_epoch};
}

void Loader::resume(const LoaderState& state) {
  if (state.seed != seed() || state.seed_epoch != seed_epoch()) reseed(state.seed, state.seed_epoch);
  start_epoch(state.epoch, state.next_batch);
}

uint64_t Loader::seed() const {
  MutexLock lock(shared_->mutex);
  return shared_->seed;
}

int64_t Loader::seed_epoch() const {
  MutexLock lock(shared_->mutex);
  return shared_->seed_epoch;
}

int64_t Loader::draws_epoch(int64_t epoch) const {
  MutexLock lock(shared_->mutex);
  return shared_->rng_epoch(epoch);
}

void Loader::reseed(uint64_t seed, int64_t seed_epoch) {
  const ConsumerCall call(consumer_in_call_, "reseed");
  if (seed_epoch < 0) {
    throw UsageError(fmt::format("reseed: the epoch the seed's draws count from must be >= 0 (got {})", seed_epoch));
  }
  {
    MutexLock lock(shared_->mutex);
    shared_->seed = seed;
    shared_->seed_epoch = seed_epoch;
    EpochRun& ahead = shared_->ahead();
    const bool keep = ahead.stats.epoch >= 0 && shared_->draws_now(ahead);
    if (ahead.stats.epoch >= 0 && !keep) {
      // Run ahead with the old draws: none of it may reach the consumer. The workers stop
      // claiming it, the samples being written finish and its buffers come back. The
      // generation stays until then, so that no worker begins another run ahead meanwhile.
      ahead.active = false;
      shared_->epoch_switch_waiting = true;
      while (ahead.busy != 0) lock.wait(shared_->idle_cv);
      shared_->epoch_switch_waiting = false;
      for (const InFlight& entry : ahead.in_flight) shared_->free_buffers.push_back(entry.buffer);
      ahead = EpochRun{};
    }
    // A new generation: a run ahead being planned with the old draws is not installed, and the
    // workers may run ahead again, with the new ones.
    if (!keep) ++shared_->generation;
  }
  shared_->work_cv.notify_all();
}

EpochStats Loader::epoch_stats() const {
  MutexLock lock(shared_->mutex);
  return shared_->current().stats;
}

StageTimes StageTimes::operator-(const StageTimes& e) const {
  StageTimes d;
  d.read = read - e.read;
  d.decode = decode - e.decode;
  d.transform = transform - e.transform;
  d.wait_free_buffer = wait_free_buffer - e.wait_free_buffer;
  d.consumer_wait = consumer_wait - e.consumer_wait;
  d.samples = samples - e.samples;
  d.bytes_read = bytes_read - e.bytes_read;
  d.decoded_bytes = decoded_bytes - e.decoded_bytes;
  d.cache_hits = cache_hits - e.cache_hits;
  d.jpeg_samples = jpeg_samples - e.jpeg_samples;
  d.spliced_samples = spliced_samples - e.spliced_samples;
  d.gpu_samples = gpu_samples - e.gpu_samples;
  return d;
}

std::string gpu_handoff_blocker(const LoaderOptions& options, const Source& source) {
  if (options.clip.enabled()) return "clips are decoded on the CPU";
  if (source.has_geometry()) return "keypoints and boxes follow the CPU path's geometry";
  if (options.cache_decoded_bytes > 0) return "the decoded cache keeps CPU-decoded images";
  if (const std::string step = options.transform.gpu_finishing_blocker(); !step.empty()) {
    return "the chain's " + step + " runs on the CPU only";
  }
  if (options.transform.dtype != DType::kUint8) {
    return fmt::format("the chain's {} output is written on the CPU (the GPU finishes uint8 batches)",
                       to_string(options.transform.dtype));
  }
  return "";
}

void Loader::redo_on_cpu(Batch& batch, int slot) {
  const ConsumerCall call(consumer_in_call_, "redo_on_cpu");
  if (batch.shared_ != shared_) throw UsageError("redo_on_cpu: the batch is not this loader's");
  BatchBuffer* buffer = batch.buffer_;
  if (slot < 0 || slot >= buffer->samples || buffer->on_gpu[static_cast<size_t>(slot)] == 0) {
    throw UsageError(fmt::format("redo_on_cpu: slot {} of the batch has no sample left for the GPU (slots 0 to {})",
                                 slot, buffer->samples - 1));
  }
  if (!redo_loader_) {
    redo_loader_ = std::make_unique<SampleLoader>(*source_, shared_->spec, options_.decode, nullptr, options_.clip,
                                                  &options_.target_geometry);
  }
  const auto at = static_cast<size_t>(slot);
  buffer->on_gpu[at] = 0;
  EpochRun* run = nullptr;
  {
    MutexLock lock(shared_->mutex);
    for (EpochRun& r : shared_->runs) {
      if (r.active && r.epoch == buffer->epoch) run = &r;
    }
  }
  EpochRun detached;  // a batch of an epoch no longer run: its statistics go nowhere
  if (run == nullptr) run = &detached;
  fill_slot(*redo_loader_, *shared_, *source_, options_,
            {run, buffer->epoch, buffer, slot, buffer->records[at].index, buffer->gpu[at].rng_stream});
}

StageTimes Loader::stage_times() const {
  StageTimes times;
  MutexLock lock(threads_->mutex);
  for (const auto& worker : threads_->workers) {
    const StageClocks& c = worker->clocks();
    times.read += ns_to_seconds(c.read_ns.load(std::memory_order_relaxed));
    times.decode += ns_to_seconds(c.decode_ns.load(std::memory_order_relaxed));
    times.transform += ns_to_seconds(c.transform_ns.load(std::memory_order_relaxed));
    times.wait_free_buffer += ns_to_seconds(c.wait_free_ns.load(std::memory_order_relaxed));
    times.samples += c.samples.load(std::memory_order_relaxed);
    times.bytes_read += c.bytes_read.load(std::memory_order_relaxed);
    times.decoded_bytes += c.decoded_bytes.load(std::memory_order_relaxed);
    times.cache_hits += c.cache_hits.load(std::memory_order_relaxed);
    times.jpeg_samples += c.jpeg_decodes.load(std::memory_order_relaxed);
    times.spliced_samples += c.spliced_decodes.load(std::memory_order_relaxed);
    times.gpu_samples += c.gpu_samples.load(std::memory_order_relaxed);
  }
  times.consumer_wait = ns_to_seconds(consumer_wait_ns_.load(std::memory_order_relaxed));
  return times;
}

CacheStats Loader::cache_stats() const {
  CacheStats stats;
  if (const DecodedCache* cache = shared_->cache.get()) {
    stats.entries = cache->entries();
    stats.bytes = cache->bytes();
    stats.budget = cache->budget();
    stats.full = cache->full();
  }
  return stats;
}

}  // namespace stoker::data
