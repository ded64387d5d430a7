// One worker's path for one sample: read -> decode (crop window, DCT scale) -> transform ->
// write into the batch slot; for a clip, each chosen frame in turn with the clip's one set of
// draws. Holds the worker's reusable state, so the steady state allocates nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "data/decode/gpu/decode_plan.h"
#include "decoded_cache.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/rng.h"
#include "stoker/data/clip.h"
#include "stoker/data/decode.h"
#include "stoker/data/gpu_sample.h"
#include "stoker/data/loader.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"

namespace stoker::data {

// Per-worker stage clocks, written by the worker, read by anyone (relaxed atomics).
struct StageClocks {
  std::atomic<int64_t> read_ns{0};
  std::atomic<int64_t> decode_ns{0};
  std::atomic<int64_t> transform_ns{0};
  std::atomic<int64_t> wait_free_ns{0};
  std::atomic<uint64_t> samples{0};
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> decoded_bytes{0};  // full-resolution size of what was decoded or cached
  std::atomic<uint64_t> cache_hits{0};
  std::atomic<uint64_t> jpeg_decodes{0};     // JPEG samples decoded (not from the cache)
  std::atomic<uint64_t> spliced_decodes{0};  // of those, decoded from restart intervals
  std::atomic<uint64_t> gpu_samples{0};      // JPEG samples left for the GPU to decode

  void add(std::atomic<int64_t>& clock, int64_t ns) {
    clock.store(clock.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
  }
};

class SampleLoader {
 public:
  // Keeps `source`, `spec`, `cache`, `target_geometry` and `gpu_share` by reference: each must
  // outlive this. With `cache`, every image is decoded whole (no crop window, no DCT scaling) and offered
  // to the cache, so a sample transformed from the cache equals one decoded afresh. With
  // clip.frames = K > 0 every sample is a clip of the source (no cache then).
  // With `handoff` on (gpu_sample.h), a JPEG nvJPEG takes is read, drawn for and planned, but
  // not decoded: load() leaves it for take_gpu_sample() and writes nothing into `out`. The
  // Loader turns it on only for chains the GPU finishes, without clips, cache or targets.
  // With kHardware, `gpu_share` (the Loader's, outliving this; null: 1) is the share of the
  // engine's JPEGs left (LoaderOptions::gpu_handoff says which).
  SampleLoader(const Source& source, const TransformSpec& spec, const DecodeOptions& decode,
               DecodedCache* cache = nullptr, const ClipOptions& clip = {},
               const TargetGeometrySpec* target_geometry = nullptr, GpuHandoff handoff = GpuHandoff::kOff,
               const std::atomic<double>* gpu_share = nullptr);

  // Loads dataset sample `index` with the random stream (seed, epoch, rng_index) into `out`
  // (spec.sample_bytes() bytes, K times that for a clip: frame k at k x spec.sample_bytes()).
  // On failure nothing useful is in `out` and the reason says why ("truncated JPEG", "file not
  // found", "image is 30x28, expected 28x28"; for a clip, naming the frame).
  Status load(uint64_t index, uint64_t seed, int64_t epoch, uint64_t rng_index, void* out);

  // Reads samples `indices`, which the next load() calls ask for in this order, with one
  // Source::read_run (for a source that reads_runs()); a load() of another index (a bad
  // sample's substitute) reads it on its own. `retired[k]` is the extra that sample k replaces
  // in its slot (what retire() is given otherwise), let go of by the source's read; moved from.
  void read_ahead(std::span<const uint64_t> indices, std::span<std::shared_ptr<const void>> retired);

  // What the source attached to the sample the last load() read (SampleData::extra; for one
  // from the cache, Source::extra_of), moved out; null when the source attaches nothing.
  std::shared_ptr<const void> take_extra() { return std::move(data_.extra); }
  // The extra the next load()'s sample replaces (SampleData::retired); what its source's read
  // does not let go of is let go of by retire(nullptr), or the next retire().
  void retire(std::shared_ptr<const void> extra) { data_.retired = std::move(extra); }

  // The source size and draws of the sample the last successful load() made.
  const SampleRecord& record() const { return record_; }
  // Its keypoints and boxes, moved with its image, swapped into *out (the loader's slot).
  void take_geometry(GeometryTargets* out) {
    std::swap(out->points, data_.geometry.points);
    std::swap(out->boxes, data_.geometry.boxes);
    std::swap(out->mask, data_.geometry.mask);
    out->mask_width = data_.geometry.mask_width;
    out->mask_height = data_.geometry.mask_height;
    data_.geometry.clear();
  }

  // Whether the last successful load() left its sample for the GPU; if so, swaps it into
  // *out (the loader's slot; its bytes' capacity comes back for reuse).
  bool take_gpu_sample(GpuSample* out);

  StageClocks& clocks() { return clocks_; }

 private:
  Status load_features(Stopwatch& watch, void* out);
  // Sample `index` into data_: read_ahead's next sample where it is that one, else source_.read.
  Status read(uint64_t index);
  // A clip: the frames pick_frames chooses, read together, each decoded and transformed with
  // the clip's one set of draws, its geometry for its own size (with_frame_geometry).
  Status load_clip(uint64_t index, SampleRng& rng, Stopwatch& watch, uint8_t* out);
  // BoxCrop on a clip of frames_ (their headers in frame_infos_): which frame's box each chosen
  // frame is cropped around, into crop_from_ (nearest_usable_frames), and each frame's draws
  // for its own size from `clip_rng` around it, into frame_params_; a failure naming the clip
  // when no frame has a usable box for the margin `clip_rng` draws (the first frame's).
  Status pick_crop_frames(uint64_t index, const SampleRng& clip_rng);
  // Appends a frame's moved keypoints and boxes to the clip's (data_.geometry), frame after frame.
  void append_frame_geometry(const GeometryTargets& frame);
  // The size of `data`'s image: a raw sample's own, an encoded one's from its header.
  Status image_info(const SampleData& data, ImageInfo* info);
  // Decodes `data` (with header `info`) into decoded_ for `params`: the region the transform
  // resamples, scaled toward the output; the whole image with a cache.
  Status decode_image(const SampleData& data, const ImageInfo& info, const SampleParams& params);
  // What decode_image asks the decoder for.
  DecodeRequest decode_request(const SampleParams& params, const ImageInfo& info) const;
  // With the handoff on: plans data_'s JPEG and, when nvJPEG takes it (under kHardware, and
  // the sample's share draw allows), keeps it in gpu_sample_ with what the consumer needs to
  // finish it. False: decode it on the CPU.
  bool leave_for_gpu(const ImageInfo& info, const SampleParams& params, uint64_t seed, int64_t epoch,
                     uint64_t rng_stream);
  Status decode_raw(const SampleData& data, const SampleParams& params);
  // BoxCrop: replaces decoded_ (which holds `requested`, from decode_request) with the part of
  // the sample's crop (params.subject) the chain reads, BoxCrop's fill where it leaves the
  // image, at the decoded scale; its crop then locates the resampled region in it.
  void cut_subject(const CropRect& requested, const ImageInfo& info, const SampleParams& params);
  // The drawn geometry fits a source of width x height (transform 'none': its size is the
  // output's; RandomCrop: the padded image is at least the crop), or BoxCrop's crop of it.
  Status check_size(const SampleParams& params, int source_width, int source_height) const;

  const Source& source_;
  const TransformSpec& spec_;
  const ClipOptions clip_;
  DecodedCache* cache_;
  const TargetGeometrySpec* target_geometry_;  // null: no flip pairs
  const GpuHandoff handoff_;
  const std::atomic<double>* gpu_share_;         // null: 1
  std::unique_ptr<gpu::DecodePlanner> planner_;  // with the handoff on
  GpuSample gpu_sample_;
  bool left_for_gpu_ = false;  // the last load() kept its sample in gpu_sample_
  ImageDecoder decoder_;
  SampleTransformer transformer_;
  SampleData data_;
  // read_ahead's samples: run_data_[k] and run_status_[k] for run_indices_[k], those before
  // run_next_ taken by load() (their storage swapped with data_'s, for reuse), those from
  // run_read_ on not read (load() reads them itself).
  std::vector<uint64_t> run_indices_;
  std::vector<SampleData> run_data_;
  std::vector<Status> run_status_;
  size_t run_next_ = 0;
  size_t run_read_ = 0;
  DecodedImage decoded_;
  Image subject_image_;  // cut_subject's scratch: the decoded image it replaced
  StageClocks clocks_;
  SampleRecord record_;
  // A clip's read: its frames, the frame numbers chosen, and what pick_frames was told.
  std::vector<SampleData> frames_;
  std::vector<int> chosen_;
  int clip_count_ = 0;
  int clip_start_ = 0;
  std::vector<ImageInfo> frame_infos_;      // a clip's frames' headers, each its own size
  std::vector<bool> crop_usable_;           // pick_crop_frames' scratch
  std::vector<int> crop_from_;              // BoxCrop on a clip: the frame (index in chosen_) each is cropped around
  std::vector<SampleParams> frame_params_;  // BoxCrop on a clip: each frame's draws
  GeometryTargets union_box_;               // BoxCrop(union=True): the clip's one box
};

}  // namespace stoker::data
