#include "stoker/core/host_tuning.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

namespace stoker {
namespace {

constexpr int kTrimThreshold = 512 << 20;

bool has_env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

bool user_set_allocator() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) return true;
  return has_env("MALLOC_MMAP_THRESHOLD_") || has_env("MALLOC_TRIM_THRESHOLD_") || has_env("MALLOC_TOP_PAD_");
}

// OpenBLAS's own entry points, when the process has an OpenBLAS (libtorch pulls in whichever
// libblas.so.3 the system points at). Looked up at run time: stoker links no BLAS itself.
struct OpenBlas {
  int (*get_parallel)() = nullptr;  // 0 sequential, 1 pthreads, 2 OpenMP
  int (*get_num_threads)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
  char* (*get_config)() = nullptr;  // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"

  static OpenBlas find() {
    OpenBlas b;
    b.get_parallel = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
    b.get_num_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    b.set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    b.get_config = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
    return b;
  }
  bool found() const { return get_parallel != nullptr && get_num_threads != nullptr && set_num_threads != nullptr; }
};

std::string thread_count(int n) { return fmt::format("{} thread{}", n, n == 1 ? "" : "s"); }

}  // namespace

bool tune_allocator_for_training() {
#if defined(__GLIBC__)
  if (user_set_allocator()) return false;
  // No block gets its own mapping (those go back to the kernel on free; a thread's arena still
  // maps what its 64 MiB heap cannot hold), and the heap top is kept up to 512 MiB. Setting the
  // trim threshold also stops glibc's dynamic thresholds, which follow the largest block freed.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
#else
  return false;
#endif
}

HostTuning tune_host_for_training() {
  HostTuning t;
  t.allocator_tuned = tune_allocator_for_training();
  if (t.allocator_tuned) {
    t.allocator = fmt::format("malloc keeps freed blocks in its heap, trims only above {} MiB", kTrimThreshold >> 20);
  } else if (user_set_allocator()) {
    t.allocator = "malloc as set by the environment";
  }

  const BlasInfo who = describe_blas();
  if (who.reference) t.blas = "reference BLAS";
  if (!who.openblas) return t;  // an OpenBLAS beside another sgemm_ is not what libtorch calls
  const OpenBlas blas = OpenBlas::find();
  const int before = blas.get_num_threads();
  if (has_env("OPENBLAS_NUM_THREADS") || has_env("GOTO_NUM_THREADS")) {
    t.blas_reason = has_env("OPENBLAS_NUM_THREADS") ? "OPENBLAS_NUM_THREADS" : "GOTO_NUM_THREADS";
  } else if (blas.get_parallel() == 1 && before > 1) {
    blas.set_num_threads(1);
    t.blas_reason = fmt::format("was {}; its own pool fights libtorch's OpenMP threads", thread_count(before));
  } else if (blas.get_parallel() == 2) {
    t.blas_reason = "uses OpenMP, shares libtorch's threads";
  }
  t.blas = "OpenBLAS " + thread_count(blas.get_num_threads());
  return t;
}

BlasInfo describe_blas() {
  // Who answers sgemm_ is the BLAS libtorch calls. Another BLAS may be loaded beside it (an
  // OpenBLAS pulled in by liblapack.so.3 while libblas.so.3 is the reference one, say).
  BlasInfo info;
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info where{};
  if (sgemm == nullptr || dladdr(sgemm, &where) == 0 || where.dli_fname == nullptr) return info;
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(where.dli_fname, ec);
  const std::string file = ec ? std::string(where.dli_fname) : canonical.string();
  const OpenBlas openblas = OpenBlas::find();
  if (file.find("openblas") != std::string::npos && openblas.found()) {
    info.openblas = true;
    std::string name = "OpenBLAS";
    if (openblas.get_config != nullptr && openblas.get_config() != nullptr) {
      const std::string config = openblas.get_config();  // "OpenBLAS 0.3.21 DYNAMIC_ARCH …"
      name = config.substr(0, config.find(' ', config.find(' ') + 1));
    }
    const int parallel = openblas.get_parallel();
    const char* threading = parallel == 1 ? "pthreads" : parallel == 2 ? "OpenMP" : "sequential";
    info.text = fmt::format("{}, {}, {}", name, threading, thread_count(openblas.get_num_threads()));
  } else if (file.find("/blas/libblas.so") != std::string::npos) {
    // Debian's netlib BLAS (one choice of the libblas.so.3 alternative).
    info.reference = true;
    info.text = "reference BLAS (" + file + ")";
  } else {
    info.text = std::filesystem::path(file).filename().string();
  }
  return info;
}

}  // namespace stoker
