// stoker/core/host_tuning.h — process-wide settings of the C library's allocator and of the
// BLAS that a CPU training loop needs, applied by `stoker train` and `stoker doctor` before
// their first step (not by `stoker check`, which measures the BLAS's peak rate).
//
// Why (measured on 2 cores, Fashion-MNIST CNN, docs/lab/benchmarks-log.md):
// - glibc malloc hands blocks of a few MiB back to the kernel when they are freed (blocks
//   above its mmap threshold get their own mapping; a large free heap top is trimmed), so every
//   step page-faults its activations in again: 8,400 faults per step of batch 64, and 9,200 per
//   evaluation batch of 256. Taking every block from the heap and trimming only above 512 MiB
//   takes both to ~0 (the process keeps up to 512 MiB it no longer uses).
// - An OpenBLAS built with its own pthread pool (Debian's libopenblas0-pthread) runs beside
//   libtorch's OpenMP pool: while OpenBLAS's threads work, OpenMP's spin, and the two pools
//   fight over the cores. One OpenBLAS thread per caller halves the step time of the CNN and
//   of the MLP. An OpenBLAS built with OpenMP shares libtorch's pool and is left alone.
//
// Both respect the user: GLIBC_TUNABLES with glibc.malloc settings (or MALLOC_*_ variables)
// keep the allocator as it is, OPENBLAS_NUM_THREADS or GOTO_NUM_THREADS keep the BLAS's.
//
// Thread safety: call from one thread before training starts, while no BLAS call runs (the
// OpenBLAS setting is not safe against a concurrent BLAS call). Idempotent.
#pragma once

#include <string>

namespace stoker {

struct HostTuning {
  // The BLAS libtorch calls and its threads after tuning, e.g. "OpenBLAS 1 thread", or
  // "reference BLAS"; empty for others (MKL, a BLAS inside libtorch: nothing to say).
  std::string blas;
  // What was done about the BLAS, one phrase: "was 2 threads; its own pool fights libtorch's
  // OpenMP threads", "OPENBLAS_NUM_THREADS", "uses OpenMP, shares libtorch's threads".
  std::string blas_reason;
  // Whether the allocator settings were applied (false: not glibc, or the user set them).
  bool allocator_tuned = false;
  std::string allocator;  // e.g. "malloc keeps freed blocks in its heap, trims only above 512 MiB"
};

HostTuning tune_host_for_training();

// The BLAS this process calls (sgemm_ found with dlsym, its library with dladdr), for
// `stoker check`. Thread-safe; changes nothing.
struct BlasInfo {
  // "OpenBLAS 0.3.21, pthreads, 2 threads"; "reference BLAS (…/blas/libblas.so.3)"; the
  // library's file name for others; empty when no BLAS is loaded (a build without libtorch).
  std::string text;
  bool openblas = false;   // OpenBLAS answers sgemm_ (its openblas_* calls steer that BLAS)
  bool reference = false;  // netlib's reference BLAS: CPU training runs several times slower
};
BlasInfo describe_blas();

// The allocator part alone (tune_host_for_training calls it); returns whether it applied.
bool tune_allocator_for_training();

}  // namespace stoker
