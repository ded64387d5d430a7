#include "train/torch/step/device_feed.h"

#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include "stoker/core/clock.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

torch::Tensor images_of(const data::Batch& batch) {
  const auto shape = batch.shape();
  const torch::Dtype dtype = batch.dtype() == data::DType::kUint8     ? torch::kUInt8
                             : batch.dtype() == data::DType::kFloat16 ? torch::kHalf
                                                                      : torch::kFloat32;
  auto t = torch::from_blob(const_cast<void*>(batch.data()), {shape[0], shape[1], shape[2], shape[3]}, dtype);
  return batch.layout() == data::Layout::kNHWC ? t.permute({0, 3, 1, 2}) : t;
}

void* PinnedAllocator::allocate(size_t bytes) {
  torch::Tensor block = torch::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))},
                                     torch::TensorOptions(torch::kUInt8).pinned_memory(true));
  void* pointer = block.data_ptr();
  MutexLock lock(mutex_);
  blocks_.emplace(pointer, std::move(block));
  return pointer;
}

void PinnedAllocator::deallocate(void* pointer, size_t /*bytes*/) {
  MutexLock lock(mutex_);
  blocks_.erase(pointer);
}

struct DeviceFeed::Streams {
  explicit Streams(torch::Device device)
      : impl(device.type()),
        side(impl.getStreamFromGlobalPool(device)),
        ready(device.type()),
        allocated(device.type()),
        stall_begin(device.type(), c10::EventFlag::BACKEND_DEFAULT),
        stall_end(device.type(), c10::EventFlag::BACKEND_DEFAULT) {}
  c10::impl::VirtualGuardImpl impl;
  c10::Stream side;
  c10::Event ready;      // the side stream's copy is done
  c10::Event allocated;  // the compute stream reached the outputs' allocation
  // Around the compute stream's wait for `ready` (timing on): how long the copy held it up.
  c10::Event stall_begin, stall_end;
  bool stall_recorded = false;
  bool stall_untimed = false;  // timing failed once: not tried again
};

DeviceFeed::DeviceFeed(data::Loader& loader, const Objective& objective, FeedOptions options)
    : loader_(loader), objective_(objective), options_(std::move(options)) {
  if (options_.normalize_mean) {
    // Per channel, in uint8 units: (x - 255 mean) / (255 std) = (x / 255 - mean) / std.
    const int64_t c = loader_.options().transform.channels;
    auto in_uint8_units = [&](std::array<float, 3>& values) {
      return torch::from_blob(values.data(), {3}, torch::kFloat32)
          .slice(0, 0, c)
          .mul(255.0f)
          .view({1, c, 1, 1})
          .to(options_.device);
    };
    mean255_ = in_uint8_units(*options_.normalize_mean);
    std255_ = in_uint8_units(*options_.normalize_std);
  }
  if (options_.device.is_cuda() && options_.lookahead) streams_ = std::make_unique<Streams>(options_.device);
}

DeviceFeed::~DeviceFeed() { reset(); }

void DeviceFeed::reset() {
  // A copy may still read the pinned buffer of a pending batch: let it finish first.
  if (streams_ && pending_) streams_->impl.synchronizeStream(streams_->side);
  // Its GPU samples may still be decoding into their arena.
  if (pending_ && pending_->gpu) options_.gpu_decode->abandon(*pending_->gpu);
  pending_.reset();
  since_handed_out_.reset();  // the time until the next pass's first batch is no batch's
}

void DeviceFeed::start_copy(data::Batch batch, double wait_s) {
  Stopwatch watch;
  FedBatch fed;
  fed.wait_s = wait_s;
  if (batch) {
    // GPU samples are decoded now, and the CPU's share of them made into the host batch
    // before it is read below.
    if (options_.gpu_decode) fed.gpu = options_.gpu_decode->start(loader_, batch);
    const torch::Tensor host_images = images_of(batch);
    const torch::Tensor host_targets = objective_.targets_of(batch);
    const bool on_cpu = options_.device.is_cpu();
    if (on_cpu && !mean255_.defined() && !options_.channels_last && !fed.gpu) {
      fed.images = host_images;  // zero copy
      fed.targets = host_targets;
    } else {
      // Outputs are allocated on the compute stream; only the side stream writes them, and
      // the compute stream reads them after the event, so the caching allocator stays safe.
      // A batch with GPU samples stays uint8 until finish_copy() has resampled them into it.
      if (fed.gpu) {
        // In the host batch's layout, so that the copy is one transfer.
        fed.images_uint8 = torch::empty_like(host_images, torch::TensorOptions(torch::kUInt8).device(options_.device));
      } else {
        fed.images = empty_model_input(host_images.sizes());
      }
      fed.targets = torch::empty(host_targets.sizes(), host_targets.options().device(options_.device));
      std::optional<c10::StreamGuard> guard;
      if (streams_) {
        // The caching allocator may have handed out memory the compute stream still reads:
        // the side stream starts writing only once the compute stream is past that point.
        streams_->allocated.record(streams_->impl.getStream(options_.device));
        streams_->allocated.block(streams_->side);
        guard.emplace(streams_->side);
      }
      fed.targets.copy_(host_targets, /*non_blocking=*/true);
      if (fed.gpu) {
        fed.images_uint8.copy_(host_images, /*non_blocking=*/true);
        options_.gpu_decode->upload(*fed.gpu);
      } else {
        // Normalized by the feed: uint8 over the bus, then float and normalize on the device.
        write_model_input(fed.images,
                          mean255_.defined() ? host_images.to(options_.device, /*non_blocking=*/true) : host_images);
      }
      if (streams_) streams_->ready.record(streams_->side);
    }
  }
  fed.copy_s = ns_to_seconds(watch.lap());
  fed.host = std::move(batch);
  pending_.emplace(std::move(fed));
}

torch::Tensor DeviceFeed::empty_model_input(c10::IntArrayRef sizes) const {
  const auto format = options_.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  return torch::empty(sizes, torch::TensorOptions(torch::kFloat32).device(options_.device), format);
}

void DeviceFeed::write_model_input(torch::Tensor& images, const torch::Tensor& source) const {
  images.copy_(source, /*non_blocking=*/true);
  if (mean255_.defined()) images.sub_(mean255_).div_(std255_);
}

FedBatch DeviceFeed::finish_copy() {
  FedBatch fed = std::move(*pending_);
  pending_.reset();
  if (streams_ && fed) {
    Stopwatch watch;
    const c10::Stream compute = streams_->impl.getStream(options_.device);
    if (STOKER_TORCH_EVENT_TIMING) streams_->stall_begin.record(compute);
    streams_->ready.block(compute);  // the device waits, not the host
    if (STOKER_TORCH_EVENT_TIMING) {
      streams_->stall_end.record(compute);
      streams_->stall_recorded = true;
    }
    fed.copy_s += ns_to_seconds(watch.lap());
  }
  if (fed.gpu) {
    // After step k was enqueued: the decode of this batch ran while it computed.
    Stopwatch watch;
    options_.gpu_decode->finish(*fed.gpu, fed.images_uint8, fed.host);
    fed.images = empty_model_input(fed.images_uint8.sizes());
    write_model_input(fed.images, fed.images_uint8);
    fed.images_uint8 = torch::Tensor();
    fed.gpu.reset();
    fed.copy_s += ns_to_seconds(watch.lap());
  }
  return fed;
}

double DeviceFeed::copy_stall_s() {
  if (!streams_ || !streams_->stall_recorded || streams_->stall_untimed) return 0;
  streams_->stall_recorded = false;
  try {
    return std::max(0.0, compat::event_seconds(streams_->stall_begin, streams_->stall_end));
  } catch (const c10::Error&) {
    // A backend that cannot time its events: the split is a diagnostic, training goes on with
    // the wait counted as compute, as before 2.5.
    streams_->stall_untimed = true;
    return 0;
  }
}

FedBatch DeviceFeed::next() {
  auto fetch = [&] {
    Stopwatch watch;
    data::Batch batch = loader_.next();
    const double wait = ns_to_seconds(watch.lap());
    start_copy(std::move(batch), wait);
  };
  if (!pending_) fetch();
  FedBatch current = finish_copy();
  // One batch ahead: its copy overlaps this batch's compute. Its wait for the loader is
  // charged to the batch it belongs to, i.e. the next call.
  if (streams_ && current) fetch();
  if (current) tune_gpu_share(current);
  return current;
}

void DeviceFeed::tune_gpu_share(const FedBatch& batch) {
  if (!options_.gpu_decode || loader_.options().gpu_handoff != data::GpuHandoff::kHardware) return;
  const double batch_s = since_handed_out_ ? ns_to_seconds(since_handed_out_->lap()) : 0.0;
  if (!since_handed_out_) since_handed_out_.emplace();
  options_.gpu_decode->tune_share(loader_, batch.wait_s, batch_s);
}

FeedOptions plan_device_feed(torch::Device device, bool conv_net, data::LoaderOptions* loader_options) {
  FeedOptions feed;
  feed.device = device;
  if (!device.is_cuda()) return feed;
  move_normalize_to_feed(&loader_options->transform, &feed);
  feed.channels_last = conv_net;
  return feed;
}

void move_normalize_to_feed(data::TransformSpec* spec, FeedOptions* feed) {
  if (!data::normalize_in_consumer(spec)) return;
  feed->normalize_mean = spec->normalize.mean;
  feed->normalize_std = spec->normalize.std;
}

}  // namespace stoker::train
