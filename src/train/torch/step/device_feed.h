// Batches from the loader to the training device.
//
// On the CPU the images are zero-copy views of the loader's buffers, exactly as before.
// On CUDA (the device path):
//   - the loader's batch buffers are pinned (PinnedAllocator), so host→device copies are
//     asynchronous;
//   - the copy of batch k+1 runs on a side stream while batch k computes, one batch ahead;
//     an event makes the compute stream wait for it on the device, not on the host;
//   - with Normalize in the chain the workers produce uint8 and the GPU normalizes
//     ((x - 255·mean) / (255·std)): 4× fewer bytes over PCIe and less worker time;
//   - conv nets get their images in channels_last;
//   - events around the compute stream's wait time how long a slow copy held it up
//     (copy_stall_s), so that a transfer-bound run is not reported as compute-bound;
//   - with a GpuDecodeStage (--decode gpu or auto), the JPEGs the workers left undecoded are
//     decoded by nvJPEG when batch k+1 is fetched and resampled into it when it is handed
//     out, after step k: such a batch crosses the bus as uint8 and is normalized then. Under
//     --decode auto (the loader's GpuHandoff::kHardware) each batch handed out tunes how many
//     of the engine's JPEGs the workers leave for it (GpuDecodeStage::tune_share).
// The device code uses c10's device-generic streams and events, so it compiles against any
// libtorch; it runs only where libtorch has CUDA. Not thread-safe: one per training loop.
#pragma once

#include <torch/torch.h>

#include <array>
#include <map>
#include <memory>
#include <optional>

#include "stoker/core/clock.h"
#include "stoker/core/mutex.h"
#include "stoker/data/loader.h"
#include "train/torch/step/gpu_decode_stage.h"
#include "train/torch/step/objective.h"

namespace stoker::train {

// Page-locked host memory from libtorch's CUDA host allocator (torch::empty with
// pinned_memory). Thread-safe, as the loader requires. Only usable where CUDA is.
class PinnedAllocator final : public data::BufferAllocator {
 public:
  void* allocate(size_t bytes) override;
  void deallocate(void* pointer, size_t bytes) override;
  const char* name() const override { return "pinned"; }

 private:
  Mutex mutex_;
  std::map<void*, torch::Tensor> blocks_ STOKER_GUARDED_BY(mutex_);  // keeps each block's storage alive
};

struct FeedOptions {
  torch::Device device{torch::kCPU};
  // The loader produces uint8 and the feed normalizes on the device with these (per
  // channel, in [0, 1] units as torchvision's Normalize). Empty: the batch is used as is.
  std::optional<std::array<float, 3>> normalize_mean, normalize_std;
  bool channels_last = false;
  // Copy batch k+1 while k computes (CUDA only; ignored on the CPU).
  bool lookahead = true;
  // GPU JPEG decoding for the loader's GPU samples (its LoaderOptions::gpu_handoff); null:
  // none. Shared by the copies of these options, used by one feed at a time.
  std::shared_ptr<GpuDecodeStage> gpu_decode;
};

// One batch on the device. `host` keeps the loader's buffer until the step is done with it.
struct FedBatch {
  data::Batch host;
  torch::Tensor images;   // (N, C, H, W) float32 on the device
  torch::Tensor targets;  // Objective::targets_of, on the device
  double wait_s = 0;      // waiting for the loader
  double copy_s = 0;      // host time spent issuing (or, without lookahead, doing) the copy
  // With GPU samples: the batch as uint8 on the device until their resample, and the samples.
  torch::Tensor images_uint8;
  std::optional<GpuDecodeStage::Pending> gpu;
  explicit operator bool() const { return static_cast<bool>(host); }
  int64_t size() const { return host ? host.size() : 0; }
};

// A zero-copy view of a batch's images (N, C, H, W) in the batch's dtype (NHWC batches are
// permuted views). The batch must outlive the tensor's use.
torch::Tensor images_of(const data::Batch& batch);

class DeviceFeed {
 public:
  DeviceFeed(data::Loader& loader, const Objective& objective, FeedOptions options);
  ~DeviceFeed();
  DeviceFeed(const DeviceFeed&) = delete;
  DeviceFeed& operator=(const DeviceFeed&) = delete;

  // The next batch of the loader's current epoch on the device; empty at the epoch's end.
  FedBatch next();
  // Forgets the batch fetched ahead, if any: call it before loader.start_epoch().
  void reset();
  // Device seconds the compute stream waited for the copy of the batch next() last returned
  // (the copy outlasted the step before it): time the host clock counts as compute but that
  // belongs to the copy. 0 on the CPU, without lookahead, or where libtorch cannot time
  // events (before 2.5). Call once per batch, after its step has synchronised (the step reads
  // its loss); earlier, it waits for the copy.
  double copy_stall_s();

  const FeedOptions& options() const { return options_; }

 private:
  void start_copy(data::Batch batch, double wait_s);
  FedBatch finish_copy();
  // A batch of model inputs: float32 on the device, in the feed's memory format.
  torch::Tensor empty_model_input(c10::IntArrayRef sizes) const;
  // Writes `source` (N, C, H, W; on the device, or the host without the feed's Normalize)
  // into `images` on the current stream, normalized when the feed normalizes.
  void write_model_input(torch::Tensor& images, const torch::Tensor& source) const;
  // --decode auto: `batch`, just handed out, tunes the loader's GPU share.
  void tune_gpu_share(const FedBatch& batch);

  data::Loader& loader_;
  const Objective& objective_;
  FeedOptions options_;
  torch::Tensor mean255_, std255_;   // (1, C, 1, 1) on the device
  std::optional<FedBatch> pending_;  // fetched, its copy started
  // Since the last batch was handed out (none since the feed was made or reset).
  std::optional<Stopwatch> since_handed_out_;
  struct Streams;
  std::unique_ptr<Streams> streams_;  // CUDA only
};

// How the loader and the feed share the work for a device: on CUDA with Normalize in the
// chain, the loader's output becomes uint8 and the normalization moves to the feed
// (move_normalize_to_feed). Returns the feed options; edits *loader_options in place.
FeedOptions plan_device_feed(torch::Device device, bool conv_net, data::LoaderOptions* loader_options);

// The CUDA half of plan_device_feed, on any device (the CPU tests run it): a float32 chain
// with Normalize is written as uint8 and *feed takes its mean and std. The spec keeps
// Normalize, which for uint8 output means "the consumer normalizes" (stoker/data/transform.h):
// RandomErasing then writes its value as the pixels that normalize to it.
void move_normalize_to_feed(data::TransformSpec* spec, FeedOptions* feed);

}  // namespace stoker::train
