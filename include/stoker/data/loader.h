// stoker/data/loader.h — the input pipeline: worker threads fill pooled batch buffers in
// order; the consumer takes them with next().
//
//   Loader loader(source, options);
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     loader.start_epoch(epoch);
//     while (Batch batch = loader.next()) { ... batch.data(), batch.labels() ... }
//   }
//
// Execution. `workers` threads live as long as the Loader (across epochs). They claim samples
// one at a time in epoch order and write each straight into its slot of a batch buffer: no
// per-sample heap allocation, no collate copy. There are `prefetch` buffers; when all are
// full or held by the consumer, workers wait (back-pressure). Memory is therefore bounded by
// (prefetch + buffers_for_consumer) x batch bytes (batch_capacity() samples), plus per-worker scratch.
//
// Epoch ends. Once every sample of epoch e is claimed, idle workers begin epoch e + 1 from
// batch 0 (run_ahead, on by default) in whatever buffers are free: the same buffers, the same
// bound. start_epoch(e + 1) keeps those batches, so the next epoch's first batch is ready
// while the consumer is still draining e; any other start_epoch (another epoch, a resume at
// batch > 0) abandons them as it abandons any epoch in flight. Bad
// samples met ahead count in e + 1's EpochStats, and a failure there surfaces only from
// next() in e + 1. state() and epoch_stats() are the consumer's epoch, never the workers'.
//
// An epoch may end early: a source whose read of position p's sample returns
// Status::past_end() (a stream that ended) has no sample at p nor after it, in plan order. The
// epoch then ends at p: the batch holding p comes with the samples before p (none with
// drop_last), and next() returns the end after it. Workers claim nothing past p once one met
// it; past_end is no bad sample. batches_per_epoch() stays the plan's (an upper bound then).
//
// Determinism. Sample i of epoch e is transformed with SampleRng(seed, d, i) (copy k of a
// repeated sample: stream i + k x n, sampler.h) and written to a fixed position, and the
// epoch's order is plan_epoch's for epoch d, where d = draws_epoch(e) is e - s (s: 0, and seed
// options.sampler.seed, until reseed() sets both). Batches are therefore bit-identical for any worker count or
// scheduling, whether or not they were made ahead, and whether the seed was given to the
// constructor or to reseed(): reseed(k, s) then epoch e draws as a Loader made with seed k
// draws epoch e - s. A LoaderState (seed, seed epoch, epoch, next batch) saved mid-epoch and passed to
// resume() resumes with exactly the batches the uninterrupted run would have produced, on any
// Loader of the same source and options (resume() takes the state's seed and seed epoch).
//
// A worker whose Source::on_worker_start throws ends, and every epoch fails with its message
// (DataError from next()).
//
// Bad samples. A sample that cannot be read or decoded is recorded (name + reason) in the
// epoch's statistics and replaced by a deterministic substitute: the next sample in dataset
// order that loads (i+1, i+2, ... up to 16 tries), transformed with sample i's random
// stream, with the substitute's targets. With on_error = kFail the first bad sample stops
// the epoch; with more than max_bad_fraction of the epoch bad, it stops too. A stop surfaces
// as a DataError thrown from the consumer's next call; no exception escapes a worker.
//
// Thread safety. start_epoch(), next(), next_within(), state(), reseed(), set_workers(),
// set_prefetch(), redo_on_cpu() are the consumer's calls: one thread at a time. A consumer call made while another is
// in progress on another thread throws UsageError at once (it neither waits nor races), so two threads sharing one
// Loader fail loudly instead of losing or splitting batches; calls taking turns from several threads are the caller's
// to order. Workers run on between epochs (run ahead) until the buffers are full; the destructor stops them after the
// sample each is writing. stats(), stage_times() may be called from any thread. A Batch may be released on any thread,
// also after its Loader is gone.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stoker/data/clip.h"
#include "stoker/data/decode.h"
#include "stoker/data/gpu_sample.h"
#include "stoker/data/loader_keys.h"
#include "stoker/data/sampler.h"
#include "stoker/data/source.h"
#include "stoker/data/target_geometry.h"
#include "stoker/data/transform.h"

namespace stoker::data {

// Where batch memory comes from. The trainer passes a pinned (page-locked) allocator so
// batches can be copied to a GPU asynchronously; the default is 64-byte aligned host memory.
// Implementations must be thread-safe.
class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* pointer, size_t bytes) = 0;
  virtual const char* name() const = 0;
};

// Shared 64-byte aligned host allocator (never destroyed).
BufferAllocator& host_allocator();

enum class OnError {
  kSubstitute,  // replace, count, report (default)
  kFail,        // stop at the first bad sample with its path in the message
};

// The ranges of batch_size, workers and max_bad_fraction, and the defaults, are the loader's
// table's (stoker/data/loader_keys.h).
struct LoaderOptions {
  int batch_size = LoaderDefaults::batch_size;
  // Worker threads. They persist across epochs.
  int workers = LoaderDefaults::workers;
  // Batch buffers in flight (being filled, ready, or held by the consumer), 1..kMaxBuffers. Unlike
  // PyTorch's per-worker prefetch_factor, this is the total queue depth: all workers
  // cooperate on the oldest unfinished batch first. Memory ~ prefetch x batch bytes, all of it
  // written (resident) when the Loader is made, so that it does not grow later in a run.
  int prefetch = 4;
  // Buffers the loader adds, one at a time, when the consumer holds every buffer while batches
  // remain: a script that keeps a batch it looked at (its first, to size a model) while it
  // iterates. Up to this many beyond `prefetch`, each made (and written) when needed; past
  // them, next() throws UsageError as before. 0 (default): none. Python's DataLoader sets
  // kBuffersForConsumer, since torch's prefetch_factor counts batches in flight, not the ones
  // the script holds.
  int buffers_for_consumer = 0;
  SamplerOptions sampler;
  TransformSpec transform;
  DecodeOptions decode;
  OnError on_error = OnError::kSubstitute;
  // Fail the epoch when more than this fraction of its samples are bad. Default 1 %.
  double max_bad_fraction = LoaderDefaults::max_bad_fraction;
  // Batch memory; nullptr = host_allocator(). Must outlive every Batch.
  BufferAllocator* allocator = nullptr;
  // > 0: keep each image's full-resolution decode in RAM, up to this many bytes, so later
  // epochs skip read and decode (the first decodes whole images, without crop window or DCT
  // scaling, so cached and fresh samples are identical). Images that no longer fit are
  // decoded every epoch as usual. 0 = off.
  size_t cache_decoded_bytes = 0;
  // Shuffled rows of compressed chunked HDF5 datasets (Source::band_bytes() > 0: one file, the
  // files of a pattern, a held-out part; no repeated augmentation): the most bytes of decoded
  // bands the source keeps for the workers. The constructor then sets sampler.band_starts and
  // sampler.group_bands: the epoch goes by groups of G bands (sampler.h), and the source keeps
  // K = G + 2 x min(R, G x ceil(R / (G x b))) bands, R = prefetch x batch_size the rows read at
  // once, b the fewest rows of a band: the bands of every group the rows in flight can reach while
  // a band's rows are read, so each band is decoded once per epoch. G is the largest with K
  // bands of band_bytes() within this bound (about a third of it when a group holds more rows
  // than R). 0, or a bound too small for G = 1: every row shuffled alike, as for other sources
  // (each shuffled row then decodes its band). set_prefetch does not change G or K.
  size_t chunk_shuffle_bytes = static_cast<size_t>(LoaderDefaults::chunk_shuffle_gb * 1e9);
  // The front end whose names the loader's messages use (on_error and max_bad's).
  FrontEnd words = FrontEnd::kCommandLine;
  // How keypoints and boxes follow the geometry, for a source that has them (flip pairs).
  TargetGeometrySpec target_geometry;
  // Once every sample of epoch e is claimed, idle workers begin epoch e + 1 from batch 0 in
  // the free buffers (within `prefetch`), so start_epoch(e + 1) finds its first batches ready.
  // Off for a loader that always restarts the same epoch (validation): the work would be lost.
  bool run_ahead = true;
  // Clips (clip.frames = K > 0, clip.h): each sample is K frames of a clip source, transformed
  // alike, so a sample is K x transform.sample_bytes() bytes. The source must hold clips, and a
  // clip source needs K > 0; no decoded cache with clips (cache_decoded_bytes 0).
  ClipOptions clip;
  // Which JPEGs the workers leave for the consumer to decode on the GPU (gpu_sample.h): off,
  // or those nvJPEG takes, read and planned but not decoded. Needs a chain the GPU finishes
  // (TransformSpec::gpu_finishing_blocker() empty) and no clips, keypoints, boxes or decoded
  // cache (UsageError naming what is in the way).
  // With kHardware (decode='auto') a worker leaves each JPEG the engine takes for the GPU only
  // if a uniform draw of its own, from (seed, epoch, its random stream), falls below
  // Loader::gpu_share() (1 at first: all of them); the others it makes on the CPU, as any
  // sample that is not left. Which files those are is deterministic for a given share; the
  // front ends tune the share from their waits (stoker/data/gpu_share.h), so under decode='auto'
  // which files go where depends on timing. kAll and kCudaPath ignore the share.
  GpuHandoff gpu_handoff = GpuHandoff::kOff;
};

// Why `options` cannot leave samples of `source` for the GPU (LoaderOptions::gpu_handoff), in
// one phrase ("clips are decoded on the CPU", "the chain's ColorJitter(brightness=0.4) runs on
// the CPU only"); "" when they can. The GPU writes uint8 (Normalize and the float type are the
// device feed's, as normalize_in_consumer leaves them). Front ends ask before they set gpu_handoff: decode='gpu'
// is refused with it, decode='auto' decodes on the CPU and says so.
std::string gpu_handoff_blocker(const LoaderOptions& options, const Source& source);

struct CacheStats {
  uint64_t entries = 0;  // images held
  uint64_t bytes = 0;    // their pixels
  uint64_t budget = 0;   // LoaderOptions::cache_decoded_bytes
  bool full = false;     // an image did not fit
};

struct BadSample {
  uint64_t index = 0;
  std::string name;
  std::string reason;
};

// Seconds summed over workers (read/decode/transform/wait_free_buffer) and over the
// consumer (consumer_wait), since the Loader was created. Work run ahead into the next epoch
// counts when it is done, also when that epoch is then not the one started.
struct StageTimes {
  // What happened between two readings: later - earlier, field by field.
  StageTimes operator-(const StageTimes& earlier) const;

  double read = 0;
  double decode = 0;
  double transform = 0;
  double wait_free_buffer = 0;   // workers idle because every buffer was full (back-pressure)
  double consumer_wait = 0;      // next() blocked waiting for the batch to finish
  uint64_t samples = 0;          // samples written (including substitutes)
  uint64_t bytes_read = 0;       // encoded bytes read from the source
  uint64_t decoded_bytes = 0;    // full-resolution pixel bytes of those samples (cache sizing)
  uint64_t cache_hits = 0;       // samples transformed straight from the decoded cache
  uint64_t jpeg_samples = 0;     // JPEG samples decoded (cache hits not counted)
  uint64_t spliced_samples = 0;  // of those, decoded from just their restart intervals
  uint64_t gpu_samples = 0;      // JPEG samples left for the GPU to decode (gpu_handoff)
};

struct EpochStats {
  int64_t epoch = -1;
  uint64_t samples = 0;  // samples in the epoch plan
  uint64_t bad = 0;      // samples replaced (or the one that failed the run)
  // Clips (LoaderOptions::clip) that held fewer frames than the K chosen span, so their last
  // frame was repeated (pick_frames); 0 for single images.
  uint64_t short_clips = 0;
  // Sorted by dataset index; at most 1000 kept (the lowest indices), so a report does not
  // depend on the order workers ran in.
  std::vector<BadSample> bad_samples;
};

// Everything needed to resume a data stream mid-epoch (Loader::resume).
struct LoaderState {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t next_batch = 0;
  // The epoch the seed's draws count from (Loader::reseed's seed_epoch; 0 without a reseed).
  int64_t seed_epoch = 0;
};

// How one sample of a batch was made (Batch::record): the dataset index whose data filled its
// slot (a bad sample's substitute), the source image's size and the transform's draws.
// Feature vectors have no image: their size and draws stay zero. A clip's draws are made once
// for all its frames (with_frame_geometry): source_width/height and params are its first
// chosen frame's, frame_sizes and frame_boxes each frame's.
struct SampleRecord {
  uint64_t index = 0;
  int source_width = 0;
  int source_height = 0;
  SampleParams params;
  // Clips: the frames the clip holds and the first one chosen (pick_frames: frame k is
  // min(clip_start + k x step, clip_frames - 1)); 0 for single images.
  int clip_frames = 0;
  int clip_start = 0;
  // A clip: each chosen frame's source_box and size (width, height), in order: frames may
  // differ in size, and each has its own crop. Empty for single images.
  std::vector<CropRect> frame_boxes;
  std::vector<std::array<int, 2>> frame_sizes;
};

struct BatchBuffer;
struct LoaderShared;
class SampleLoader;
struct LoaderThreads;

// One batch, owned by the consumer until released (destructor or release()). Move-only.
// data() is `size()` samples laid out per the TransformSpec (a clip's frames one after
// another); labels()/targets() hold the targets; indices() the dataset index of each sample
// (before substitution); extra() what the source attached to each.
class Batch {
 public:
  Batch() = default;
  Batch(std::shared_ptr<LoaderShared> shared, BatchBuffer* buffer);
  ~Batch();
  Batch(Batch&& other) noexcept;
  Batch& operator=(Batch&& other) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  explicit operator bool() const { return buffer_ != nullptr; }
  void release();

  int size() const;
  int64_t epoch() const;
  int64_t index() const;  // batch number within the epoch
  const void* data() const;
  size_t bytes() const;  // size() * sample_bytes (x frames() for clips)
  // Frames per sample: LoaderOptions::clip.frames (K) for clips, 0 for single images.
  int frames() const;
  // The data's dimensions in memory order: (N, C, H, W) for NCHW, (N, H, W, C) for NHWC; for
  // clips (N, K, C, H, W) and (N, K, H, W, C).
  std::vector<int64_t> shape() const;
  DType dtype() const;
  Layout layout() const;
  const int64_t* labels() const;  // size() class ids (kClass sources)
  const float* targets() const;   // size() * target_dim floats (always filled)
  int target_dim() const;
  const uint64_t* indices() const;
  // What the source attached to sample `slot` (SampleData::extra; a substitute's own, as its
  // targets are), or null. Its type is the source's to say: for a source whose columns() has
  // extra columns, the sample's cells of them (extra_cells() in source.h reads it), also for a
  // sample taken from the decoded cache. Valid while the Batch is, or longer when copied.
  const std::shared_ptr<const void>& extra(int slot) const;
  // What the source made of the whole batch (Source::finish_batch), or null. Its type is the
  // source's to say. It covers the batch's planned samples: a batch cut short by an epoch's end
  // has fewer (size()) than it covers.
  const std::shared_ptr<const void>& finished() const;
  // How sample `slot` was made.
  const SampleRecord& record(int slot) const;
  // Sample `slot`'s keypoints and boxes, moved with its image (empty without them).
  const GeometryTargets& geometry(int slot) const;
  // Sample `slot`'s JPEG, left for the GPU to decode (LoaderOptions::gpu_handoff), or null
  // when the slot's pixels are in data() already. A slot with one has no pixels in data()
  // until the consumer writes them (or Loader::redo_on_cpu does).
  const GpuSample* gpu_sample(int slot) const;
  // How many slots have one.
  int gpu_samples() const;

 private:
  friend class Loader;  // redo_on_cpu writes into the buffer
  std::shared_ptr<LoaderShared> shared_;
  BatchBuffer* buffer_ = nullptr;
};

class Loader {
  friend struct LoaderTesting;  // src/data/pipeline/loader_testing.h: the workers observed by tests

 public:
  // Validates options (UsageError naming the option) and starts the workers.
  Loader(std::shared_ptr<const Source> source, LoaderOptions options);
  ~Loader();  // stops and joins the workers; outstanding Batches stay valid
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // start_epoch's `on_order`: shown the epoch's own plan (dataset ids, drop_last applied: the
  // order the workers read) from the first sample no worker has claimed, which is position
  // first_batch x batch_size of a resumed epoch, or the one after the batches kept from a run
  // ahead. The span is valid during the call only.
  using OrderListener = std::function<void(std::span<const uint64_t> unclaimed)>;

  // Begins epoch `epoch` at batch `first_batch` (0 = from the start). Keeps the batches run
  // ahead into `epoch` when first_batch is 0; otherwise abandons whatever was in flight.
  // `on_order`, when given, is called on this thread once the epoch is in place and before
  // any worker claims another of its samples (the workers wait for it), so a caller that
  // supplies what the workers read (stoker's dataset_processes) knows their order without
  // planning it again; what it throws start_epoch throws, with the epoch started. The plan
  // is made for the source's size() now: a source that changed its size since the last
  // epoch started gets an epoch of its new size (batches_per_epoch() and
  // samples_per_epoch() follow), and nothing run ahead for its old size is kept.
  void start_epoch(int64_t epoch, int64_t first_batch = 0, const OrderListener& on_order = {});
  // Begins state.epoch at state.next_batch drawing as the Loader it was taken from did: with
  // state.seed counted from state.seed_epoch (reseed() first, when the draws differ).
  void resume(const LoaderState& state);
  // Begins `epoch` visiting `order` (dataset ids, repeats allowed: a caller's sampler, such as
  // torch's DistributedSampler) instead of the options' shuffle and sharding, in batches of
  // batch_size (drop_last as set). batches_per_epoch() and samples_per_epoch() become this
  // epoch's; nothing is run ahead after it (the next order is not known). Throws UsageError
  // for an id outside the source or first_batch outside [0, batches]. `on_order` as above.
  void start_epoch(int64_t epoch, std::vector<uint64_t> order, int64_t first_batch = 0,
                   const OrderListener& on_order = {});
  // start_epoch with `order` in batches of the sizes given, in turn (a caller's batch sampler whose
  // batches differ in size); batch_size and drop_last play no part. The buffers hold the epoch's
  // largest batch, never fewer than batch_size (batch_capacity()): an epoch whose largest batch is
  // larger than they hold, or at most 1/kShrinkFactor of it (a bucketing sampler's one large
  // batch in an earlier epoch), makes the free buffers again at its size here, and each buffer
  // the consumer still holds when it is given back (also after the loader is gone, which frees
  // it); otherwise they stay as they are. Throws UsageError for an id outside the source, a size
  // below 1, sizes that do not add up to order.size(), or first_batch outside [0, batches].
  void start_epoch_in_batches(int64_t epoch, std::vector<uint64_t> order, const std::vector<int>& batch_sizes,
                              int64_t first_batch = 0, const OrderListener& on_order = {});
  static constexpr int kShrinkFactor = 2;
  // Samples each batch buffer holds: batch_size, or as start_epoch_in_batches last made them.
  int batch_capacity() const;

  // The next batch of the current epoch, in order; an empty Batch at the end of the epoch.
  // Throws DataError when the epoch failed (on_error=fail, too many bad samples, a worker
  // error), UsageError when no epoch was started, and UsageError when the consumer has held
  // every buffer for a second (earlier batches not released: no batch can ever come).
  Batch next();
  // next() that waits at most `seconds`: true with the batch (or the end of the epoch) in
  // *out, false when it was not ready in time (call again; a caller that must stay
  // responsive, such as one that checks for signals, waits in slices).
  bool next_within(double seconds, Batch* out);

  // Where the stream stands: the batch the next call to next() returns; `seed` and `seed_epoch`
  // are the current epoch's draws (before the first start_epoch, seed() and seed_epoch()).
  LoaderState state() const;

  // Epochs started after this call draw with `seed`, counting from `seed_epoch`: epoch e's order
  // and samples draw as epoch e - seed_epoch of a Loader made with `seed` (an epoch set back
  // below seed_epoch as epoch e - seed_epoch + kDrawEpochs). Messages, EpochStats, Batch::epoch() and state() keep
  // naming e. A front end that follows a script's torch.manual_seed(base + epoch) calls it
  // between epochs instead of making a new Loader: the workers, buffers and decoded cache stay.
  // A consumer call, at any time: the epoch in progress keeps the draws it started with. What
  // the workers ran ahead into the next epoch with other draws is abandoned here (the samples
  // being written finish, the call waits for them) and run ahead again with the new ones, so no
  // batch drawn with the old seed reaches the consumer after the call. Draws that do not change
  // keep it. Throws UsageError for seed_epoch < 0.
  void reseed(uint64_t seed, int64_t seed_epoch);
  // reseed()'s values (at first options.sampler.seed and 0), and the epoch whose draws `epoch`
  // (>= 0) takes now. Thread-safe.
  static constexpr int64_t kDrawEpochs = int64_t{1} << 62;
  uint64_t seed() const;
  int64_t seed_epoch() const;
  int64_t draws_epoch(int64_t epoch) const;
  // The current epoch's (before the first start_epoch, the options' sampler's).
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  uint64_t samples_per_epoch() const { return samples_per_epoch_; }
  const LoaderOptions& options() const { return options_; }
  const Source& source() const { return *source_; }
  // The line a front end shows when Standardize's statistics were read from the fit cache
  // rather than fitted (fit_cache.h); "" otherwise.
  const std::string& fit_note() const { return fit_note_; }

  // A GPU sample nvJPEG refused or failed on, made on the CPU instead: sample `slot` of
  // `batch` (which must have a gpu_sample there) decoded and transformed on this thread with
  // its own random draws, into its slot of batch.data(), after which the slot has no
  // gpu_sample. A file the CPU cannot decode either is recorded as bad and substituted as a
  // worker would (its targets and record become the substitute's); under on_error=fail it
  // fails the epoch (DataError from the next next()). A consumer call; throws UsageError for
  // a slot without a gpu_sample or a batch of another loader.
  void redo_on_cpu(Batch& batch, int slot);

  EpochStats epoch_stats() const;
  StageTimes stage_times() const;
  // The decoded cache so far (all zero without one).
  CacheStats cache_stats() const;

  // Run-time tuning (`--workers auto`), from the consumer thread, at any time — also
  // mid-epoch. set_workers starts threads as needed and parks the ones above `workers`
  // (a parked thread finishes the sample it holds, then waits); batches stay bit-identical.
  // set_prefetch only grows the pool: memory already allocated is kept until the Loader
  // goes. Both throw UsageError outside their ranges (workers: loader_keys.h; prefetch:
  // 1..kMaxBuffers).
  void set_workers(int workers);
  int workers() const;
  void set_prefetch(int prefetch);
  int prefetch() const;
  // The share of the JPEGs nvJPEG's engine takes that workers leave for the GPU under
  // GpuHandoff::kHardware (LoaderOptions::gpu_handoff), in [0, 1]; 1 until set; ignored by the
  // other handoffs. Samples a worker begins after the call use it. Thread-safe, from any
  // thread; set_gpu_share throws UsageError for a value outside [0, 1] or not a number.
  void set_gpu_share(double share);
  double gpu_share() const;

 private:
  static void check_start(int64_t epoch, int64_t first_batch, int64_t batches);
  // Makes `plan` the consumer's epoch from `first_batch`, abandoning whatever was in flight;
  // with `hold`, the workers claim none of it until tell_order() lets them.
  void install_epoch(int64_t epoch, EpochPlan plan, int64_t first_batch, bool given_order, bool hold);
  // A shuffled compressed chunked dataset: sets sampler.band_starts and group_bands, and has the
  // source keep two groups of decoded bands (LoaderOptions::chunk_shuffle_bytes).
  void shuffle_by_band_groups();
  // A source of feature vectors: sizes the spec to them and fits Standardize.
  void prepare_feature_spec(int features);
  // next() and next_within(): waits until `deadline` at most (none: for as long as it takes).
  bool next_until(const std::optional<std::chrono::steady_clock::time_point>& deadline, Batch* out);
  // start_epoch(epoch, 0) for the epoch the workers ran ahead into: keeps its batches. False
  // when they did not. `hold` as for install_epoch.
  bool take_run_ahead(int64_t epoch, bool hold);
  // Buffers for batches of `samples` (start_epoch_in_batches): where they hold fewer, or
  // kShrinkFactor times as many or more, abandons the epochs in flight and makes the free
  // buffers again at that size (batch_size at least).
  void fit_buffers(int samples);
  // Frees `unfit` (buffers taken out of the pool) and adds as many of batch_capacity to it.
  void remake_buffers(std::vector<std::unique_ptr<BatchBuffer>> unfit);
  // Calls `on_order` (if any) with the current epoch's unclaimed order, then lets the workers
  // claim again (also when it throws).
  void tell_order(const OrderListener& on_order);

  std::shared_ptr<const Source> source_;
  LoaderOptions options_;
  bool keeps_bands_ = false;  // the source keeps decoded bands for this loader (shuffle_by_band_groups)
  std::string fit_note_;
  std::shared_ptr<LoaderShared> shared_;
  std::unique_ptr<LoaderThreads> threads_;
  std::unique_ptr<SampleLoader> redo_loader_;  // redo_on_cpu's, made on its first call
  int64_t batches_per_epoch_ = 0;              // of the current epoch
  uint64_t samples_per_epoch_ = 0;
  int64_t planned_batches_ = 0;  // of every epoch the options' sampler plans
  uint64_t planned_samples_ = 0;
  size_t planned_size_ = 0;  // the source's size() those were planned for
  std::atomic<int64_t> consumer_wait_ns_{0};
  // True while a consumer call runs (the one-consumer check of the thread-safety contract).
  mutable std::atomic<bool> consumer_in_call_{false};
  // Since when next() has seen every buffer held by the consumer (consumer thread only).
  std::optional<std::chrono::steady_clock::time_point> all_held_since_;
  // Buffers added for the consumer so far (LoaderOptions::buffers_for_consumer; consumer thread only).
  int added_for_consumer_ = 0;
};

}  // namespace stoker::data
