// data/decode/gpu/nvjpeg_library.h — nvJPEG opened with dlopen and its functions resolved by
// name, so that stoker builds and runs without it (the CPU decoder needs nothing of it).
//
// Where it looks, in this order (NvjpegSearch::standard):
//   1. $STOKER_NVJPEG, a file path or a library name: when set, only it.
//   2. The sonames through the dynamic linker (LD_LIBRARY_PATH, ld.so.cache):
//      libnvjpeg.so.13, libnvjpeg.so.12, libnvjpeg.so.11.
//   3. The CUDA toolkit: $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64.
//   4. Folders the caller adds: Python adds pip's site-packages/nvidia/nvjpeg/lib (the
//      nvidia-nvjpeg-cu12 wheel CUDA builds of torch bring) and torchvision.libs (torchvision
//      bundles a libnvjpeg.<hash>.so.12).
// In a folder, every file whose name starts "libnvjpeg" and contains ".so" is a candidate,
// newest soname first. The first candidate that opens and has every function wins.
//
// Every function listed in NvjpegFunctions is required: a library missing one is skipped, and
// when none is complete load() names the first that lacked one and which function.
//
// Thread safety: immutable after load(); nvJPEG's own functions are thread-safe per handle as
// its documentation says (one nvjpegJpegState_t per thread). Ownership: an NvjpegLibrary owns
// its dlopen reference; the function pointers dangle once it is destroyed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/decode/gpu/nvjpeg_api.h"
#include "stoker/core/dynamic_library.h"

namespace stoker::data::gpu {

struct NvjpegFunctions {
  nvjpeg_fn::GetProperty* get_property = nullptr;
  nvjpeg_fn::CreateEx* create_ex = nullptr;
  nvjpeg_fn::Destroy* destroy = nullptr;
  nvjpeg_fn::SetDeviceMemoryPadding* set_device_memory_padding = nullptr;
  nvjpeg_fn::JpegStateCreate* jpeg_state_create = nullptr;
  nvjpeg_fn::JpegStateDestroy* jpeg_state_destroy = nullptr;
  nvjpeg_fn::GetImageInfo* get_image_info = nullptr;
  nvjpeg_fn::DecodeBatchedInitialize* decode_batched_initialize = nullptr;
  nvjpeg_fn::DecodeBatched* decode_batched = nullptr;
  nvjpeg_fn::DecodeBatchedEx* decode_batched_ex = nullptr;
  nvjpeg_fn::DecodeBatchedPreAllocate* decode_batched_pre_allocate = nullptr;
  nvjpeg_fn::DecodeBatchedSupportedEx* decode_batched_supported_ex = nullptr;
  nvjpeg_fn::JpegStreamCreate* jpeg_stream_create = nullptr;
  nvjpeg_fn::JpegStreamDestroy* jpeg_stream_destroy = nullptr;
  nvjpeg_fn::JpegStreamParse* jpeg_stream_parse = nullptr;
  nvjpeg_fn::JpegStreamGetFrameDimensions* jpeg_stream_get_frame_dimensions = nullptr;
  nvjpeg_fn::DecodeParamsCreate* decode_params_create = nullptr;
  nvjpeg_fn::DecodeParamsDestroy* decode_params_destroy = nullptr;
  nvjpeg_fn::DecodeParamsSetOutputFormat* decode_params_set_output_format = nullptr;
  nvjpeg_fn::DecodeParamsSetROI* decode_params_set_roi = nullptr;
  nvjpeg_fn::DecodeParamsSetScaleFactor* decode_params_set_scale_factor = nullptr;
  nvjpeg_fn::DecoderCreate* decoder_create = nullptr;
  nvjpeg_fn::DecoderDestroy* decoder_destroy = nullptr;
  nvjpeg_fn::DecoderStateCreate* decoder_state_create = nullptr;
  nvjpeg_fn::BufferDeviceCreate* buffer_device_create = nullptr;
  nvjpeg_fn::BufferDeviceDestroy* buffer_device_destroy = nullptr;
  nvjpeg_fn::StateAttachDeviceBuffer* state_attach_device_buffer = nullptr;
  nvjpeg_fn::DecodeJpeg* decode_jpeg = nullptr;
  nvjpeg_fn::GetHardwareDecoderInfo* get_hardware_decoder_info = nullptr;
};

// Where to look, in order.
struct NvjpegSearch {
  std::string override_path;       // $STOKER_NVJPEG: when set, the only candidate
  std::vector<std::string> names;  // opened through the dynamic linker
  std::vector<std::string> dirs;   // folders whose libnvjpeg*.so* files are tried

  // Steps 1-3 above from the environment, then `extra_dirs` (step 4).
  static NvjpegSearch standard(const std::vector<std::string>& extra_dirs = {});
};

// A status as a short text for messages: "JPEG not supported (status 4)".
std::string describe(nvjpegStatus_t status);

class NvjpegLibrary {
 public:
  // The environment variable that names the library to use instead of searching.
  static constexpr const char* kOverrideVariable = "STOKER_NVJPEG";

  // Opens the first complete library `search` finds. On failure returns nullptr and sets
  // *why_not to one line: what was tried and what to install, e.g. "nvJPEG not found (tried:
  // libnvjpeg.so.13, libnvjpeg.so.12, libnvjpeg.so.11, /usr/local/cuda/lib64); install pip's
  // nvidia-nvjpeg-cu12 or the CUDA toolkit's libnvjpeg, or set STOKER_NVJPEG to its path", or
  // "nvJPEG unusable: /x/libnvjpeg.so.11 has no nvjpegDecodeBatchedEx; install a newer one ...".
  static std::unique_ptr<NvjpegLibrary> load(const NvjpegSearch& search, std::string* why_not);

  // The candidates `search` tries, in order (folders listed, names and the override as given).
  static std::vector<std::string> candidates(const NvjpegSearch& search);

  // The names of the functions load() resolves, in NvjpegFunctions' order.
  static const std::vector<const char*>& symbol_names();

  const NvjpegFunctions& fn() const { return fn_; }
  // The file or name that opened.
  const std::string& name() const { return library_->name(); }
  // "12.3.3" from nvjpegGetProperty, or "unknown version".
  std::string version() const;

 private:
  explicit NvjpegLibrary(std::unique_ptr<DynamicLibrary> library);
  // The first function the library lacks, or nullptr when it has them all.
  const char* first_missing() const;
  std::unique_ptr<DynamicLibrary> library_;
  NvjpegFunctions fn_;
};

}  // namespace stoker::data::gpu
