// stoker/data/gpu_decode.h — what the decode option (LoaderKey::kDecode: cpu, gpu, auto)
// means on this machine.
//
// GPU JPEG decoding (nvJPEG's hardware engine and CUDA path, planned per file in
// src/data/decode/gpu/) is in the device feeds of stoker.DataLoader(device='cuda')
// (stoker/device_feed.py) and of stoker train (src/train/torch/step/gpu_decode_stage.h). `gpu`
// is refused with one line saying why (no CUDA device for the batches, no nvJPEG), never
// quietly decoded on the CPU;
// `auto` decodes on the CPU where `gpu` would be refused and says why in at most one line.
// What the chain and the data allow is the loader's to say (gpu_handoff_blocker in
// stoker/data/loader.h). docs/design/decode.md, "GPU decoding", has the design.
//
// Thread safety: choose_decode() with a probe is pure; probe_nvjpeg() opens and closes the
// library (dlopen is thread-safe). Errors are returned as text, never thrown.
#pragma once

#include <string>
#include <vector>

#include "stoker/data/gpu_sample.h"
#include "stoker/data/loader_keys.h"

namespace stoker::data {

// Where the batches go.
struct DecodeDevice {
  bool cuda = false;            // the loader's device is a CUDA device
  bool cuda_available = false;  // this process sees a CUDA device
};

// Whether nvJPEG can be loaded: `found` with `text` "nvJPEG 12.3.3 at <path>", or not with
// `text` the loader's one line (what was tried, what to install).
struct NvjpegProbe {
  bool found = false;
  std::string text;
};

// Looks for nvJPEG in the standard places and `extra_dirs` (src/data/decode/gpu/
// nvjpeg_library.h says where and in what order).
NvjpegProbe probe_nvjpeg(const std::vector<std::string>& extra_dirs = {});

struct DecodeChoice {
  DecodeMode use = DecodeMode::kCpu;  // kCpu or kGpu, never kAuto
  // `gpu` asked for and not possible: one line naming the option as `front` spells it, why,
  // and what to do. The caller refuses the option with it.
  std::string error;
  // `auto` decoding on the CPU although the batches go to a CUDA device: one line saying why;
  // "" otherwise.
  std::string note;
};

// What `asked` means with this device and probe. `probe` is only read when the device is CUDA.
DecodeChoice choose_decode(DecodeMode asked, const DecodeDevice& device, const NvjpegProbe& probe, FrontEnd front);

// As above, probing nvJPEG (probe_nvjpeg(nvjpeg_dirs)) only when the answer depends on it.
DecodeChoice choose_decode(DecodeMode asked, const DecodeDevice& device, FrontEnd front,
                           const std::vector<std::string>& nvjpeg_dirs = {});

// Which JPEGs the workers leave for the GPU once nvJPEG is open (`has_hardware`: it has the
// JPEG engine), for `asked` kGpu or kAuto: gpu, every JPEG nvJPEG takes (kAll), or whole images
// at full scale on a GPU without an engine (kCudaPath); auto, those the engine takes
// (kHardware), or none on a GPU without one (kOff: nvJPEG's CUDA path would take CPU time the
// workers have better use for; the front end says so in one line).
GpuHandoff gpu_handoff_for(DecodeMode asked, bool has_hardware);

}  // namespace stoker::data
