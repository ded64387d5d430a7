// The resample of GPU-decoded windows into a batch: crop, antialiased resize and flips of each
// JPEG window nvJPEG decoded (stoker/data/gpu_sample.h) into its batch slot, with the CPU
// resampler's own filter tables (data::FilterTaps, which the loader's workers build per GPU
// sample) and its arithmetic, so that the pixels equal the CPU path's to the bit.
//
// Covers what the GPU finishes: a box of the window resampled to the output size
// (RandomResizedCrop, Resize + CenterCrop, Resize + RandomCrop inside the image, Resize), flips
// included (a flipped axis's table lists its outputs in reverse), a grey window written to 3
// channels as the CPU path replicates it. Padding, 1:1 crops and the transforms after the
// geometry stay on the CPU (data::gpu_finishing_blocker).
//
// Arithmetic, as the CPU path's (src/data/transform/resample.cpp): a horizontal pass over only
// the rows the vertical pass reads, then a vertical pass, each output a float32 sum of weight x
// pixel over its taps in tap order, one multiply then one add a tap (no fused multiply-add, no
// matmul: another order moves values at a rounding edge by 1); bicubic clamps each pass to
// [0, 255]; uint8 is int(v + 0.5) clamped to [0, 255]. Each tap of a pass is one gather of
// whole rows, a multiply and an add over the pass's output: memory-bound. On a CPU the images
// go 4 at a time (each pass's arrays stay in cache); elsewhere the whole batch in one pass.
// python/stoker/_gpu_resample.py is the same algorithm for the Python package.
//
// Runs on out's device, on its current stream; allocates its temporaries there. Thread
// safety: no state; calls on different outputs may run concurrently. Errors: a wrong shape,
// dtype or device throws UsageError in one line naming the value and what is allowed.
#pragma once

#include <torch/torch.h>

#include <span>
#include <vector>

#include "stoker/data/gpu_sample.h"

namespace stoker::train {

// The filter tables of n samples: column_index and column_weight (n, W, T), row_index and
// row_weight (n, H, T'), int32 and float32, each sample's taps padded with weight 0 at index 0
// (data::PaddedTaps).
struct TapTensors {
  torch::Tensor column_index, column_weight, row_index, row_weight;
};

// Host tensors holding `columns` and `rows`; the caller moves them where the resample runs.
TapTensors tap_tensors(const data::PaddedTaps& columns, const data::PaddedTaps& rows);
// The tables of the batch's GPU samples at `slots`, in that order (data::gpu_taps: UsageError
// for a slot without one).
TapTensors tap_tensors(const data::Batch& batch, std::span<const int> slots);

// Writes sample i of `out` (n, C_out, H, W) uint8, any strides, from windows[i], an (h_i, w_i,
// C) uint8 tensor (C 1 or 3, one C for all; any size, HWC as nvJPEG writes it) on out's
// device, resampled with sample i's tables in `taps` (any device; index int32 or int64,
// weight float32; each index within its window). C_out is C, or 3 for grey windows. `bicubic`:
// the tables are the bicubic filter's (each pass clamps).
void resample_with_taps(const std::vector<torch::Tensor>& windows, const TapTensors& taps, bool bicubic,
                        torch::Tensor out);

}  // namespace stoker::train
