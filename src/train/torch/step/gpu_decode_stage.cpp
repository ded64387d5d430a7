#include "train/torch/step/gpu_decode_stage.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/data/gpu_decode.h"
#include "train/torch/step/cuda_driver.h"

namespace stoker::train {
namespace {

constexpr size_t kWindowAlignment = 256;  // each window starts on a 256-byte boundary

size_t aligned(size_t bytes) { return (bytes + kWindowAlignment - 1) / kWindowAlignment * kWindowAlignment; }

// `device` current for nvJPEG's and the driver's calls, which act on the current device.
// (c10::optional: libtorch 1.13's own type, std::optional's alias in 2.x.)
c10::optional<c10::Device> cuda_only(torch::Device device) {
  return device.is_cuda() ? c10::optional<c10::Device>(device) : c10::nullopt;
}

// On the CPU, nvJPEG (a fake that decodes into host memory) is done when decode() returns, and
// nothing is queued.
class HostSync final : public DecodeSync {
 public:
  void* stream() override { return nullptr; }
  void wait_decoded() override {}
  void mark_consumed(int) override {}
  void wait_consumed(int) override {}
  void wait_current() override {}
};

class CudaSync final : public DecodeSync {
 public:
  CudaSync(torch::Device device, std::unique_ptr<DriverStream> stream)
      : device_(device),
        impl_(device.type()),
        stream_(std::move(stream)),
        consumed_{c10::Event(device.type()), c10::Event(device.type()), c10::Event(device.type())} {}
  // (c10::Event cannot block the host in libtorch 1.13: the waits poll. Each comes a step
  // after what it waits for, so the first query is nearly always the last.)
  void* stream() override { return stream_->handle(); }
  void wait_decoded() override { stream_->synchronize(); }
  void mark_consumed(int arena) override { consumed_[arena].record(impl_.getStream(device_)); }
  void wait_consumed(int arena) override { wait_for(consumed_[arena]); }
  void wait_current() override {
    current_.record(impl_.getStream(device_));
    wait_for(current_);
  }

 private:
  static void wait_for(const c10::Event& event) {
    while (!event.query()) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  torch::Device device_;
  c10::impl::VirtualGuardImpl impl_;
  std::unique_ptr<DriverStream> stream_;
  std::array<c10::Event, GpuDecodeStage::kArenas> consumed_;
  c10::Event current_{device_.type()};
};

}  // namespace

std::unique_ptr<DecodeSync> make_decode_sync(torch::Device device, std::string* why_not) {
  if (!device.is_cuda()) return std::make_unique<HostSync>();
  std::unique_ptr<DriverStream> stream = DriverStream::open("libcuda.so.1", why_not);
  if (!stream) return nullptr;
  return std::make_unique<CudaSync>(device, std::move(stream));
}

GpuDecodeStage::GpuDecodeStage(torch::Device device, std::unique_ptr<data::GpuDecoder> decoder,
                               std::unique_ptr<DecodeSync> sync)
    : device_(device), decoder_(std::move(decoder)), sync_(std::move(sync)) {}

torch::Tensor GpuDecodeStage::window_space(int arena, size_t bytes) {
  torch::Tensor& space = arenas_[arena];
  sync_->wait_consumed(arena);  // no queued work reads it any more: nvJPEG may write
  if (!space.defined() || static_cast<size_t>(space.numel()) < bytes) {
    // A quarter to spare, so that a few larger batches do not reallocate each time.
    space =
        torch::empty({static_cast<int64_t>(bytes + bytes / 4)}, torch::TensorOptions(torch::kUInt8).device(device_));
    sync_->wait_current();  // the allocator may have recycled memory queued work still uses
  }
  return space;
}

std::optional<GpuDecodeStage::Pending> GpuDecodeStage::start(data::Loader& loader, data::Batch& batch) {
  const c10::OptionalDeviceGuard guard(cuda_only(device_));
  slots_.clear();
  size_t bytes = 0;
  const int channels = loader.options().transform.channels;
  for (int slot = 0; slot < batch.size(); ++slot) {
    const data::GpuSample* g = batch.gpu_sample(slot);
    if (g == nullptr) continue;
    slots_.push_back(slot);
    bytes += aligned(static_cast<size_t>(g->window_width) * g->window_height * channels);
  }
  if (slots_.empty()) return std::nullopt;

  Pending pending;
  pending.arena = next_arena_;
  pending.bicubic = loader.options().transform.resample == data::ResampleFilter::kBicubic;
  next_arena_ = (next_arena_ + 1) % kArenas;
  const torch::Tensor space = window_space(pending.arena, bytes);
  std::vector<torch::Tensor> windows;
  destinations_.clear();
  pitches_.clear();
  size_t offset = 0;
  for (const int slot : slots_) {
    const data::GpuSample& g = *batch.gpu_sample(slot);
    const int64_t pitch = static_cast<int64_t>(g.window_width) * channels;
    windows.push_back(space.narrow(0, static_cast<int64_t>(offset), g.window_height * pitch)
                          .view({g.window_height, g.window_width, channels}));
    destinations_.push_back(windows.back().data_ptr<uint8_t>());
    pitches_.push_back(static_cast<size_t>(pitch));
    offset += aligned(static_cast<size_t>(g.window_height * pitch));
  }
  decoder_->decode(batch, slots_, destinations_, pitches_, sync_->stream(), &outcomes_);

  for (size_t k = 0; k < slots_.size(); ++k) {
    if (outcomes_[k].on_gpu) {
      pending.slots.push_back(slots_[k]);
      pending.windows.push_back(std::move(windows[k]));
    } else {
      ++fallbacks_;
    }
  }
  decoded_ += pending.slots.size();
  if (pending.slots.empty()) {
    sync_->wait_decoded();  // whatever nvJPEG enqueued before failing is done with the arena
    for (const int slot : slots_) loader.redo_on_cpu(batch, slot);
    return std::nullopt;
  }
  // The workers' tables, taken before a redo drops a sample's.
  pending.host_taps = tap_tensors(batch, pending.slots);
  for (size_t k = 0; k < slots_.size(); ++k) {
    if (!outcomes_[k].on_gpu) loader.redo_on_cpu(batch, slots_[k]);
  }
  if (checked_epoch_ != batch.epoch()) {  // made on the CPU too, before the host batch is copied
    checked_epoch_ = batch.epoch();
    pending.check = pending.slots.front();
    loader.redo_on_cpu(batch, pending.check);
  }
  pending.host_slots = torch::tensor(std::vector<int64_t>(pending.slots.begin(), pending.slots.end()), torch::kInt64);
  if (device_.is_cuda()) {
    // upload() copies from pinned memory: a copy from pageable memory may wait for the stream.
    TapTensors& t = pending.host_taps;
    for (torch::Tensor* host : {&t.column_index, &t.column_weight, &t.row_index, &t.row_weight, &pending.host_slots}) {
      *host = host->pin_memory();
    }
  }
  // Allocated on the current stream, written by upload() on the side stream, read after it.
  const auto like = [&](const torch::Tensor& t) { return torch::empty(t.sizes(), t.options().device(device_)); };
  pending.device_taps = {like(pending.host_taps.column_index), like(pending.host_taps.column_weight),
                         like(pending.host_taps.row_index), like(pending.host_taps.row_weight)};
  pending.device_slots = like(pending.host_slots);
  return pending;
}

void GpuDecodeStage::upload(Pending& pending) {
  pending.device_taps.column_index.copy_(pending.host_taps.column_index, /*non_blocking=*/true);
  pending.device_taps.column_weight.copy_(pending.host_taps.column_weight, /*non_blocking=*/true);
  pending.device_taps.row_index.copy_(pending.host_taps.row_index, /*non_blocking=*/true);
  pending.device_taps.row_weight.copy_(pending.host_taps.row_weight, /*non_blocking=*/true);
  pending.device_slots.copy_(pending.host_slots, /*non_blocking=*/true);
}

void GpuDecodeStage::tune_share(data::Loader& loader, double loader_wait_s, double batch_s) {
  const double decode_wait_s = decode_waited_ ? decode_wait_s_ : 0.0;
  decode_waited_ = false;
  if (batch_s <= 0) return;
  const double share = share_tuner_.observe(loader_wait_s, decode_wait_s, batch_s);
  if (share != loader.gpu_share()) loader.set_gpu_share(share);
}

void GpuDecodeStage::abandon(Pending& pending) {
  const c10::OptionalDeviceGuard guard(cuda_only(device_));
  sync_->wait_decoded();
  pending.windows.clear();
}

void GpuDecodeStage::finish(Pending& pending, torch::Tensor images, const data::Batch& batch) {
  const c10::OptionalDeviceGuard guard(cuda_only(device_));
  Stopwatch wait;
  sync_->wait_decoded();
  decode_wait_s_ = ns_to_seconds(wait.lap());
  decode_waited_ = true;
  const auto sizes = images.sizes();
  torch::Tensor made =
      torch::empty({static_cast<int64_t>(pending.slots.size()), sizes[1], sizes[2], sizes[3]}, images.options());
  resample_with_taps(pending.windows, pending.device_taps, pending.bicubic, made);
  sync_->mark_consumed(pending.arena);
  if (pending.check >= 0) {
    const auto k = static_cast<int64_t>(std::find(pending.slots.begin(), pending.slots.end(), pending.check) -
                                        pending.slots.begin());
    const double difference = (made[k].to(torch::kInt32) - images[pending.check].to(torch::kInt32))
                                  .abs()
                                  .to(torch::kFloat32)
                                  .mean()
                                  .item<double>();
    if (difference > kTolerance) {
      throw SystemError(fmt::format(
          "--decode gpu: nvJPEG's pixels differ from the CPU decoder's by {:.1f} levels on average for sample {} "
          "(allowed {}); this GPU's JPEG decoding cannot be trusted here ({}): use --decode cpu",
          difference, batch.indices()[pending.check], kTolerance, decoder_->description()));
    }
  }
  images.index_copy_(0, pending.device_slots, made);
}

}  // namespace stoker::train

namespace stoker::train {

GpuDecodePlan plan_gpu_decode(data::DecodeMode asked, torch::Device device, const data::LoaderOptions& options,
                              const data::Source& source, const std::vector<std::string>& nvjpeg_dirs) {
  const bool required = asked == data::DecodeMode::kGpu;
  GpuDecodePlan plan;
  const auto cannot = [&](const std::string& why) {
    if (required) throw UsageError("--decode gpu: " + why + "; use --decode cpu");
    plan.note = "--decode auto: decoding on the CPU: " + why;
    return plan;
  };
  if (const std::string blocker = data::gpu_handoff_blocker(options, source); !blocker.empty()) return cannot(blocker);

  const c10::OptionalDeviceGuard guard(cuda_only(device));
  // The device's context, current here.
  if (device.is_cuda()) torch::empty({1}, torch::TensorOptions(torch::kUInt8).device(device));
  std::string why_not;
  std::unique_ptr<data::GpuDecoder> decoder =
      data::GpuDecoder::open(nvjpeg_dirs, data::gpu_decoder_options(options.transform, options.batch_size), &why_not);
  if (!decoder) return cannot(why_not);
  const data::GpuHandoff handoff = data::gpu_handoff_for(asked, decoder->has_hardware());
  if (handoff == data::GpuHandoff::kOff) return cannot(decoder->description());  // auto without an engine
  std::unique_ptr<DecodeSync> sync = make_decode_sync(device, &why_not);
  if (!sync) return cannot(why_not);
  plan.handoff = handoff;
  plan.stage = std::make_shared<GpuDecodeStage>(device, std::move(decoder), std::move(sync));
  return plan;
}

}  // namespace stoker::train
