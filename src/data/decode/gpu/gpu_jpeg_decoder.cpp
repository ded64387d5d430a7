// Batched JPEG decoding with nvJPEG: see gpu_jpeg_decoder.h.
#include "data/decode/gpu/gpu_jpeg_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace stoker::data::gpu {

// Every nvJPEG object the decoder owns, destroyed in reverse order of creation.
struct GpuJpegDecoder::Handles {
  const NvjpegFunctions& fn;
  nvjpegHandle_t handle = nullptr;
  nvjpegJpegState_t batched_state = nullptr;  // the engine's (hardware handle only)
  nvjpegJpegDecoder_t decoder = nullptr;      // the CUDA path's
  nvjpegJpegState_t decoder_state = nullptr;
  nvjpegBufferDevice_t device_buffer = nullptr;
  nvjpegDecodeParams_t cuda_params = nullptr;
  std::vector<nvjpegJpegStream_t> streams;      // one per batch slot: parsed item i
  std::vector<nvjpegDecodeParams_t> hw_params;  // one per batch slot: the engine's item params

  explicit Handles(const NvjpegFunctions& f) : fn(f) {}
  ~Handles() {
    for (nvjpegDecodeParams_t p : hw_params) fn.decode_params_destroy(p);
    for (nvjpegJpegStream_t s : streams) fn.jpeg_stream_destroy(s);
    if (cuda_params != nullptr) fn.decode_params_destroy(cuda_params);
    if (decoder_state != nullptr) fn.jpeg_state_destroy(decoder_state);
    if (device_buffer != nullptr) fn.buffer_device_destroy(device_buffer);
    if (decoder != nullptr) fn.decoder_destroy(decoder);
    if (batched_state != nullptr) fn.jpeg_state_destroy(batched_state);
    if (handle != nullptr) fn.destroy(handle);
  }
};

namespace {

nvjpegOutputFormat_t output_format(int channels) { return channels == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_RGBI; }

nvjpegScaleFactor_t scale_factor(int scale_num) {
  switch (scale_num) {
    case 4:
      return NVJPEG_SCALE_1_BY_2;
    case 2:
      return NVJPEG_SCALE_1_BY_4;
    case 1:
      return NVJPEG_SCALE_1_BY_8;
    default:
      return NVJPEG_SCALE_NONE;
  }
}

// The ROI nvJPEG takes for a window, in source pixels (see the header: to be confirmed on a
// GPU for scaled decodes); (0, 0, -1, -1), nvJPEG's "whole image", when the window is all of it.
struct Roi {
  int x = 0;
  int y = 0;
  int width = -1;
  int height = -1;
};
Roi nvjpeg_roi(const DecodeWindow& w, int source_width, int source_height) {
  if (w.cols.begin == 0 && w.rows.begin == 0 && w.cols.end == w.full_width && w.rows.end == w.full_height) return {};
  const int f = 8 / w.scale_num;
  Roi roi;
  roi.x = w.cols.begin * f;
  roi.y = w.rows.begin * f;
  roi.width = std::min(w.cols.end * f, source_width) - roi.x;
  roi.height = std::min(w.rows.end * f, source_height) - roi.y;
  return roi;
}

std::string refused(nvjpegStatus_t status) { return "nvJPEG refused it: " + describe(status); }
std::string failed(nvjpegStatus_t status) { return "nvJPEG failed on it: " + describe(status); }

GpuDecodeResult on(DecodeBackend backend, std::string reason = {}) { return {backend, std::move(reason)}; }

}  // namespace

GpuJpegDecoder::GpuJpegDecoder(const NvjpegLibrary& nvjpeg, const GpuDecoderOptions& options)
    : fn_(nvjpeg.fn()), options_(options), h_(std::make_unique<Handles>(nvjpeg.fn())) {}

GpuJpegDecoder::~GpuJpegDecoder() = default;

std::unique_ptr<GpuJpegDecoder> GpuJpegDecoder::create(const NvjpegLibrary& nvjpeg, const GpuDecoderOptions& options,
                                                       std::string* why_not) {
  if (options.channels != 1 && options.channels != 3) {
    throw std::invalid_argument(fmt::format("GpuJpegDecoder: channels {} (allowed: 1 or 3)", options.channels));
  }
  if (options.max_batch_size < 1 || options.preallocate_width < 0 || options.preallocate_height < 0) {
    throw std::invalid_argument(fmt::format(
        "GpuJpegDecoder: max_batch_size {} must be at least 1 and the preallocation hints {}x{} not negative",
        options.max_batch_size, options.preallocate_width, options.preallocate_height));
  }
  std::unique_ptr<GpuJpegDecoder> self(new GpuJpegDecoder(nvjpeg, options));
  const NvjpegFunctions& fn = self->fn_;
  Handles& h = *self->h_;
  const nvjpegOutputFormat_t format = output_format(options.channels);

  // The engine when the GPU has one; else nvJPEG's default handle, for the CUDA path alone.
  std::string no_engine;
  nvjpegStatus_t status = fn.create_ex(NVJPEG_BACKEND_HARDWARE, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &h.handle);
  unsigned int engines = 0;
  unsigned int cores = 0;
  if (status == NVJPEG_STATUS_SUCCESS) {
    status = fn.jpeg_state_create(h.handle, &h.batched_state);
    if (status == NVJPEG_STATUS_SUCCESS) {
      self->hardware_ = true;
      if (fn.get_hardware_decoder_info(h.handle, &engines, &cores) != NVJPEG_STATUS_SUCCESS) engines = 0;
    } else {
      no_engine = describe(status);
      fn.destroy(h.handle);
      h.handle = nullptr;
    }
  } else {
    h.handle = nullptr;
    no_engine = describe(status);
  }
  if (!self->hardware_) {
    status = fn.create_ex(NVJPEG_BACKEND_DEFAULT, nullptr, nullptr, NVJPEG_FLAGS_DEFAULT, &h.handle);
    if (status != NVJPEG_STATUS_SUCCESS) {
      h.handle = nullptr;
      *why_not = fmt::format("nvJPEG could not start: {}", describe(status));
      return nullptr;
    }
  }

  // The CUDA path, and one parsed stream and one set of decode params per batch slot.
  const auto step = [&](const char* what, nvjpegStatus_t s) {
    if (s != NVJPEG_STATUS_SUCCESS && why_not->empty())
      *why_not = fmt::format("nvJPEG {} failed: {}", what, describe(s));
    return s == NVJPEG_STATUS_SUCCESS;
  };
  why_not->clear();
  bool ok = step("nvjpegDecoderCreate", fn.decoder_create(h.handle, NVJPEG_BACKEND_DEFAULT, &h.decoder)) &&
            step("nvjpegDecoderStateCreate", fn.decoder_state_create(h.handle, h.decoder, &h.decoder_state)) &&
            step("nvjpegBufferDeviceCreate", fn.buffer_device_create(h.handle, nullptr, &h.device_buffer)) &&
            step("nvjpegStateAttachDeviceBuffer", fn.state_attach_device_buffer(h.decoder_state, h.device_buffer)) &&
            step("nvjpegDecodeParamsCreate", fn.decode_params_create(h.handle, &h.cuda_params)) &&
            step("nvjpegDecodeParamsSetOutputFormat", fn.decode_params_set_output_format(h.cuda_params, format));
  for (int i = 0; ok && i < options.max_batch_size; ++i) {
    nvjpegJpegStream_t stream = nullptr;
    ok = step("nvjpegJpegStreamCreate", fn.jpeg_stream_create(h.handle, &stream));
    if (ok) h.streams.push_back(stream);
    if (ok && self->hardware_) {
      nvjpegDecodeParams_t params = nullptr;
      ok = step("nvjpegDecodeParamsCreate", fn.decode_params_create(h.handle, &params));
      if (ok) h.hw_params.push_back(params);
    }
  }
  if (!ok) return nullptr;

  // The engine's device memory, sized once (nvImageCodec measured more than 20 % with it).
  std::string preallocation;
  if (self->hardware_) {
    status = fn.decode_batched_pre_allocate(h.handle, h.batched_state, options.max_batch_size,
                                            std::max(options.preallocate_width, 1),
                                            std::max(options.preallocate_height, 1), NVJPEG_CSS_444, format);
    if (status != NVJPEG_STATUS_SUCCESS) preallocation = fmt::format(" (preallocation failed: {})", describe(status));
  }

  const std::string version = nvjpeg.version();
  if (self->hardware_) {
    self->description_ = fmt::format("nvJPEG {}: hardware engine ({} engine{}) + CUDA path{}", version, engines,
                                     engines == 1 ? "" : "s", preallocation);
  } else {
    self->description_ = fmt::format("nvJPEG {}: CUDA path only: this GPU has no JPEG engine ({})", version, no_engine);
  }
  return self;
}

void GpuJpegDecoder::decode(std::span<const GpuDecodeItem> items, cudaStream_t stream,
                            std::vector<GpuDecodeResult>* results) {
  const int channels = options_.channels;
  if (static_cast<int64_t>(items.size()) > options_.max_batch_size) {
    throw std::invalid_argument(
        fmt::format("GpuJpegDecoder::decode: {} items, over max_batch_size {}", items.size(), options_.max_batch_size));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const GpuDecodeItem& item = items[i];
    const char* wrong = nullptr;
    if (item.plan.backend == DecodeBackend::kCpu) {
      wrong = "is planned for the CPU";
    } else if (item.width() <= 0 || item.height() <= 0) {
      wrong = "has an empty window";
    } else if (item.destination == nullptr) {
      wrong = "has no destination";
    } else if (item.pitch < static_cast<size_t>(item.width()) * channels) {
      wrong = "has a pitch under width * channels";
    }
    if (wrong != nullptr) {
      throw std::invalid_argument(fmt::format("GpuJpegDecoder::decode: item {} {} (window {}x{}, pitch {})", i, wrong,
                                              item.width(), item.height(), item.pitch));
    }
  }
  results->assign(items.size(), GpuDecodeResult{});
  Handles& h = *h_;
  const nvjpegOutputFormat_t format = output_format(channels);
  const auto image_of = [](const GpuDecodeItem& item) {
    nvjpegImage_t image{};
    image.channel[0] = item.destination;
    image.pitch[0] = item.pitch;
    return image;
  };

  // The CUDA path for item i (parsed in slot i); whether it decoded. A scaled window is not
  // its to decode.
  std::vector<Roi> rois(items.size());
  const auto decode_on_cuda_path = [&](size_t i, std::string reason) {
    const GpuDecodeItem& item = items[i];
    if (item.plan.window.scale_num != 8) {
      (*results)[i] = on(DecodeBackend::kCpu, reason + " and nvJPEG's CUDA path does not scale");
      return;
    }
    const Roi& roi = rois[i];
    nvjpegStatus_t status = fn_.decode_params_set_roi(h.cuda_params, roi.x, roi.y, roi.width, roi.height);
    if (status == NVJPEG_STATUS_SUCCESS) {
      nvjpegImage_t image = image_of(item);
      status = fn_.decode_jpeg(h.handle, h.decoder, h.decoder_state, h.streams[i], &image, h.cuda_params, stream);
    }
    if (status != NVJPEG_STATUS_SUCCESS) {
      (*results)[i] = on(DecodeBackend::kCpu, (reason.empty() ? "" : reason + "; ") + failed(status));
      return;
    }
    (*results)[i] = on(DecodeBackend::kCuda, reason.empty() ? reason : reason + ": decoded on the CUDA path");
  };

  // 1-2: parse, check the size, sort into the engine's items and the CUDA path's.
  std::vector<size_t> engine;
  std::vector<std::pair<size_t, std::string>> cuda;  // item, why it is not where planned
  for (size_t i = 0; i < items.size(); ++i) {
    const GpuDecodeItem& item = items[i];
    nvjpegStatus_t status = fn_.jpeg_stream_parse(h.handle, item.bytes.data(), item.bytes.size(), 0, 0, h.streams[i]);
    unsigned int width = 0;
    unsigned int height = 0;
    if (status == NVJPEG_STATUS_SUCCESS) status = fn_.jpeg_stream_get_frame_dimensions(h.streams[i], &width, &height);
    if (status != NVJPEG_STATUS_SUCCESS) {
      (*results)[i] = on(DecodeBackend::kCpu, refused(status));
      continue;
    }
    const DecodeWindow& w = item.plan.window;
    const int64_t scaled_width = (static_cast<int64_t>(width) * w.scale_num + 7) / 8;
    const int64_t scaled_height = (static_cast<int64_t>(height) * w.scale_num + 7) / 8;
    if (scaled_width != w.full_width || scaled_height != w.full_height) {
      (*results)[i] = on(DecodeBackend::kCpu, fmt::format("nvJPEG reads it as {}x{} at scale {}/8, planned as {}x{}",
                                                          width, height, w.scale_num, w.full_width, w.full_height));
      continue;
    }
    rois[i] = nvjpeg_roi(w, static_cast<int>(width), static_cast<int>(height));
    if (item.plan.backend == DecodeBackend::kCuda) {
      cuda.emplace_back(i, "");
      continue;
    }
    if (!hardware_) {
      cuda.emplace_back(i, "no JPEG engine on this GPU");
      continue;
    }
    nvjpegDecodeParams_t params = h.hw_params[engine.size()];
    const Roi& roi = rois[i];
    int unsupported = 1;
    status = fn_.decode_params_set_output_format(params, format);
    if (status == NVJPEG_STATUS_SUCCESS)
      status = fn_.decode_params_set_roi(params, roi.x, roi.y, roi.width, roi.height);
    if (status == NVJPEG_STATUS_SUCCESS) status = fn_.decode_params_set_scale_factor(params, scale_factor(w.scale_num));
    if (status == NVJPEG_STATUS_SUCCESS) {
      status = fn_.decode_batched_supported_ex(h.handle, h.streams[i], params, &unsupported);
    }
    if (status != NVJPEG_STATUS_SUCCESS) {
      cuda.emplace_back(i, "the engine could not check it (" + describe(status) + ")");
    } else if (unsupported != 0) {
      cuda.emplace_back(i, "the engine refused it");
    } else {
      engine.push_back(i);
    }
  }

  // 3: the engine's items in one call; when it fails, each alone, then the CUDA path.
  if (!engine.empty()) {
    std::vector<const unsigned char*> data;
    std::vector<size_t> lengths;
    std::vector<nvjpegImage_t> images;
    for (size_t i : engine) {
      data.push_back(items[i].bytes.data());
      lengths.push_back(items[i].bytes.size());
      images.push_back(image_of(items[i]));
    }
    const auto batched = [&](size_t first, size_t count) {
      nvjpegStatus_t status =
          fn_.decode_batched_initialize(h.handle, h.batched_state, static_cast<int>(count), 1, format);
      if (status != NVJPEG_STATUS_SUCCESS) return status;
      return fn_.decode_batched_ex(h.handle, h.batched_state, data.data() + first, lengths.data() + first,
                                   images.data() + first, h.hw_params.data() + first, stream);
    };
    const nvjpegStatus_t whole = batched(0, engine.size());
    for (size_t k = 0; k < engine.size(); ++k) {
      // A batch of one is retried no more: its failure is the item's.
      const nvjpegStatus_t status = whole == NVJPEG_STATUS_SUCCESS || engine.size() == 1 ? whole : batched(k, 1);
      if (status == NVJPEG_STATUS_SUCCESS) {
        (*results)[engine[k]] = on(DecodeBackend::kHardware);
      } else {
        cuda.emplace_back(engine[k], "the engine failed on it (" + describe(status) + ")");
      }
    }
  }

  // 4: the CUDA path, one by one, in batch order.
  std::sort(cuda.begin(), cuda.end());
  for (auto& [i, reason] : cuda) decode_on_cuda_path(i, std::move(reason));
}

}  // namespace stoker::data::gpu
