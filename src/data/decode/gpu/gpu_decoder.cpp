// stoker::data::GpuDecoder (stoker/data/gpu_decoder.h): a batch's GPU samples, planned by the
// workers (GpuSample), through GpuJpegDecoder.
#include "stoker/data/gpu_decoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/decode/gpu/gpu_jpeg_decoder.h"
#include "data/decode/gpu/nvjpeg_library.h"
#include "stoker/core/error.h"
#include "stoker/data/loader.h"

namespace stoker::data {
namespace {

// The plan a worker made for a sample, from what the batch keeps of it.
gpu::DecodePlan plan_from_sample(const GpuSample& g) {
  gpu::DecodePlan plan;
  plan.backend = g.hardware ? gpu::DecodeBackend::kHardware : gpu::DecodeBackend::kCuda;
  plan.reason = gpu::DecodeReason::kNone;
  plan.window.scale_num = g.scale_num;
  plan.window.full_width = g.scaled_width;
  plan.window.full_height = g.scaled_height;
  plan.window.cols = {g.window_x, g.window_x + g.window_width};
  plan.window.rows = {g.window_y, g.window_y + g.window_height};
  plan.crop = g.crop;
  return plan;
}

}  // namespace

GpuDecoderOptions gpu_decoder_options(const TransformSpec& chain, int batch_size) {
  const int side = std::max(1024, 2 * std::max(chain.out_width, chain.out_height));
  return {chain.channels, std::max(batch_size, 1), side, side};
}

struct GpuDecoder::Impl {
  std::unique_ptr<gpu::NvjpegLibrary> library;
  std::unique_ptr<gpu::GpuJpegDecoder> decoder;  // after the library it calls
  std::vector<gpu::GpuDecodeItem> items;
  std::vector<gpu::GpuDecodeResult> results;
};

GpuDecoder::GpuDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuDecoder::~GpuDecoder() = default;

std::unique_ptr<GpuDecoder> GpuDecoder::open(const std::vector<std::string>& nvjpeg_dirs,
                                             const GpuDecoderOptions& options, std::string* why_not) {
  auto impl = std::make_unique<Impl>();
  impl->library = gpu::NvjpegLibrary::load(gpu::NvjpegSearch::standard(nvjpeg_dirs), why_not);
  if (!impl->library) return nullptr;
  impl->decoder = gpu::GpuJpegDecoder::create(*impl->library, options, why_not);
  if (!impl->decoder) return nullptr;
  return std::unique_ptr<GpuDecoder>(new GpuDecoder(std::move(impl)));
}

const std::string& GpuDecoder::description() const { return impl_->decoder->description(); }
bool GpuDecoder::has_hardware() const { return impl_->decoder->has_hardware(); }

void GpuDecoder::decode(const Batch& batch, std::span<const int> slots, std::span<uint8_t* const> destinations,
                        std::span<const size_t> pitches, void* stream, std::vector<GpuDecodeOutcome>* outcomes) {
  if (destinations.size() != slots.size() || pitches.size() != slots.size()) {
    throw UsageError(fmt::format("GpuDecoder: {} slots, {} destinations and {} pitches; one of each per slot",
                                 slots.size(), destinations.size(), pitches.size()));
  }
  impl_->items.clear();
  for (size_t k = 0; k < slots.size(); ++k) {
    const GpuSample* g = slots[k] >= 0 && slots[k] < batch.size() ? batch.gpu_sample(slots[k]) : nullptr;
    if (g == nullptr)
      throw UsageError(fmt::format("GpuDecoder: slot {} of the batch has no sample for the GPU", slots[k]));
    impl_->items.push_back({g->bytes, plan_from_sample(*g), destinations[k], pitches[k]});
  }
  try {
    impl_->decoder->decode(impl_->items, static_cast<cudaStream_t>(stream), &impl_->results);
  } catch (const std::invalid_argument& e) {  // a destination's pitch, too many samples: the caller's
    throw UsageError(std::string("GpuDecoder: ") + e.what());
  }
  outcomes->resize(impl_->results.size());
  for (size_t k = 0; k < impl_->results.size(); ++k) {
    (*outcomes)[k] = {impl_->results[k].on_gpu(), impl_->results[k].reason};
  }
}

}  // namespace stoker::data
