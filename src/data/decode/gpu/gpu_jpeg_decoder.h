// Private: decodes a batch of planned JPEGs (decode_plan.h) with nvJPEG into device buffers the
// caller owns, on a stream the caller owns. stoker does not link the CUDA runtime: this class
// calls nvJPEG only (through NvjpegLibrary) and never allocates, copies or synchronises device
// memory itself.
//
// What each item goes through, in batch order (decode()):
//   1. nvjpegJpegStreamParse of the whole stream (not ParseHeader, so that damage nvJPEG finds
//      is found before the engine sees the file), and nvjpegJpegStreamGetFrameDimensions: a
//      file whose size is not the one it was planned with is not decoded (nvJPEG would write
//      past the caller's buffer).
//   2. Planned kHardware, with an engine: its decode params (output format, ROI, scale) and
//      nvjpegDecodeBatchedSupportedEx. A file the engine refuses goes to the CUDA path when
//      the plan is at full scale (the CUDA path decodes a region, not a scale), else to the
//      CPU. Without an engine (create() found none) every kHardware item is handled so.
//   3. The engine's items: nvjpegDecodeBatchedInitialize and one nvjpegDecodeBatchedEx with
//      per-item params. When that call fails, each of its items is retried alone (a batch of
//      one), then on the CUDA path where the plan allows; what still fails goes to the CPU.
//   4. The CUDA path's items, one by one: nvjpegDecodeJpeg with a decoder of
//      NVJPEG_BACKEND_DEFAULT (nvJPEG's hybrid decoders, which take progressive, 4:1:1, 4:1:0
//      and multi-scan files; docs.nvidia.com/cuda/nvjpeg 2.3.4.4) and a device buffer
//      attached to its state (required, 2.3.4.4; no pinned buffer: nvJPEG then stages through
//      heap memory, 2.3.4.1, so no host buffer is reused while a copy may still read it).
// Every item ends decoded on the GPU (kHardware or kCuda) or handed back for the CPU with a
// one-line reason ("nvJPEG refused it: bad JPEG (status 3)"): a bad file never fails the
// batch and never throws.
//
// nvJPEG facts this relies on, from NVIDIA's nvJPEG documentation (CUDA 13, sections named):
//   - Output size at a scale factor (2.3.5.4): ceil(size / f) for f = 2, 4, 8, libjpeg's
//     ceil(size * M / 8) for M = 4, 2, 1: the size DecodeWindow::full_width/height has.
//   - The ROI (2.3.5.2) must lie inside "the JPEG image width" and height. The documentation
//     does not say whether, with a scale factor, the ROI is in source or in scaled pixels.
//     This decoder gives it in SOURCE pixels: the window's scaled columns [b, e) become
//     offset b*f, width min(e*f, W) - b*f, so that nvJPEG's output (ceil(width / f) columns
//     if it scales the region as it scales whole images) is exactly e - b columns either
//     way. TO CHECK ON A GPU (docs/TESTING.md): a region at 1/2 and 1/8 scale decoded by the
//     engine equals the CPU decoder's pixels of the same window; if the engine takes scaled
//     pixels instead, only nvjpeg_roi() in gpu_jpeg_decoder.cpp changes.
//   - nvjpegDecodeBatchedEx writes in the format given to nvjpegDecodeBatchedInitialize
//     (2.3.3.4), which is called again before every batch ("if the size of the batch changes,
//     or if the batch decoding fails", 2.1.3.1).
//   - ROI on the CUDA path: nvjpegDecodeParamsSetROI is refused only by the hardware backend
//     (2.3.5.2); the decoupled decoders take it (DALI and nvImageCodec use it so). Scale
//     factors are the hardware backend's only (2.3.5.4).
//   - nvjpegDecodeBatchedPreAllocate (2.3.3.7): hardware backend only; a hint, exceeded sizes
//     make nvJPEG grow its buffers; NVJPEG_CSS_444 lets every subsampling reuse them.
//
// Streams (the H100 report, docs/design/decode.md): every GPU task goes to the `stream`
// passed to decode(), nothing else. The caller must make that stream wait for whatever still
// uses the destinations (an event from the consumer's stream) and must not read or reuse a
// destination before the work enqueued on `stream` is done. decode() returns when the work
// is enqueued, not when it is done; an error nvJPEG reports only at execution is not seen.
//
// Thread safety: not thread-safe. nvJPEG's states, streams and buffers belong to one thread
// at a time (nvJPEG 1.3, "Thread Safety"): create one decoder per thread that decodes (the
// loader: one per process and device, decode() called from one thread). The NvjpegLibrary
// must outlive the decoder. nvJPEG binds its handles to the CUDA device current at create()
// (1.4): call create() and decode() with the same device current.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "data/decode/gpu/decode_plan.h"
#include "data/decode/gpu/nvjpeg_api.h"
#include "data/decode/gpu/nvjpeg_library.h"
#include "stoker/data/gpu_decoder.h"

namespace stoker::data::gpu {

// stoker/data/gpu_decoder.h's: channels 3 is NVJPEG_OUTPUT_RGBI, 1 NVJPEG_OUTPUT_Y; the size
// hint goes to nvjpegDecodeBatchedPreAllocate (without one nvJPEG's pool is still preallocated
// at 1x1).
using data::GpuDecoderOptions;

// One file to decode and where its pixels go.
struct GpuDecodeItem {
  std::span<const uint8_t> bytes;  // the whole file, host memory, alive until decode() returns
  DecodePlan plan;                 // kHardware or kCuda, from DecodePlanner::plan
  uint8_t* destination = nullptr;  // device memory: height() rows of width() * channels bytes
  size_t pitch = 0;                // bytes from one row to the next, at least width() * channels

  // The size written: the plan's window (scaled pixels).
  int width() const { return plan.window.cols.end - plan.window.cols.begin; }
  int height() const { return plan.window.rows.end - plan.window.rows.begin; }
};

struct GpuDecodeResult {
  // Where the item was decoded: kHardware or kCuda (the pixels are, once the stream gets
  // there, in its destination), or kCpu: not decoded, the caller decodes it on the CPU.
  DecodeBackend backend = DecodeBackend::kCpu;
  // Why it is not where its plan sent it, one line ("" when it is): "the engine refused it:
  // decoded on the CUDA path", "nvJPEG refused it: bad JPEG (status 3)".
  std::string reason;

  bool on_gpu() const { return backend != DecodeBackend::kCpu; }
};

class GpuJpegDecoder {
 public:
  // nvJPEG's handles for `options`. The hardware engine when this GPU has one, nvJPEG's CUDA
  // path always. Returns nullptr and sets *why_not to one line when nvJPEG cannot decode on
  // this machine at all ("nvJPEG could not start: architecture mismatch (status 7)").
  // Throws std::invalid_argument for options out of range (channels not 1 or 3,
  // max_batch_size < 1, a negative hint).
  static std::unique_ptr<GpuJpegDecoder> create(const NvjpegLibrary& nvjpeg, const GpuDecoderOptions& options,
                                                std::string* why_not);
  ~GpuJpegDecoder();
  GpuJpegDecoder(const GpuJpegDecoder&) = delete;
  GpuJpegDecoder& operator=(const GpuJpegDecoder&) = delete;

  // What decodes, for logs: "nvJPEG 13.0.1: hardware engine (7 engines) + CUDA path" or
  // "nvJPEG 13.0.1: CUDA path only: this GPU has no JPEG engine (architecture mismatch
  // (status 7))".
  const std::string& description() const { return description_; }
  // Whether the hardware engine is in use. Without it nothing is decoded at a reduced scale:
  // plan with DecodeOptions::dct_scaling off, or every scaled plan comes back for the CPU.
  bool has_hardware() const { return hardware_; }
  const GpuDecoderOptions& options() const { return options_; }

  // Decodes `items` as described at the top, enqueuing on `stream`; sets (*results)[i] for
  // items[i]. Throws std::invalid_argument for misuse, before enqueuing anything: more than
  // max_batch_size items, an item planned kCpu or with an empty window, a null destination
  // or a pitch under width() * channels.
  void decode(std::span<const GpuDecodeItem> items, cudaStream_t stream, std::vector<GpuDecodeResult>* results);

 private:
  struct Handles;
  GpuJpegDecoder(const NvjpegLibrary& nvjpeg, const GpuDecoderOptions& options);

  const NvjpegFunctions& fn_;
  GpuDecoderOptions options_;
  std::unique_ptr<Handles> h_;
  bool hardware_ = false;
  std::string description_;
};

}  // namespace stoker::data::gpu
