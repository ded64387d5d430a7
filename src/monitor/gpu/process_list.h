// monitor/gpu/process_list.h — which processes use a GPU and how much memory, through
// nvmlDevice{Compute,Graphics}RunningProcesses, summed over a watched set of pids.
//
// The entry layout of these calls has changed under the same name: drivers 535.43 to 535.86
// wrote 32-byte entries (nvmlProcessDetail_v1_t) through the _v3 functions, which take and
// normally write 24-byte ones (nvmlProcessInfo_v2_t). So the buffer always has room for 32
// bytes an entry, and the stride of a _v3 answer is inferred from the entries: the one that
// gives no impossible pid (0, or above the kernel's 2^22 limit) wins.
//
// Thread safety: not thread-safe; belongs to one GpuReader.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "monitor/gpu/nvml_library.h"

namespace stoker::monitor {

struct GpuProcess {
  uint32_t pid = 0;
  uint64_t used_bytes = 0;  // NVML_VALUE_NOT_AVAILABLE when NVML does not know
};

// Bytes of one entry as NVML wrote `count` of them into `bytes` (zero past what it wrote).
size_t process_entry_stride(std::span<const uint8_t> bytes, unsigned count, ProcessLayout layout);

// The `count` entries in `bytes`, appended to *out.
void decode_process_list(std::span<const uint8_t> bytes, unsigned count, ProcessLayout layout,
                         std::vector<GpuProcess>* out);

class ProcessMemoryReader {
 public:
  explicit ProcessMemoryReader(const NvmlFunctions& fn) : fn_(fn) {}

  // GPU memory used on `device` by the processes in `pids`, compute and graphics together (a
  // process in both lists counts once). Nothing when `pids` is empty, when neither list could
  // be read, or when a watched process's usage is not available. 0 when none is on the GPU.
  std::optional<uint64_t> used_bytes(nvmlDevice_t device, const std::vector<pid_t>& pids);

 private:
  // Appends one family's processes to processes_; false when no variant answered.
  bool list(const std::vector<ProcessListFn>& variants, size_t* variant, nvmlDevice_t device);

  const NvmlFunctions& fn_;
  // First variant of each family not known to be missing from the driver: a variant that
  // answers NVML_ERROR_FUNCTION_NOT_FOUND is skipped from then on.
  size_t compute_variant_ = 0;
  size_t graphics_variant_ = 0;
  unsigned capacity_ = 64;  // entries; grows on NVML_ERROR_INSUFFICIENT_SIZE and stays grown
  std::vector<uint8_t> buffer_;
  std::vector<GpuProcess> processes_;
  std::vector<uint32_t> watched_;
  std::vector<uint32_t> counted_;
};

}  // namespace stoker::monitor
