// What a batch holds for the GPU to decode (LoaderOptions::gpu_handoff), as Python reads it.
// gpu_decode_binding.cpp also binds stoker._stoker.GpuDecoder: nvJPEG
// (data/decode/gpu/gpu_jpeg_decoder.h) for the device feed (stoker/device_feed.py), which
// owns the device memory and the streams.
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/data/loader.h"

namespace stoker::python {

// One tuple per sample left for the GPU, in slot order: (slot, window_width, window_height),
// the window being what nvJPEG writes (GpuSample). With the GIL held.
pybind11::list gpu_samples_of(const data::Batch& batch);

// The filter taps of the GPU samples at `slots` (GpuSample::columns and rows), as the resample
// takes them: (column index, column weight, row index, row weight), arrays of shape
// (len(slots), W, Tc) and (len(slots), H, Tr), int32 and float32, each sample's taps padded to
// the batch's most with weight 0 at index 0. With the GIL held.
pybind11::tuple gpu_taps_of(const data::Batch& batch, const std::vector<int>& slots);

}  // namespace stoker::python
