// nvJPEG loaded at run time: see nvjpeg_library.h.
#include "data/decode/gpu/nvjpeg_library.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <system_error>
#include <utility>

namespace stoker::data::gpu {
namespace {

// Each function once: its name and where its pointer goes.
template <typename Visit>
void each_function(NvjpegFunctions& f, Visit&& visit) {
  visit("nvjpegGetProperty", f.get_property);
  visit("nvjpegCreateEx", f.create_ex);
  visit("nvjpegDestroy", f.destroy);
  visit("nvjpegSetDeviceMemoryPadding", f.set_device_memory_padding);
  visit("nvjpegJpegStateCreate", f.jpeg_state_create);
  visit("nvjpegJpegStateDestroy", f.jpeg_state_destroy);
  visit("nvjpegGetImageInfo", f.get_image_info);
  visit("nvjpegDecodeBatchedInitialize", f.decode_batched_initialize);
  visit("nvjpegDecodeBatched", f.decode_batched);
  visit("nvjpegDecodeBatchedEx", f.decode_batched_ex);
  visit("nvjpegDecodeBatchedPreAllocate", f.decode_batched_pre_allocate);
  visit("nvjpegDecodeBatchedSupportedEx", f.decode_batched_supported_ex);
  visit("nvjpegJpegStreamCreate", f.jpeg_stream_create);
  visit("nvjpegJpegStreamDestroy", f.jpeg_stream_destroy);
  visit("nvjpegJpegStreamParse", f.jpeg_stream_parse);
  visit("nvjpegJpegStreamGetFrameDimensions", f.jpeg_stream_get_frame_dimensions);
  visit("nvjpegDecodeParamsCreate", f.decode_params_create);
  visit("nvjpegDecodeParamsDestroy", f.decode_params_destroy);
  visit("nvjpegDecodeParamsSetOutputFormat", f.decode_params_set_output_format);
  visit("nvjpegDecodeParamsSetROI", f.decode_params_set_roi);
  visit("nvjpegDecodeParamsSetScaleFactor", f.decode_params_set_scale_factor);
  visit("nvjpegDecoderCreate", f.decoder_create);
  visit("nvjpegDecoderDestroy", f.decoder_destroy);
  visit("nvjpegDecoderStateCreate", f.decoder_state_create);
  visit("nvjpegBufferDeviceCreate", f.buffer_device_create);
  visit("nvjpegBufferDeviceDestroy", f.buffer_device_destroy);
  visit("nvjpegStateAttachDeviceBuffer", f.state_attach_device_buffer);
  visit("nvjpegDecodeJpeg", f.decode_jpeg);
  visit("nvjpegGetHardwareDecoderInfo", f.get_hardware_decoder_info);
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// libnvjpeg*.so* files of `dir`, newest soname first (reverse name order puts .so.13 before
// .so.12 and a versioned file before the bare .so).
std::vector<std::string> library_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("libnvjpeg") && name.find(".so") != std::string::npos) files.push_back(entry.path().string());
  }
  std::sort(files.rbegin(), files.rend());
  return files;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

constexpr const char* kInstall =
    "install pip's nvidia-nvjpeg-cu12 (or torchvision, which bundles it) or the CUDA toolkit's libnvjpeg, or set "
    "STOKER_NVJPEG to its path";

}  // namespace

std::string describe(nvjpegStatus_t status) {
  static constexpr const char* kText[] = {"success",
                                          "not initialized",
                                          "invalid parameter",
                                          "bad JPEG",
                                          "JPEG not supported",
                                          "allocator failure",
                                          "execution failed",
                                          "architecture mismatch",
                                          "internal error",
                                          "implementation not supported",
                                          "incomplete bitstream"};
  const int code = static_cast<int>(status);
  const char* text = code >= 0 && code < static_cast<int>(std::size(kText)) ? kText[code] : "unknown status";
  return fmt::format("{} (status {})", text, code);
}

NvjpegSearch NvjpegSearch::standard(const std::vector<std::string>& extra_dirs) {
  NvjpegSearch search;
  search.override_path = env(NvjpegLibrary::kOverrideVariable);
  search.names = {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so.11"};
  std::vector<std::string> dirs;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const std::string root = env(variable);
    if (!root.empty()) dirs.push_back(root + "/lib64");
  }
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (std::string& dir : dirs) {  // each once ($CUDA_HOME is often /usr/local/cuda)
    dir = std::filesystem::path(dir).lexically_normal().string();
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (std::find(search.dirs.begin(), search.dirs.end(), dir) == search.dirs.end()) search.dirs.push_back(dir);
  }
  return search;
}

std::vector<std::string> NvjpegLibrary::candidates(const NvjpegSearch& search) {
  if (!search.override_path.empty()) return {search.override_path};
  std::vector<std::string> all = search.names;
  for (const std::string& dir : search.dirs) {
    const std::vector<std::string> files = library_files(dir);
    all.insert(all.end(), files.begin(), files.end());
  }
  return all;
}

const std::vector<const char*>& NvjpegLibrary::symbol_names() {
  static const std::vector<const char*> names = [] {
    std::vector<const char*> list;
    NvjpegFunctions f;
    each_function(f, [&list](const char* name, auto&) { list.push_back(name); });
    return list;
  }();
  return names;
}

NvjpegLibrary::NvjpegLibrary(std::unique_ptr<DynamicLibrary> library) : library_(std::move(library)) {
  each_function(fn_, [this](const char* name, auto& slot) {
    slot = library_->get<std::remove_pointer_t<std::remove_reference_t<decltype(slot)>>>(name);
  });
}

const char* NvjpegLibrary::first_missing() const {
  const char* missing = nullptr;
  NvjpegFunctions copy = fn_;
  each_function(copy, [&missing](const char* name, auto* slot) {
    if (slot == nullptr && missing == nullptr) missing = name;
  });
  return missing;
}

std::unique_ptr<NvjpegLibrary> NvjpegLibrary::load(const NvjpegSearch& search, std::string* why_not) {
  std::string incomplete;  // the first library that opened without every function
  std::string first_error;
  for (const std::string& candidate : candidates(search)) {
    std::string error;
    std::unique_ptr<DynamicLibrary> lib = DynamicLibrary::open(candidate, &error);
    if (!lib) {
      if (first_error.empty()) first_error = error;
      continue;
    }
    std::unique_ptr<NvjpegLibrary> nvjpeg(new NvjpegLibrary(std::move(lib)));
    const char* missing = nvjpeg->first_missing();
    if (missing == nullptr) return nvjpeg;
    if (incomplete.empty()) incomplete = fmt::format("{} has no {}", candidate, missing);
  }
  if (!incomplete.empty()) {
    *why_not = fmt::format("nvJPEG unusable: {}; install a newer one ({})", incomplete, kInstall);
  } else if (!search.override_path.empty()) {
    *why_not = fmt::format("nvJPEG not loaded from {}={} ({}); point it at a libnvjpeg.so, or unset it to search",
                           kOverrideVariable, search.override_path, first_error);
  } else {
    // Every place looked at, in order: each name, and each folder's files or the folder itself.
    std::vector<std::string> places = search.names;
    for (const std::string& dir : search.dirs) {
      const std::vector<std::string> files = library_files(dir);
      if (files.empty()) places.push_back(dir);
      places.insert(places.end(), files.begin(), files.end());
    }
    *why_not = fmt::format("nvJPEG not found (tried: {}); {}", joined(places), kInstall);
  }
  return nullptr;
}

std::string NvjpegLibrary::version() const {
  int major = 0;
  int minor = 0;
  int patch = 0;
  if (fn_.get_property(MAJOR_VERSION, &major) != NVJPEG_STATUS_SUCCESS ||
      fn_.get_property(MINOR_VERSION, &minor) != NVJPEG_STATUS_SUCCESS ||
      fn_.get_property(PATCH_LEVEL, &patch) != NVJPEG_STATUS_SUCCESS) {
    return "unknown version";
  }
  return fmt::format("{}.{}.{}", major, minor, patch);
}

}  // namespace stoker::data::gpu
