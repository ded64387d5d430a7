// monitor/gpu/nvml_library.h — NVML opened with dlopen and its functions resolved by name.
//
// A few functions (init, shutdown, device count, device handle) are required: without them
// load() fails. Every other one is optional and left null when the library lacks it (an older
// driver), which only makes its figures unavailable. Where NVML has several versions of a
// function, the newer is preferred and the older kept as a fallback, because a driver may
// export a symbol and still answer NVML_ERROR_FUNCTION_NOT_FOUND.
//
// Thread safety: immutable after load(); the NVML functions themselves are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "monitor/gpu/nvml_api.h"
#include "stoker/core/dynamic_library.h"

namespace stoker::monitor {

// How entries of a running-process list are laid out.
enum class ProcessLayout {
  kV1,  // nvmlProcessInfo_v1_t, 16 bytes: the unversioned functions
  kV2,  // nvmlProcessInfo_v2_t, 24 bytes: _v2 and _v3 (but see process_list.h)
};

// One function that lists a GPU's running processes, with the layout it writes.
struct ProcessListFn {
  nvml_fn::DeviceGetRunningProcesses* fn = nullptr;
  const char* symbol = "";
  ProcessLayout layout = ProcessLayout::kV2;
};

// The resolved functions. Required ones are never null once load() succeeded.
struct NvmlFunctions {
  // Required.
  nvml_fn::Init* init = nullptr;  // nvmlInit_v2
  nvml_fn::Shutdown* shutdown = nullptr;
  nvml_fn::DeviceGetCount* device_get_count = nullptr;                    // _v2
  nvml_fn::DeviceGetHandleByIndex* device_get_handle_by_index = nullptr;  // _v2

  // Optional.
  nvml_fn::ErrorString* error_string = nullptr;
  nvml_fn::SystemGetString* system_get_driver_version = nullptr;
  nvml_fn::SystemGetString* system_get_nvml_version = nullptr;
  nvml_fn::DeviceGetString* device_get_name = nullptr;
  nvml_fn::DeviceGetString* device_get_uuid = nullptr;
  nvml_fn::DeviceGetUtilizationRates* device_get_utilization_rates = nullptr;
  nvml_fn::DeviceGetMemoryInfoV2* device_get_memory_info_v2 = nullptr;
  nvml_fn::DeviceGetMemoryInfo* device_get_memory_info = nullptr;
  nvml_fn::DeviceGetUint* device_get_power_usage = nullptr;
  nvml_fn::DeviceGetUint* device_get_enforced_power_limit = nullptr;
  nvml_fn::DeviceGetTemperature* device_get_temperature = nullptr;
  nvml_fn::DeviceGetClockInfo* device_get_clock_info = nullptr;
  // The same call under its new name (driver 535+) and its old one.
  nvml_fn::DeviceGetClocksEventReasons* device_get_current_clocks_event_reasons = nullptr;
  nvml_fn::DeviceGetClocksEventReasons* device_get_current_clocks_throttle_reasons = nullptr;
  nvml_fn::DeviceGetPcieThroughput* device_get_pcie_throughput = nullptr;
  nvml_fn::DeviceGetSamples* device_get_samples = nullptr;
  // Best first (_v3, _v2, unversioned); only those the library has.
  std::vector<ProcessListFn> compute_processes;
  std::vector<ProcessListFn> graphics_processes;
  nvml_fn::GpmQueryDeviceSupport* gpm_query_device_support = nullptr;
  nvml_fn::GpmSampleAlloc* gpm_sample_alloc = nullptr;
  nvml_fn::GpmSampleFree* gpm_sample_free = nullptr;
  nvml_fn::GpmSampleGet* gpm_sample_get = nullptr;
  nvml_fn::GpmMetricsGet* gpm_metrics_get = nullptr;

  bool has_gpm() const {
    return gpm_query_device_support && gpm_sample_alloc && gpm_sample_free && gpm_sample_get && gpm_metrics_get;
  }
};

class NvmlLibrary {
 public:
  // The names tried when none is given: the driver's runtime name, then the development
  // symlink some installs have instead.
  static constexpr const char* kDefaultNames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};

  // Opens `library` (or the default names, in order, when empty) and resolves the functions.
  // Does not call nvmlInit. On failure returns nullptr and sets *why_not to one line.
  static std::unique_ptr<NvmlLibrary> load(const std::string& library, std::string* why_not);

  const NvmlFunctions& fn() const { return fn_; }
  // The name that opened, e.g. "libnvidia-ml.so.1".
  const std::string& name() const { return library_->name(); }
  // nvmlErrorString's text for `result`, or "NVML error <n>" when the library has none.
  std::string error_string(nvmlReturn_t result) const;

 private:
  explicit NvmlLibrary(std::unique_ptr<DynamicLibrary> library);
  std::unique_ptr<DynamicLibrary> library_;
  NvmlFunctions fn_;
};

}  // namespace stoker::monitor
