// What a batch holds for the GPU to decode (LoaderOptions::gpu_handoff), as Python reads it.
// gpu_decode_binding.cpp also binds stoker._stoker.GpuDecoder: nvJPEG
// (data/decode/gpu/gpu_jpeg_decoder.h) for the device feed (stoker/device_feed.py), which
// owns the device memory and the streams.
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/data/loader.h"

namespace stoker::python {

// One tuple per sample left for the GPU, in slot order: (slot, window_width, window_height,
// crop, hflip, vflip, clamp_to_box), `crop` being (x, y, width, height) in the window's pixels
// (float64), the window being what nvJPEG writes (GpuSample). With the GIL held.
pybind11::list gpu_samples_of(const data::Batch& batch);

}  // namespace stoker::python
