#include "monitor/gpu/process_list.h"

#include <algorithm>
#include <cstring>

namespace stoker::monitor {
namespace {

constexpr size_t kV1Stride = sizeof(nvmlProcessInfo_v1_t);        // 16
constexpr size_t kV2Stride = sizeof(nvmlProcessInfo_v2_t);        // 24
constexpr size_t kDetailStride = sizeof(nvmlProcessDetail_v1_t);  // 32
constexpr size_t kMaxStride = kDetailStride;
constexpr uint32_t kPidLimit = 1U << 22;  // PID_MAX_LIMIT on 64-bit Linux

// pid and usedGpuMemory sit at the same offsets in every layout.
static_assert(offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_v2_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessDetail_v1_t, usedGpuMemory) == 8);

GpuProcess entry_at(std::span<const uint8_t> bytes, size_t offset) {
  GpuProcess p;
  std::memcpy(&p.pid, bytes.data() + offset, sizeof p.pid);
  std::memcpy(&p.used_bytes, bytes.data() + offset + 8, sizeof p.used_bytes);
  return p;
}

bool plausible(std::span<const uint8_t> bytes, unsigned count, size_t stride) {
  for (size_t i = 0; i < count; ++i) {
    if (i * stride + kV1Stride > bytes.size()) return false;
    const uint32_t pid = entry_at(bytes, i * stride).pid;
    if (pid == 0 || pid > kPidLimit) return false;
  }
  return true;
}

}  // namespace

size_t process_entry_stride(std::span<const uint8_t> bytes, unsigned count, ProcessLayout layout) {
  if (layout == ProcessLayout::kV1) return kV1Stride;
  // Read 32-byte entries as 24-byte ones and the second pid is the first entry's protected
  // memory (0 but under confidential computing); read 24 as 32 and pids land in memory sizes.
  if (plausible(bytes, count, kV2Stride)) return kV2Stride;
  if (plausible(bytes, count, kDetailStride)) return kDetailStride;
  return kV2Stride;
}

void decode_process_list(std::span<const uint8_t> bytes, unsigned count, ProcessLayout layout,
                         std::vector<GpuProcess>* out) {
  const size_t stride = process_entry_stride(bytes, count, layout);
  for (size_t i = 0; i < count && i * stride + kV1Stride <= bytes.size(); ++i) {
    out->push_back(entry_at(bytes, i * stride));
  }
}

bool ProcessMemoryReader::list(const std::vector<ProcessListFn>& variants, size_t* variant, nvmlDevice_t device) {
  for (; *variant < variants.size(); ++*variant) {
    const ProcessListFn& call = variants[*variant];
    nvmlReturn_t result = NVML_ERROR_INSUFFICIENT_SIZE;
    unsigned count = 0;
    // Processes may start between the calls, so growing can take more than one round.
    for (int round = 0; round < 4 && result == NVML_ERROR_INSUFFICIENT_SIZE; ++round) {
      buffer_.assign(size_t{capacity_} * kMaxStride, 0);
      count = capacity_;
      result = call.fn(device, &count, buffer_.data());
      if (result == NVML_ERROR_INSUFFICIENT_SIZE) {
        capacity_ = std::max(capacity_ * 2, count + count / 2 + 8);
      }
    }
    if (result == NVML_ERROR_FUNCTION_NOT_FOUND) continue;  // try the older variant
    if (result != NVML_SUCCESS) return false;
    decode_process_list(buffer_, std::min(count, capacity_), call.layout, &processes_);
    return true;
  }
  return false;
}

std::optional<uint64_t> ProcessMemoryReader::used_bytes(nvmlDevice_t device, const std::vector<pid_t>& pids) {
  if (pids.empty()) return std::nullopt;
  processes_.clear();
  const bool compute = list(fn_.compute_processes, &compute_variant_, device);
  const bool graphics = list(fn_.graphics_processes, &graphics_variant_, device);
  if (!compute && !graphics) return std::nullopt;

  watched_.assign(pids.begin(), pids.end());
  std::sort(watched_.begin(), watched_.end());
  counted_.clear();
  uint64_t total = 0;
  for (const GpuProcess& p : processes_) {
    if (!std::binary_search(watched_.begin(), watched_.end(), p.pid)) continue;
    // A process with both a compute and a graphics context is listed twice, with its whole
    // usage each time.
    if (std::find(counted_.begin(), counted_.end(), p.pid) != counted_.end()) continue;
    if (p.used_bytes == NVML_VALUE_NOT_AVAILABLE) return std::nullopt;
    counted_.push_back(p.pid);
    total += p.used_bytes;
  }
  return total;
}

}  // namespace stoker::monitor
