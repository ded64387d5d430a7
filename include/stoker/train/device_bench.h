// stoker/train/device_bench.h — what libtorch sees and how fast it computes and copies, for
// `stoker check`. No torch headers here: the CLI calls this without paying torch's compile
// time, and a build without libtorch links stubs that report every figure as skipped.
//
// Measured:
//  - matrix multiply throughput: C = A·B on square matrices (2·n³ FLOP each), timed over a
//    budget after one warm-up product; n is chosen from a small trial so one product takes
//    about a tenth of the budget (CPU: 256..2048, CUDA: 8192, smaller if memory is short).
//    On the CPU with the threads `stoker train` uses (every usable CPU unless
//    OMP_NUM_THREADS is set). CUDA: fp32 (TF32 off), tf32, bf16, fp16; CPU: fp32, bf16.
//  - host→device copies (CUDA only): one 256 MiB buffer, pinned and pageable, GB/s = 1e9 B/s.
// Rates are the best of five equal windows of the budget (stoker::diagnose::check::RateMeter),
// so another process's burst on a shared machine lowers them less.
// A dtype or copy the device cannot do (no CUDA, no pinned memory, an op libtorch refuses)
// comes back with `skipped` set to a short reason; nothing here throws for that.
//
// Thread safety: call from one thread at a time (the benchmarks change libtorch's global
// TF32 setting while they run and restore it).
#pragma once

#include <string>
#include <vector>

namespace stoker::train {

// One GPU as libtorch/CUDA sees it (index = CUDA device index).
struct TorchGpu {
  int index = 0;
  int cc_major = 0;  // compute capability; 0 = unknown (then bf16/tf32 are unknown too)
  int cc_minor = 0;
  bool bf16 = false;  // native bf16 matmul (compute capability >= 8.0)
  bool tf32 = false;  // TF32 tensor cores (compute capability >= 8.0)
};

struct TorchDeviceInfo {
  std::string torch;           // "libtorch 1.13.1 (CPU)"; "" when built without libtorch
  std::string cuda_version;    // CUDA runtime libtorch uses, "12.1"; "" = none
  std::string cudnn_version;   // "8.9.2" / "9.1.0"; "" = none
  std::vector<TorchGpu> gpus;  // empty without CUDA
  int cpu_threads = 0;         // libtorch's intra-op threads (the CPU matmul uses these)
  std::string skipped;         // why there are no GPU figures: "libtorch 1.13.1 is a CPU build", ...
};

TorchDeviceInfo torch_device_info();

struct MatmulResult {
  std::string dtype;   // "fp32", "tf32", "bf16", "fp16"
  double tflops = 0;   // 1e12 FLOP/s; meaningful when skipped is empty
  int size = 0;        // n of the n×n matrices
  int products = 0;    // products timed
  double seconds = 0;  // time they took
  std::string skipped;
};

// `device`: "cpu" or "cuda" (device 0). `seconds`: budget per dtype (> 0).
std::vector<MatmulResult> measure_matmul(const std::string& device, double seconds);

struct TransferResult {
  std::string kind;     // "pinned", "pageable"
  double gb_per_s = 0;  // 1e9 B/s; meaningful when skipped is empty
  double seconds = 0;
  std::string skipped;
};

// Host→device copies to CUDA device 0; both skipped without CUDA. `seconds`: budget each.
std::vector<TransferResult> measure_host_to_device(double seconds);

}  // namespace stoker::train
