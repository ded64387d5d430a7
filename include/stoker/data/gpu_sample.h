// stoker/data/gpu_sample.h — the samples a loader's workers leave for the GPU to decode
// (LoaderOptions::gpu_handoff), and what the consumer needs to finish each.
//
// With the handoff on, a worker still reads every file, draws its random parameters and plans
// its decode (src/data/decode/gpu/decode_plan.h: the header and the end-of-image check); a
// JPEG that nvJPEG can decode, in a chain the GPU can finish (gpu_finishing_blocker() in
// stoker/data/transform.h), is not decoded: its bytes and its plan go into the batch
// (Batch::gpu_sample), and its slot's pixels are left for the consumer to write. Every other
// sample is decoded and transformed on the CPU as always, in the same batch.
//
// The consumer decodes the GPU samples (nvJPEG), resamples each window's `crop` to the output
// size with the same filter as the CPU path, flips it as drawn, and writes it into its slot
// on the device. A file nvJPEG refuses or fails on goes back to the CPU path one at a time
// (Loader::redo_on_cpu), which decodes, substitutes and reports it as a worker would.
//
// The resample takes the filter tables of several samples at once, padded to one shape
// (PaddedTaps; gpu_taps gathers a batch's).
//
// Ownership: a GpuSample belongs to its batch buffer and is valid while the Batch is.
// PaddedTaps and GpuTaps are values. Thread safety: pad_taps and gpu_taps are pure (gpu_taps
// reads the batch, as any const Batch call does).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stoker/data/decode.h"
#include "stoker/data/transform.h"

namespace stoker::data {

class Batch;

// Which of a batch's JPEGs the workers leave for the GPU.
enum class GpuHandoff {
  kOff,       // none: every sample is decoded on the CPU
  kHardware,  // those nvJPEG's hardware engine takes (decode='auto': the rest keeps the CPU busy)
  kAll,       // those the engine takes and those only nvJPEG's CUDA path takes (decode='gpu')
  // A GPU without the engine (decode='gpu'): every JPEG nvJPEG takes, for its CUDA path,
  // whole and at full scale (only the engine decodes a region at a reduced scale).
  kCudaPath,
};

struct GpuSample {
  std::vector<uint8_t> bytes;  // the file as read
  // true: for nvJPEG's hardware engine, with this window and scale; false: for its CUDA path,
  // which decodes the whole image at full scale (the window is the whole image, scale 8).
  bool hardware = true;
  int scale_num = 8;  // the window's scale: 8 (full), 4, 2 or 1 (1/8)
  // The region to decode, in scaled pixels: [x, x + width) x [y, y + height) of the image
  // scaled by scale_num / 8 (sides rounded up, as libjpeg's scaled IDCT makes them).
  int window_x = 0, window_y = 0, window_width = 0, window_height = 0;
  int scaled_width = 0, scaled_height = 0;  // the whole scaled image
  // The box the CPU path resamples to the output, in the window's pixels (fractional).
  CropRect crop;
  // The resample of `crop` to the output size, flips included (a flipped axis lists its
  // outputs in reverse), as the CPU path's filter tables (filter_taps in transform.h): columns
  // of the window to output columns, rows to rows. What the consumer resamples with: no table
  // is built twice, nor on its thread.
  FilterTaps columns;
  FilterTaps rows;
  // The sample's random stream within its epoch: what Loader::redo_on_cpu draws with again.
  uint64_t rng_stream = 0;
};

// One axis's FilterTaps of n samples with out_size outputs each, padded to the most taps:
// index and weight are n x out_size x taps, row-major; past a sample's own taps index 0,
// weight 0 (each output still sums its own taps in order, then adds zeros).
struct PaddedTaps {
  int n = 0, out_size = 0, taps = 1;
  std::vector<int32_t> index;
  std::vector<float> weight;
};
// `axes` all of one output size (UsageError naming the two sizes otherwise); taps is at least
// 1, out_size 0 when `axes` is empty.
PaddedTaps pad_taps(std::span<const FilterTaps* const> axes);

// The tables of the batch's GPU samples at `slots`, in that order: columns (n x W x Tc) and
// rows (n x H x Tr). UsageError in one line for a slot without a GPU sample (or out of range).
struct GpuTaps {
  PaddedTaps columns, rows;
};
GpuTaps gpu_taps(const Batch& batch, std::span<const int> slots);

}  // namespace stoker::data
