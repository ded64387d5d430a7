// The GPU decode plan: see decode_plan.h.
#include "data/decode/gpu/decode_plan.h"

namespace stoker::data::gpu {

const char* to_string(DecodeBackend backend) {
  switch (backend) {
    case DecodeBackend::kHardware:
      return "hardware";
    case DecodeBackend::kCuda:
      return "CUDA";
    case DecodeBackend::kCpu:
      break;
  }
  return "CPU";
}

const char* to_string(DecodeReason reason) {
  switch (reason) {
    case DecodeReason::kNone:
      return "";
    case DecodeReason::kProgressive:
      return "progressive";
    case DecodeReason::kSubsampling:
      return "4:1:1 or 4:1:0";
    case DecodeReason::kMultiScan:
      return "several scans";
    case DecodeReason::kHardwareSize:
      return "too large for the engine";
    case DecodeReason::kNoEngine:
      return "no JPEG engine";
    case DecodeReason::kCmyk:
      return "CMYK";
    case DecodeReason::kColorSpace:
      return "RGB or unknown colour space";
    case DecodeReason::kArithmetic:
      return "arithmetic coding";
    case DecodeReason::kPrecision:
      return "not 8-bit";
    case DecodeReason::kSamplingFactors:
      return "unusual sampling factors";
    case DecodeReason::kOverMaxPixels:
      return "over max_pixels";
    case DecodeReason::kDamaged:
      return "damaged";
    case DecodeReason::kNotJpeg:
      return "not a JPEG";
    case DecodeReason::kBadCrop:
      break;
  }
  return "crop outside the image";
}

namespace {

DecodePlan on(DecodeBackend backend, DecodeReason reason) {
  DecodePlan plan;
  plan.backend = backend;
  plan.reason = reason;
  return plan;
}

// The reason a readable JPEG does not go to the CUDA path either; kNone when it may.
DecodeReason cpu_reason(const JpegLayout& layout, const DecodeOptions& options) {
  if (layout.precision != 8) return DecodeReason::kPrecision;
  if (!layout.damage.empty()) return DecodeReason::kDamaged;
  if (static_cast<int64_t>(layout.width) * layout.height > options.max_pixels) return DecodeReason::kOverMaxPixels;
  if (layout.arithmetic) return DecodeReason::kArithmetic;
  if (layout.color == JpegColor::kCmyk || layout.color == JpegColor::kYcck) return DecodeReason::kCmyk;
  if (layout.color != JpegColor::kGray && layout.color != JpegColor::kYCbCr) return DecodeReason::kColorSpace;
  if (layout.components != 1 && !chroma_subsampling_of(layout)) return DecodeReason::kSamplingFactors;
  return DecodeReason::kNone;
}

// The reason a JPEG the CUDA path takes does not go to the engine; kNone when it does.
DecodeReason cuda_reason(const JpegLayout& layout, const GpuDecodeLimits& limits) {
  if (layout.progressive) return DecodeReason::kProgressive;
  const std::optional<ChromaSubsampling> subsampling = chroma_subsampling_of(layout);
  if (subsampling == ChromaSubsampling::k411 || subsampling == ChromaSubsampling::k410) {
    return DecodeReason::kSubsampling;
  }
  if (!layout.single_scan) return DecodeReason::kMultiScan;
  if (layout.width > limits.hardware_max_side || layout.height > limits.hardware_max_side) {
    return DecodeReason::kHardwareSize;
  }
  if (!limits.engine) return DecodeReason::kNoEngine;
  return DecodeReason::kNone;
}

}  // namespace

DecodePlan plan_decode(const JpegLayout& layout, const DecodeRequest& request, const DecodeOptions& options,
                       const GpuDecodeLimits& limits) {
  const DecodeReason cpu = cpu_reason(layout, options);
  if (cpu != DecodeReason::kNone) return on(DecodeBackend::kCpu, cpu);

  CropRect crop;
  if (!resolve_crop(request.crop, layout.width, layout.height, &crop).ok()) {
    return on(DecodeBackend::kCpu, DecodeReason::kBadCrop);
  }
  const DecodeReason cuda = cuda_reason(layout, limits);
  DecodePlan plan = on(cuda == DecodeReason::kNone ? DecodeBackend::kHardware : DecodeBackend::kCuda, cuda);
  if (plan.backend == DecodeBackend::kHardware) {
    plan.window = plan_window(crop, layout.width, layout.height, request, options);
  } else {
    // The CUDA path decodes the whole image at full scale.
    plan.window = DecodeWindow{8, layout.width, layout.height, {0, layout.width}, {0, layout.height}};
  }
  const CropRect scaled = scaled_crop(crop, plan.window.scale_num);
  plan.crop =
      CropRect{scaled.x - plan.window.cols.begin, scaled.y - plan.window.rows.begin, scaled.width, scaled.height};
  return plan;
}

DecodePlanner::DecodePlanner(DecodeOptions options, GpuDecodeLimits limits) : options_(options), limits_(limits) {}

DecodePlan DecodePlanner::plan(std::span<const uint8_t> bytes, const DecodeRequest& request) {
  if (sniff_format(bytes) != ImageFormat::kJpeg) return on(DecodeBackend::kCpu, DecodeReason::kNotJpeg);
  jpeg_.read_layout(bytes, &layout_);
  return plan_decode(layout_, request, options_, limits_);
}

}  // namespace stoker::data::gpu
