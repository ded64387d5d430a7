#include "monitor/gpu/nvml_library.h"

#include <utility>

namespace stoker::monitor {
namespace {

// Resolves the process-list variants of one family ("Compute" or "Graphics"), best first.
std::vector<ProcessListFn> resolve_process_lists(const DynamicLibrary& lib, bool compute) {
  static constexpr const char* kCompute[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                             "nvmlDeviceGetComputeRunningProcesses_v2",
                                             "nvmlDeviceGetComputeRunningProcesses"};
  static constexpr const char* kGraphics[] = {"nvmlDeviceGetGraphicsRunningProcesses_v3",
                                              "nvmlDeviceGetGraphicsRunningProcesses_v2",
                                              "nvmlDeviceGetGraphicsRunningProcesses"};
  static constexpr ProcessLayout kLayouts[] = {ProcessLayout::kV2, ProcessLayout::kV2, ProcessLayout::kV1};
  const auto& names = compute ? kCompute : kGraphics;
  std::vector<ProcessListFn> found;
  for (size_t i = 0; i < 3; ++i) {
    if (auto* fn = lib.get<nvml_fn::DeviceGetRunningProcesses>(names[i])) {
      found.push_back({fn, names[i], kLayouts[i]});
    }
  }
  return found;
}

}  // namespace

NvmlLibrary::NvmlLibrary(std::unique_ptr<DynamicLibrary> library) : library_(std::move(library)) {
  const DynamicLibrary& lib = *library_;
  fn_.init = lib.get<nvml_fn::Init>("nvmlInit_v2");
  fn_.shutdown = lib.get<nvml_fn::Shutdown>("nvmlShutdown");
  fn_.device_get_count = lib.get<nvml_fn::DeviceGetCount>("nvmlDeviceGetCount_v2");
  fn_.device_get_handle_by_index = lib.get<nvml_fn::DeviceGetHandleByIndex>("nvmlDeviceGetHandleByIndex_v2");

  fn_.error_string = lib.get<nvml_fn::ErrorString>("nvmlErrorString");
  fn_.system_get_driver_version = lib.get<nvml_fn::SystemGetString>("nvmlSystemGetDriverVersion");
  fn_.system_get_nvml_version = lib.get<nvml_fn::SystemGetString>("nvmlSystemGetNVMLVersion");
  fn_.device_get_name = lib.get<nvml_fn::DeviceGetString>("nvmlDeviceGetName");
  fn_.device_get_uuid = lib.get<nvml_fn::DeviceGetString>("nvmlDeviceGetUUID");
  fn_.device_get_utilization_rates = lib.get<nvml_fn::DeviceGetUtilizationRates>("nvmlDeviceGetUtilizationRates");
  fn_.device_get_memory_info_v2 = lib.get<nvml_fn::DeviceGetMemoryInfoV2>("nvmlDeviceGetMemoryInfo_v2");
  fn_.device_get_memory_info = lib.get<nvml_fn::DeviceGetMemoryInfo>("nvmlDeviceGetMemoryInfo");
  fn_.device_get_power_usage = lib.get<nvml_fn::DeviceGetUint>("nvmlDeviceGetPowerUsage");
  fn_.device_get_enforced_power_limit = lib.get<nvml_fn::DeviceGetUint>("nvmlDeviceGetEnforcedPowerLimit");
  fn_.device_get_temperature = lib.get<nvml_fn::DeviceGetTemperature>("nvmlDeviceGetTemperature");
  fn_.device_get_clock_info = lib.get<nvml_fn::DeviceGetClockInfo>("nvmlDeviceGetClockInfo");
  fn_.device_get_current_clocks_event_reasons =
      lib.get<nvml_fn::DeviceGetClocksEventReasons>("nvmlDeviceGetCurrentClocksEventReasons");
  fn_.device_get_current_clocks_throttle_reasons =
      lib.get<nvml_fn::DeviceGetClocksEventReasons>("nvmlDeviceGetCurrentClocksThrottleReasons");
  fn_.device_get_pcie_throughput = lib.get<nvml_fn::DeviceGetPcieThroughput>("nvmlDeviceGetPcieThroughput");
  fn_.device_get_samples = lib.get<nvml_fn::DeviceGetSamples>("nvmlDeviceGetSamples");
  fn_.compute_processes = resolve_process_lists(lib, /*compute=*/true);
  fn_.graphics_processes = resolve_process_lists(lib, /*compute=*/false);
  fn_.gpm_query_device_support = lib.get<nvml_fn::GpmQueryDeviceSupport>("nvmlGpmQueryDeviceSupport");
  fn_.gpm_sample_alloc = lib.get<nvml_fn::GpmSampleAlloc>("nvmlGpmSampleAlloc");
  fn_.gpm_sample_free = lib.get<nvml_fn::GpmSampleFree>("nvmlGpmSampleFree");
  fn_.gpm_sample_get = lib.get<nvml_fn::GpmSampleGet>("nvmlGpmSampleGet");
  fn_.gpm_metrics_get = lib.get<nvml_fn::GpmMetricsGet>("nvmlGpmMetricsGet");
}

std::unique_ptr<NvmlLibrary> NvmlLibrary::load(const std::string& library, std::string* why_not) {
  std::unique_ptr<DynamicLibrary> lib;
  std::string first_error;
  if (!library.empty()) {
    lib = DynamicLibrary::open(library, &first_error);
  } else {
    for (const char* name : kDefaultNames) {
      std::string error;
      lib = DynamicLibrary::open(name, &error);
      if (lib) break;
      // The first name is the one a driver install provides; its error is the useful one.
      if (first_error.empty()) first_error = std::move(error);
    }
  }
  if (!lib) {
    *why_not = "NVML not found (" + first_error + ")";
    return nullptr;
  }

  std::unique_ptr<NvmlLibrary> nvml(new NvmlLibrary(std::move(lib)));
  const NvmlFunctions& fn = nvml->fn_;
  const char* missing = !fn.init                         ? "nvmlInit_v2"
                        : !fn.shutdown                   ? "nvmlShutdown"
                        : !fn.device_get_count           ? "nvmlDeviceGetCount_v2"
                        : !fn.device_get_handle_by_index ? "nvmlDeviceGetHandleByIndex_v2"
                                                         : nullptr;
  if (missing != nullptr) {
    *why_not = "NVML unusable (" + nvml->name() + " has no " + missing + "; driver too old?)";
    return nullptr;
  }
  return nvml;
}

std::string NvmlLibrary::error_string(nvmlReturn_t result) const {
  const char* text = fn_.error_string ? fn_.error_string(result) : nullptr;
  if (text != nullptr && *text != '\0') return text;
  return "NVML error " + std::to_string(static_cast<int>(result));
}

}  // namespace stoker::monitor
