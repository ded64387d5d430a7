// `stoker check`'s torch side: what libtorch sees (CUDA/cuDNN versions, compute capability)
// and how fast it multiplies matrices and copies to the GPU. Only APIs that the CPU builds of
// libtorch declare are used (torch::cuda::*, at::globalContext(), the CUDA hooks), so this file
// compiles everywhere; CUDA-only calls sit behind torch::cuda::is_available() and are caught.
// The compute capability, which those headers cannot give, comes from the CUDA driver API
// (libcuda.so.1 through dlopen), asked only when libtorch sees a CUDA device.
#include "stoker/train/device_bench.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "stoker/core/dynamic_library.h"
#include "stoker/core/process.h"
#include "stoker/diagnose/check.h"
#include "stoker/train/trainer.h"
#include "train/torch/run/setup.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

namespace {

// The first line of an exception's message (c10::Error appends a backtrace), kept short.
std::string short_reason(const std::exception& e) {
  std::string text = e.what();
  text = text.substr(0, text.find('\n'));
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return text.empty() ? "libtorch failed without a message" : text;
}

// Throws (c10::Error) in a CPU build, which has no CUDA runtime: "" then.
std::string cuda_runtime_version() {
  try {
    const long v = at::detail::getCUDAHooks().versionCUDART();  // 12010 = 12.1
    return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
  } catch (const std::exception&) {
    return "";
  }
}

std::string cudnn_version() {
  try {
    if (!at::detail::getCUDAHooks().hasCuDNN()) return "";
    const long v = at::detail::getCUDAHooks().versionCuDNN();
    // cuDNN 9 encodes major*10000 + minor*100 + patch; 8 and older major*1000 + minor*100 + patch.
    if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
    return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
  } catch (const std::exception&) {
    return "";
  }
}

// Compute capability from the CUDA driver API (libcuda.so.1 is there wherever CUDA runs; the
// CPU builds of libtorch declare no device-properties call). Device ordinals are the CUDA
// runtime's, so they match libtorch's (both honour CUDA_VISIBLE_DEVICES).
bool driver_compute_capability(int index, int* major, int* minor) {
  std::string error;
  std::unique_ptr<DynamicLibrary> cuda = DynamicLibrary::open("libcuda.so.1", &error);
  if (!cuda) return false;
  auto* init = cuda->get<int(unsigned)>("cuInit");
  auto* device_get = cuda->get<int(int*, int)>("cuDeviceGet");
  auto* attribute = cuda->get<int(int*, int, int)>("cuDeviceGetAttribute");
  if (init == nullptr || device_get == nullptr || attribute == nullptr) return false;
  constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR/MINOR
  int device = 0;
  return init(0) == 0 && device_get(&device, index) == 0 && attribute(major, kMajor, device) == 0 &&
         attribute(minor, kMinor, device) == 0;
}

std::string no_cuda_reason() {
  if (cuda_runtime_version().empty()) return "libtorch " + compat::torch_version() + " is a CPU build";
  return "libtorch sees no CUDA device (driver not loaded, or CUDA_VISIBLE_DEVICES hides them)";
}

// Restores libtorch's TF32-for-matmul switch when the benchmark is done.
class Tf32Switch {
 public:
  Tf32Switch() : saved_(at::globalContext().allowTF32CuBLAS()) {}
  ~Tf32Switch() { at::globalContext().setAllowTF32CuBLAS(saved_); }
  Tf32Switch(const Tf32Switch&) = delete;
  Tf32Switch& operator=(const Tf32Switch&) = delete;
  void set(bool allow) { at::globalContext().setAllowTF32CuBLAS(allow); }

 private:
  bool saved_;
};

// The intra-op threads `stoker train` uses (setup.h). The BLAS keeps all of its threads:
// `stoker check` reports peak rates, an upper bound (stoker train gives a pthreads OpenBLAS
// one thread, stoker/core/host_tuning.h, and runs its convolutions on libtorch's threads).
int use_trainer_threads() {
  set_intra_op_threads(0);
  return torch::get_num_threads();
}

void synchronize(bool cuda) {
  if (cuda) torch::cuda::synchronize(0);
}

double product_flops(int n) { return 2.0 * n * static_cast<double>(n) * n; }

// Times `batch` products per synchronisation until the budget is spent (at least one batch).
void time_products(int n, torch::ScalarType dtype, bool cuda, double budget, int batch, MatmulResult* result) {
  const auto options =
      torch::TensorOptions().device(cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU));
  torch::Tensor a = torch::randn({n, n}, options).to(dtype);
  torch::Tensor b = torch::randn({n, n}, options).to(dtype);
  torch::Tensor c = torch::empty({n, n}, options.dtype(dtype));
  torch::mm_out(c, a, b);  // warm-up: kernels chosen, memory touched
  synchronize(cuda);
  diagnose::check::RateMeter meter(budget);
  int products = 0;
  for (bool more = true; more;) {
    for (int i = 0; i < batch; ++i) torch::mm_out(c, a, b);
    synchronize(cuda);
    products += batch;
    more = meter.add(batch * product_flops(n));
  }
  result->size = n;
  result->products = products;
  result->seconds = meter.seconds();
  result->tflops = meter.best_rate() / 1e12;
}

MatmulResult matmul_cpu(const std::string& name, torch::ScalarType dtype, double budget) {
  MatmulResult result;
  result.dtype = name;
  try {
    // Products of 1024² take a few ms to a few 100 ms on current CPUs: big enough for the
    // BLAS to reach its peak. Halve while one product takes over a fifth of the budget (a
    // slow dtype, a slow machine); take 2048 when one is well under a hundredth of it.
    int size = 1024;
    MatmulResult trial;
    time_products(size, dtype, false, 0, 1, &trial);
    double product_s = trial.seconds;
    while (product_s > budget / 5 && size > 256) {
      size /= 2;
      product_s /= 8;
    }
    if (size == 1024 && product_s < budget / 100) size = 2048;
    time_products(size, dtype, false, budget, 1, &result);
  } catch (const std::exception& e) {
    result.skipped = short_reason(e);
  }
  return result;
}

MatmulResult matmul_cuda(const std::string& name, torch::ScalarType dtype, bool tf32, double budget) {
  MatmulResult result;
  result.dtype = name;
  Tf32Switch tf32_switch;
  tf32_switch.set(tf32);
  // Large enough to saturate any current GPU; smaller where memory is short.
  for (const int n : {8192, 4096, 2048, 1024}) {
    try {
      result.skipped.clear();
      time_products(n, dtype, true, budget, 4, &result);
      return result;
    } catch (const std::exception& e) {
      result.skipped = short_reason(e);
    }
  }
  return result;
}

}  // namespace

TorchDeviceInfo torch_device_info() {
  TorchDeviceInfo info;
  info.torch = torch_description();
  info.cpu_threads = use_trainer_threads();
  info.cuda_version = cuda_runtime_version();
  if (!compat::cuda_available()) {
    info.skipped = no_cuda_reason();
    return info;
  }
  info.cudnn_version = cudnn_version();
  const int count = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < count; ++i) {
    TorchGpu gpu;
    gpu.index = i;
    if (driver_compute_capability(i, &gpu.cc_major, &gpu.cc_minor)) {
      gpu.bf16 = gpu.tf32 = gpu.cc_major >= 8;
    }
    info.gpus.push_back(gpu);
  }
  return info;
}

std::vector<MatmulResult> measure_matmul(const std::string& device, double seconds) {
  std::vector<MatmulResult> results;
  if (device == "cpu") {
    use_trainer_threads();
    results.push_back(matmul_cpu("fp32", torch::kFloat, seconds));
    results.push_back(matmul_cpu("bf16", torch::kBFloat16, seconds));
    return results;
  }
  if (!compat::cuda_available()) {
    const std::string why = no_cuda_reason();
    for (const char* dtype : {"fp32", "tf32", "bf16", "fp16"}) results.push_back({dtype, 0, 0, 0, 0, why});
    return results;
  }
  results.push_back(matmul_cuda("fp32", torch::kFloat, false, seconds));
  results.push_back(matmul_cuda("tf32", torch::kFloat, true, seconds));
  results.push_back(matmul_cuda("bf16", torch::kBFloat16, false, seconds));
  results.push_back(matmul_cuda("fp16", torch::kHalf, false, seconds));
  return results;
}

std::vector<TransferResult> measure_host_to_device(double seconds) {
  std::vector<TransferResult> results{{"pinned", 0, 0, ""}, {"pageable", 0, 0, ""}};
  if (!compat::cuda_available()) {
    for (auto& r : results) r.skipped = no_cuda_reason();
    return results;
  }
  constexpr int64_t kBytes = int64_t{256} << 20;
  torch::Tensor device_buffer;
  try {
    device_buffer = torch::empty({kBytes}, torch::TensorOptions().dtype(torch::kUInt8).device(torch::kCUDA, 0));
  } catch (const std::exception& e) {
    for (auto& r : results) r.skipped = short_reason(e);
    return results;
  }
  for (auto& r : results) {
    try {
      torch::Tensor host = torch::ones({kBytes}, torch::kUInt8);  // pages touched
      const bool pinned = r.kind == "pinned";
      if (pinned) host = host.pin_memory();
      device_buffer.copy_(host, pinned);  // warm-up
      synchronize(true);
      diagnose::check::RateMeter meter(seconds);
      for (bool more = true; more;) {
        device_buffer.copy_(host, pinned);
        synchronize(true);
        more = meter.add(static_cast<double>(kBytes));
      }
      r.seconds = meter.seconds();
      r.gb_per_s = meter.best_rate() / 1e9;
    } catch (const std::exception& e) {
      r.skipped = short_reason(e);
    }
  }
  return results;
}

}  // namespace stoker::train
