// The decode option on this machine: see stoker/data/gpu_decode.h.
#include <fmt/format.h>

#include "data/decode/gpu/nvjpeg_library.h"
#include "stoker/data/gpu_decode.h"

namespace stoker::data {
namespace {

// "decode='gpu'" (Python) or "--decode gpu" (command line).
std::string spelled(DecodeMode mode, FrontEnd front) {
  const auto words = loader_key(LoaderKey::kDecode).words;
  return option_words(OptionChange{LoaderKey::kDecode, std::string(words[static_cast<size_t>(mode)].cli)}, front);
}

std::string device_spelled(FrontEnd front) { return front == FrontEnd::kPython ? "device='cuda'" : "--device cuda"; }

}  // namespace

NvjpegProbe probe_nvjpeg(const std::vector<std::string>& extra_dirs) {
  NvjpegProbe probe;
  std::string why_not;
  const auto nvjpeg = gpu::NvjpegLibrary::load(gpu::NvjpegSearch::standard(extra_dirs), &why_not);
  probe.found = nvjpeg != nullptr;
  probe.text = nvjpeg ? fmt::format("nvJPEG {} at {}", nvjpeg->version(), nvjpeg->name()) : why_not;
  return probe;
}

DecodeChoice choose_decode(DecodeMode asked, const DecodeDevice& device, const NvjpegProbe& probe, FrontEnd front) {
  DecodeChoice choice;
  if (asked == DecodeMode::kCpu) return choice;
  const std::string cpu = spelled(DecodeMode::kCpu, front);
  const bool gpu = asked == DecodeMode::kGpu;
  std::string why;  // why not on the GPU
  if (!device.cuda) {
    // auto with batches on the CPU: nothing to say, the CPU is where they decode.
    if (gpu) why = fmt::format("GPU decoding needs the batches on a CUDA device ({})", device_spelled(front));
  } else if (!device.cuda_available) {
    why = "this process sees no CUDA device";
  } else if (!probe.found) {
    why = probe.text;
  } else {
    choice.use = DecodeMode::kGpu;
    return choice;
  }
  if (gpu) {
    choice.error = fmt::format("{}: {}; use {}", spelled(asked, front), why, cpu);
  } else if (!why.empty()) {
    choice.note = fmt::format("{}: decoding on the CPU: {}", spelled(asked, front), why);
  }
  return choice;
}

DecodeChoice choose_decode(DecodeMode asked, const DecodeDevice& device, FrontEnd front,
                           const std::vector<std::string>& nvjpeg_dirs) {
  const bool needs_probe = asked != DecodeMode::kCpu && device.cuda && device.cuda_available;
  return choose_decode(asked, device, needs_probe ? probe_nvjpeg(nvjpeg_dirs) : NvjpegProbe{}, front);
}

GpuHandoff gpu_handoff_for(DecodeMode asked, bool has_hardware) {
  if (asked == DecodeMode::kGpu) return has_hardware ? GpuHandoff::kAll : GpuHandoff::kCudaPath;
  return has_hardware ? GpuHandoff::kHardware : GpuHandoff::kOff;
}

}  // namespace stoker::data
