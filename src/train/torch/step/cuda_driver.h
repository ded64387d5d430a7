// The CUDA driver's streams, opened at run time (libcuda.so.1 through dlopen), for the one
// stream libtorch's C++ API cannot hand out: a cudaStream_t that nvJPEG decodes on
// (gpu_decode_stage.h). libtorch 1.13 and 2.x give no raw handle for a c10::Stream without
// their CUDA headers, which a CPU build lacks; the driver API needs no header and no link, and
// libcuda.so.1 is wherever a GPU is. A CUstream is a cudaStream_t (NVIDIA documents the two as
// interchangeable).
//
// Contexts: the driver works on the calling thread's current context. Open a DriverStream on the
// thread that uses it, after libtorch has run work on the device (its runtime makes the
// device's primary context current on that thread).
//
// Thread safety: a DriverStream is used from one thread. Errors: open() returns null with one
// line; synchronize() throws stoker::SystemError naming the driver's error.
#pragma once

#include <memory>
#include <string>

#include "stoker/core/dynamic_library.h"

namespace stoker::train {

class DriverStream {
 public:
  // A non-blocking stream (it does not wait for the legacy default stream, which libtorch's
  // default stream is) on the calling thread's current context, from `library` (the driver:
  // "libcuda.so.1"). Null with *why_not set to one line when the driver or a context is missing.
  static std::unique_ptr<DriverStream> open(const std::string& library, std::string* why_not);
  ~DriverStream();
  DriverStream(const DriverStream&) = delete;
  DriverStream& operator=(const DriverStream&) = delete;

  void* handle() const { return stream_; }  // the cudaStream_t
  // Blocks the calling thread until everything enqueued on the stream is done.
  void synchronize();

 private:
  using Result = int;
  struct Functions {
    Result (*stream_create)(void** stream, unsigned flags) = nullptr;
    Result (*stream_synchronize)(void* stream) = nullptr;
    Result (*stream_destroy)(void* stream) = nullptr;
    Result (*ctx_get_current)(void** context) = nullptr;
    Result (*get_error_string)(Result error, const char** text) = nullptr;
  };
  DriverStream(std::unique_ptr<DynamicLibrary> library, Functions fn, void* stream);
  // "invalid argument (error 1)".
  static std::string describe(const Functions& fn, Result error);

  std::unique_ptr<DynamicLibrary> library_;
  Functions fn_;
  void* stream_ = nullptr;
};

}  // namespace stoker::train
