// Built instead of src/train/torch/probe/device_bench.cpp when CMake found no libtorch: every
// torch-side figure of `stoker check` is reported as skipped, the rest of the report runs.
#include <string>
#include <vector>

#include "stoker/train/device_bench.h"

namespace stoker::train {

namespace {
constexpr const char* kWhy = "built without libtorch";
}  // namespace

TorchDeviceInfo torch_device_info() {
  TorchDeviceInfo info;
  info.skipped = kWhy;
  return info;
}

std::vector<MatmulResult> measure_matmul(const std::string& device, double) {
  std::vector<MatmulResult> results;
  const std::vector<std::string> dtypes = device == "cpu" ? std::vector<std::string>{"fp32", "bf16"}
                                                          : std::vector<std::string>{"fp32", "tf32", "bf16", "fp16"};
  for (const auto& dtype : dtypes) {
    MatmulResult r;
    r.dtype = dtype;
    r.skipped = kWhy;
    results.push_back(r);
  }
  return results;
}

std::vector<TransferResult> measure_host_to_device(double) {
  std::vector<TransferResult> results(2);
  results[0].kind = "pinned";
  results[1].kind = "pageable";
  for (auto& r : results) r.skipped = kWhy;
  return results;
}

}  // namespace stoker::train
