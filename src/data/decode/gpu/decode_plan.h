// Private: which decoder takes each JPEG when images are decoded on the GPU, and what part of
// it at what scale. Pure planning on the CPU: nothing here needs a GPU or nvJPEG.
//
// Three backends (docs/design/decode.md, "GPU decoding"):
//   - kHardware: nvJPEG's hardware engine (A100, H100, ...; NVJPEG_BACKEND_HARDWARE), batched
//     through nvjpegDecodeBatchedEx. Baseline or extended sequential Huffman, 8-bit, one scan
//     with every component, gray or YCbCr with 4:4:4, 4:2:2, 4:2:0, 4:4:0 or 4:0:0, each side
//     at most GpuDecodeLimits::hardware_max_side. Only it decodes a region (ROI) and at 1/2,
//     1/4 or 1/8 scale, so only its plans carry a window smaller than the image.
//   - kCuda: nvJPEG's CUDA (hybrid) path for the JPEGs it decodes and the engine does not:
//     progressive, 4:1:1 and 4:1:0, several sequential scans, sides over the engine's limit.
//     Whole image, full scale.
//   - kCpu: stoker's CPU decoder (libjpeg-turbo) for the rest: CMYK and YCCK (converted as
//     Pillow does, which nvJPEG's subtractive CMYK does not match), RGB and unknown colour
//     spaces, arithmetic coding, precision other than 8 bits, unusual sampling factors,
//     images over DecodeOptions::max_pixels, damaged files and non-JPEGs (PNG). The CPU path
//     names a damaged or oversized file and substitutes it as it always does, so such a file
//     never fails the batch it is in.
// Each choice away from the hardware carries its reason (DecodeReason) as data, so statistics
// can say "12 decoded on the CPU: CMYK (3), arithmetic coding (9)".
//
// The window is the CPU decoder's (plan_window in crop_window.h: the same DCT-scale rule and
// the same margin), so either path resamples the same source pixels.
//
// The checks here read the header and look for the end-of-image marker, as the CPU path does.
// Damage inside the entropy-coded data is found only by decoding; the GPU path, once written,
// must parse each stream in full (nvjpegJpegStreamParse), ask nvjpegDecodeBatchedSupportedEx,
// and send any file nvJPEG refuses or fails on to the CPU path one by one.
//
// Thread safety: plan_decode() and the functions are pure. A DecodePlanner is not
// thread-safe (it holds a libjpeg decompressor): one per worker thread.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "data/decode/crop_window.h"
#include "data/decode/jpeg_decoder.h"
#include "data/decode/jpeg_layout.h"
#include "stoker/data/decode.h"

namespace stoker::data::gpu {

enum class DecodeBackend { kHardware, kCuda, kCpu };
inline constexpr size_t kBackendCount = 3;

// Why a file does not go to the hardware engine (kNone: it does).
enum class DecodeReason {
  kNone,
  // to the CUDA path
  kProgressive,
  kSubsampling,   // 4:1:1 or 4:1:0: the engine refuses them
  kMultiScan,     // sequential, components in separate scans
  kHardwareSize,  // a side over GpuDecodeLimits::hardware_max_side
  kNoEngine,      // the GPU has none (GpuDecodeLimits::engine)
  // to the CPU
  kCmyk,        // CMYK or YCCK
  kColorSpace,  // RGB (Adobe transform 0) or unknown
  kArithmetic,
  kPrecision,        // not 8 bits per sample
  kSamplingFactors,  // a layout nvJPEG has no name for
  kOverMaxPixels,
  kDamaged,
  kNotJpeg,
  kBadCrop,  // the request's crop is not inside the image: the CPU path reports it
};
inline constexpr size_t kReasonCount = static_cast<size_t>(DecodeReason::kBadCrop) + 1;

// Short texts for statistics and messages: "hardware", "CUDA", "CPU"; "progressive", "CMYK",
// "arithmetic coding", ... ("" for kNone).
const char* to_string(DecodeBackend backend);
const char* to_string(DecodeReason reason);

// Limits of the hardware engine. nvJPEG's documentation gives no size limit per GPU; it
// answers per file (nvjpegDecodeBatchedSupportedEx), which the GPU path asks as well. This is
// the planner's guard, not a measured figure: to be confirmed on each GPU generation.
struct GpuDecodeLimits {
  int hardware_max_side = 16384;
  // false: the GPU has no engine, and every JPEG nvJPEG takes goes to the CUDA path
  // (kNoEngine).
  bool engine = true;
};

struct DecodePlan {
  DecodeBackend backend = DecodeBackend::kCpu;
  DecodeReason reason = DecodeReason::kNotJpeg;
  // kHardware and kCuda only (for kCpu the CPU decoder plans as it always does):
  DecodeWindow window;  // scale (8 = full; 4, 2, 1 = 1/2, 1/4, 1/8) and region, scaled pixels
  CropRect crop;        // the requested crop in the window's coordinates
};

// The plan for a JPEG with this layout (JpegDecoder::read_layout). The request is the
// transform's (DecodeRequest), the options the loader's: crop_window off means whole images,
// dct_scaling off means full scale, on every backend.
DecodePlan plan_decode(const JpegLayout& layout, const DecodeRequest& request, const DecodeOptions& options,
                       const GpuDecodeLimits& limits = {});

// Reads a file's layout and plans it: what a loader worker does per sample.
class DecodePlanner {
 public:
  explicit DecodePlanner(DecodeOptions options = {}, GpuDecodeLimits limits = {});
  // Never fails: a file the planner cannot read is planned for the CPU (kNotJpeg, kDamaged).
  DecodePlan plan(std::span<const uint8_t> bytes, const DecodeRequest& request);

 private:
  DecodeOptions options_;
  GpuDecodeLimits limits_;
  JpegDecoder jpeg_;
  JpegLayout layout_;
};

}  // namespace stoker::data::gpu
