// stoker/data/gpu_decoder.h — nvJPEG for a device feed: decodes the samples a loader's workers
// left for the GPU (gpu_sample.h) into device memory the caller owns, on a stream the caller
// owns. stoker links no CUDA runtime: the caller (torch, in the Python package and in stoker
// train's device feed) allocates, copies, synchronises and resamples; this decodes.
//
// What happens to each sample (the design in docs/design/decode.md, "GPU decoding"): a full
// stream parse; the hardware engine with the sample's region and DCT scale where the GPU has
// one and takes the file; nvJPEG's CUDA path where the plan is at full scale; else the sample
// comes back for the CPU (Loader::redo_on_cpu) with a one-line reason. A bad file never fails
// the batch.
//
// Streams: only `stream` is used. The caller makes it wait for whatever still uses the
// destinations and reads them only once the stream is past the decode.
//
// Thread safety: not thread-safe; one GpuDecoder per thread that decodes (nvJPEG's states are
// per thread), made and used with the same CUDA device current. Errors: open() returns null
// with one line; decode() throws UsageError for misuse (a slot without a GPU sample, mismatched
// lengths) and never for a bad file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {

class Batch;

struct GpuDecoderOptions {
  int channels = 3;          // 3: RGB interleaved (HWC); 1: gray
  int max_batch_size = 256;  // most samples one decode() takes
  // The largest decoded window expected (scaled pixels), so that the engine's device memory is
  // sized once (nvjpegDecodeBatchedPreAllocate) instead of growing over the first epoch; 0: no
  // hint. nvJPEG grows its buffers for larger windows.
  int preallocate_width = 0;
  int preallocate_height = 0;
};

// The options for a feed whose loader runs `chain` in batches of `batch_size`: the chain's
// channels, the batch as the most samples, and buffers first made for windows up to
// max(1024, twice the output's longer side) square (the DCT scale keeps a crop's window within
// about twice the output's side; whole images on the CUDA path may be larger). Both device
// feeds (stoker.DataLoader's and stoker train's) open their decoder with these.
GpuDecoderOptions gpu_decoder_options(const TransformSpec& chain, int batch_size);

// What became of one sample.
struct GpuDecodeOutcome {
  bool on_gpu = false;  // decoded into its destination; false: make it on the CPU
  std::string reason;   // why it is not where its plan sent it, one line; "" when it is
};

class GpuDecoder {
 public:
  // nvJPEG found as nvjpeg_library.h says (the standard places, then `nvjpeg_dirs`) and its
  // handles on the device current now. Null with *why_not set to one line when nvJPEG is
  // missing or cannot decode here.
  static std::unique_ptr<GpuDecoder> open(const std::vector<std::string>& nvjpeg_dirs, const GpuDecoderOptions& options,
                                          std::string* why_not);
  ~GpuDecoder();
  GpuDecoder(const GpuDecoder&) = delete;
  GpuDecoder& operator=(const GpuDecoder&) = delete;

  // "nvJPEG 13.0.1: hardware engine (7 engines) + CUDA path", or "... CUDA path only: ...".
  const std::string& description() const;
  // Whether the hardware engine is in use. Without it, hand the decoder only whole images at
  // full scale (GpuHandoff::kCudaPath).
  bool has_hardware() const;

  // Decodes the GPU samples of `batch` at `slots` into `destinations` (device memory: the
  // sample's window_height rows of window_width x channels bytes, rows `pitches` apart),
  // enqueued on `stream` (a cudaStream_t); (*outcomes)[k] for slots[k].
  void decode(const Batch& batch, std::span<const int> slots, std::span<uint8_t* const> destinations,
              std::span<const size_t> pitches, void* stream, std::vector<GpuDecodeOutcome>* outcomes);

 private:
  struct Impl;
  explicit GpuDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker::data
