// nvJPEG for stoker train's device feed (--decode gpu or auto on CUDA): the JPEGs a loader's
// workers left in a batch (data::Batch::gpu_sample) are decoded on the GPU and resampled into
// their slots, so the batch is the CPU path's but for the decoders' own rounding.
//
// Per batch, in two halves a training step apart: DeviceFeed calls start() when it fetches
// batch k+1 (before step k is enqueued) and finish() when it hands k+1 out (after step k was):
//   start()  - carves the windows out of one of three arenas (device memory the stage keeps),
//              has nvJPEG decode into them on the stage's own stream, and makes on the CPU,
//              into the host batch, every file nvJPEG refused or failed on and, once per epoch,
//              one check sample (Loader::redo_on_cpu) - all before the feed copies the batch;
//   upload() - on the feed's side stream: the filter tables the workers built, to the device;
//   finish() - waits on the host for the decode stream (a step later: normally done; timed),
//              resamples the windows into the uint8 device batch on the current stream (the CPU
//              resampler's tables and arithmetic, gpu_resample.h), compares the check sample
//              (a mean difference over kTolerance levels throws), and marks the arena consumed.
// The GPU's JPEG engines thus decode batch k+1 while step k computes. With --decode auto
// (GpuHandoff::kHardware) the feed hands the stage its waits after each batch (tune_share), and
// the stage sets how many of the engine's JPEGs the workers leave (data::GpuShareTuner).
//
// Ordering. nvJPEG's hardware batched decode was reported (H100, 2026) to write into its
// destinations when called, whatever the stream's order: an arena is handed to nvJPEG only
// after the host has seen the event that followed its last readers complete (wait_consumed),
// and a newly allocated one (libtorch's allocator may hand out memory that queued work still
// uses) only after the current stream's queued work is done (wait_current, once per arena
// and growth), so no queued GPU work touches memory nvJPEG writes. The windows are read only after the host
// has seen the decode stream drain, so an engine whose completion the stream does not order is
// covered too. Both waits fall a step after the work they wait for.
//
// Thread safety: one stage per training loop, used from its thread (nvJPEG's state is per
// thread, and the decode stream belongs to the thread's CUDA context). Errors: make_decode_sync()
// returns null with one line, plan_gpu_decode() throws UsageError for --decode gpu that cannot
// be; finish() throws SystemError (the decode stream failed, or the check sample differs); a
// file nvJPEG cannot take is never an error.
#pragma once

#include <torch/torch.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/data/gpu_decoder.h"
#include "stoker/data/gpu_share.h"
#include "stoker/data/loader.h"
#include "stoker/data/loader_keys.h"
#include "train/torch/step/gpu_resample.h"

namespace stoker::train {

// What the stage needs of the device besides nvJPEG: a stream to decode on, and the host's
// waits. CUDA: the driver's stream and events on libtorch's current stream; the CPU (tests,
// with an nvJPEG that decodes into host memory): nothing to wait for.
class DecodeSync {
 public:
  virtual ~DecodeSync() = default;
  virtual void* stream() = 0;                 // the cudaStream_t nvJPEG decodes on
  virtual void wait_decoded() = 0;            // host: everything enqueued on stream() is done
  virtual void mark_consumed(int arena) = 0;  // the arena's readers so far are enqueued on the current stream
  virtual void wait_consumed(int arena) = 0;  // host: they are done (at once when never marked)
  virtual void wait_current() = 0;            // host: the current stream's work so far is done
};

// `device`'s: a DriverStream (cuda_driver.h) and libtorch events, or, on the CPU, no-ops.
// Null with *why_not set to one line when the CUDA driver's stream cannot be made.
std::unique_ptr<DecodeSync> make_decode_sync(torch::Device device, std::string* why_not);

class GpuDecodeStage {
 public:
  // Mean absolute difference, in uint8 levels, allowed between the check sample decoded by
  // nvJPEG and by libjpeg-turbo: their inverse DCTs and upsampling round differently, and a
  // window written wrongly or not at all differs by tens. Python's _gpu_decode.TOLERANCE.
  static constexpr double kTolerance = 3.0;
  static constexpr int kArenas = 3;

  GpuDecodeStage(torch::Device device, std::unique_ptr<data::GpuDecoder> decoder, std::unique_ptr<DecodeSync> sync);

  // A batch's GPU samples between start() and finish().
  struct Pending {
    int arena = -1;
    std::vector<int> slots;  // decoded on the GPU, in batch order
    std::vector<torch::Tensor> windows;
    TapTensors host_taps, device_taps;
    torch::Tensor host_slots, device_slots;  // int64 `slots`
    int check = -1;                          // a slot also made on the CPU, or -1
    bool bicubic = false;                    // the chain's filter (else bilinear)
  };

  // Decodes `batch`'s GPU samples and makes the rest on the CPU (through `loader`, the batch's).
  // Empty when nothing of it was left on the GPU. Allocates on the current stream.
  std::optional<Pending> start(data::Loader& loader, data::Batch& batch);
  // The filter tables and slots to the device, on the current stream (the feed's side stream:
  // finish() must run after the current stream of finish() waits for it).
  void upload(Pending& pending);
  // Resamples `pending`'s windows into `images` (N, C, H, W) uint8 on the device, on the
  // current stream, and checks the check sample against what the CPU made in `images`.
  void finish(Pending& pending, torch::Tensor images, const data::Batch& batch);

  // Drops `pending` without finishing it (the feed's reset): waits for its decode, so that
  // its arena is free for the next start().
  void abandon(Pending& pending);

  // --decode auto, after each batch handed out: feeds the share tuner this batch's waits
  // (`loader_wait_s` for the loader; the host's wait for the decode in the last finish(), 0
  // when there was none since the call before) and wall seconds, and sets `loader`'s share.
  // batch_s 0: not known (a pass's first batch), nothing is fed.
  void tune_share(data::Loader& loader, double loader_wait_s, double batch_s);
  // The host's wait for the decode stream in the last finish() (0 before any), seconds.
  double decode_wait_s() const { return decode_wait_s_; }

  const data::GpuDecoder& decoder() const { return *decoder_; }
  uint64_t decoded() const { return decoded_; }      // samples decoded on the GPU
  uint64_t fallbacks() const { return fallbacks_; }  // samples nvJPEG refused or failed on

 private:
  torch::Tensor window_space(int arena, size_t bytes);

  torch::Device device_;
  std::unique_ptr<data::GpuDecoder> decoder_;
  std::unique_ptr<DecodeSync> sync_;
  std::array<torch::Tensor, kArenas> arenas_;
  int next_arena_ = 0;
  int64_t checked_epoch_ = -1;
  uint64_t decoded_ = 0, fallbacks_ = 0;
  double decode_wait_s_ = 0;
  bool decode_waited_ = false;  // a finish() since the last tune_share()
  data::GpuShareTuner share_tuner_;
  // Reused from batch to batch.
  std::vector<int> slots_;
  std::vector<uint8_t*> destinations_;
  std::vector<size_t> pitches_;
  std::vector<data::GpuDecodeOutcome> outcomes_;
};

}  // namespace stoker::train

namespace stoker::train {

// stoker train's --decode gpu or auto, once choose_decode (stoker/data/gpu_decode.h) said
// kGpu: the stage on `device` and the handoff the training loader is made with (`options`,
// after plan_device_feed, and `source` are the loader's to be). `gpu` that cannot be throws
// UsageError in one line; `auto` that cannot be returns no stage and a one-line `note`.
struct GpuDecodePlan {
  std::shared_ptr<GpuDecodeStage> stage;
  data::GpuHandoff handoff = data::GpuHandoff::kOff;
  std::string note;
};
GpuDecodePlan plan_gpu_decode(data::DecodeMode asked, torch::Device device, const data::LoaderOptions& options,
                              const data::Source& source, const std::vector<std::string>& nvjpeg_dirs = {});

}  // namespace stoker::train
