#include "train/torch/step/cuda_driver.h"

#include <fmt/format.h>

#include "stoker/core/error.h"

namespace stoker::train {
namespace {

constexpr unsigned kStreamNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING

}  // namespace

std::unique_ptr<DriverStream> DriverStream::open(const std::string& library, std::string* why_not) {
  std::string error;
  std::unique_ptr<DynamicLibrary> driver = DynamicLibrary::open(library, &error);
  if (!driver) {
    *why_not = fmt::format("the CUDA driver could not be opened ({}); install the NVIDIA driver", error);
    return nullptr;
  }
  Functions fn;
  // The _v2 names are what cuda.h's macros call: the unversioned ones are kept for old binaries.
  const std::pair<const char*, void**> wanted[] = {
      {"cuStreamCreate", reinterpret_cast<void**>(&fn.stream_create)},
      {"cuStreamSynchronize", reinterpret_cast<void**>(&fn.stream_synchronize)},
      {"cuStreamDestroy_v2", reinterpret_cast<void**>(&fn.stream_destroy)},
      {"cuCtxGetCurrent", reinterpret_cast<void**>(&fn.ctx_get_current)},
      {"cuGetErrorString", reinterpret_cast<void**>(&fn.get_error_string)},
  };
  for (const auto& [name, slot] : wanted) {
    *slot = driver->symbol(name);
    if (*slot == nullptr) {
      *why_not = fmt::format("the CUDA driver {} has no {}; install a newer NVIDIA driver", library, name);
      return nullptr;
    }
  }
  void* context = nullptr;
  if (fn.ctx_get_current(&context) != 0 || context == nullptr) {
    *why_not = "no CUDA context is current on this thread (the device was not used through libtorch first)";
    return nullptr;
  }
  void* stream = nullptr;
  if (const Result r = fn.stream_create(&stream, kStreamNonBlocking); r != 0) {
    *why_not = "the CUDA driver could not make a stream: " + describe(fn, r);
    return nullptr;
  }
  return std::unique_ptr<DriverStream>(new DriverStream(std::move(driver), fn, stream));
}

DriverStream::DriverStream(std::unique_ptr<DynamicLibrary> library, Functions fn, void* stream)
    : library_(std::move(library)), fn_(fn), stream_(stream) {}

DriverStream::~DriverStream() {
  if (stream_ != nullptr) fn_.stream_destroy(stream_);
}

std::string DriverStream::describe(const Functions& fn, Result error) {
  const char* text = nullptr;
  fn.get_error_string(error, &text);
  return fmt::format("{} (error {})", text ? text : "unknown", error);
}

void DriverStream::synchronize() {
  if (const Result r = fn_.stream_synchronize(stream_); r != 0) {
    throw SystemError("the GPU decode stream failed: " + describe(fn_, r));
  }
}

}  // namespace stoker::train
