#include "stoker/monitor/gpu_reader.h"

#include <utility>

#include "monitor/gpu/gpm_sampler.h"
#include "monitor/gpu/nvml_library.h"
#include "monitor/gpu/process_list.h"
#include "monitor/gpu/utilization_samples.h"

namespace stoker::monitor {
namespace {

constexpr const char* kNvmlSource = "nvml";
constexpr double kWattsPerMilliwatt = 1e-3;
constexpr double kBytesPerKb = 1024;  // NVML's PCIe "KB/s" count 1 KiB units

struct Device {
  nvmlDevice_t handle = nullptr;
  std::unique_ptr<GpmSampler> gpm;  // null without GPM
  // The driver's samples since the last read, for both utilisation figures.
  std::unique_ptr<UtilizationSamples> gpu_busy, memory_busy;
};

// NVML writes C strings into caller buffers of a documented size.
std::string until_nul(const std::string& buffer) { return buffer.substr(0, buffer.find('\0')); }

// A device's name or UUID, or "" when NVML cannot say.
std::string read_string(nvml_fn::DeviceGetString* fn, nvmlDevice_t device, unsigned int size) {
  std::string buffer(size, '\0');
  if (fn == nullptr || fn(device, buffer.data(), size) != NVML_SUCCESS) return "";
  return until_nul(buffer);
}

// A version string, or "unknown".
std::string read_string(nvml_fn::SystemGetString* fn, unsigned int size) {
  std::string buffer(size, '\0');
  if (fn == nullptr || fn(buffer.data(), size) != NVML_SUCCESS) return "unknown";
  return until_nul(buffer);
}

}  // namespace

struct GpuReader::Impl {
  // First member: its library must outlive everything else that calls into it.
  std::unique_ptr<NvmlLibrary> nvml;
  bool initialised = false;  // nvmlInit succeeded, so nvmlShutdown is owed
  std::vector<GpuInfo> gpus;
  std::vector<Device> devices;  // parallel to gpus
  std::string versions;
  std::unique_ptr<ProcessMemoryReader> processes;
  // Cleared when the driver answers NVML_ERROR_FUNCTION_NOT_FOUND (or refuses the struct
  // version) for the newer call, so that the older one is used from then on.
  bool use_memory_v2 = true;
  bool use_clocks_event_reasons = true;

  ~Impl() {
    devices.clear();  // frees the GPM samples while NVML is still up
    if (initialised) nvml->fn().shutdown();
  }

  const NvmlFunctions& fn() const { return nvml->fn(); }
  void read_memory(nvmlDevice_t device, GpuSample* s);
  void read_clocks_event_reasons(nvmlDevice_t device, GpuSample* s);
  void read_device(Device& device, int64_t now_ns, const std::vector<pid_t>& pids, bool with_pcie, GpuSample* s);
};

void GpuReader::Impl::read_memory(nvmlDevice_t device, GpuSample* s) {
  if (use_memory_v2 && fn().device_get_memory_info_v2 != nullptr) {
    nvmlMemory_v2_t memory{};
    memory.version = nvmlMemory_v2;
    const nvmlReturn_t result = fn().device_get_memory_info_v2(device, &memory);
    if (result == NVML_SUCCESS) {
      s->memory_used_bytes.set(static_cast<double>(memory.used), kNvmlSource);
      s->memory_total_bytes.set(static_cast<double>(memory.total), kNvmlSource);
      return;
    }
    if (result != NVML_ERROR_FUNCTION_NOT_FOUND && result != NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
      return;
    }
    use_memory_v2 = false;
  }
  // v1's `used` includes the driver's reservation (a few hundred MB on an idle GPU).
  if (fn().device_get_memory_info != nullptr) {
    nvmlMemory_t memory{};
    if (fn().device_get_memory_info(device, &memory) == NVML_SUCCESS) {
      s->memory_used_bytes.set(static_cast<double>(memory.used), kNvmlSource);
      s->memory_total_bytes.set(static_cast<double>(memory.total), kNvmlSource);
    }
  }
}

void GpuReader::Impl::read_clocks_event_reasons(nvmlDevice_t device, GpuSample* s) {
  unsigned long long mask = 0;
  if (use_clocks_event_reasons && fn().device_get_current_clocks_event_reasons != nullptr) {
    const nvmlReturn_t result = fn().device_get_current_clocks_event_reasons(device, &mask);
    if (result == NVML_SUCCESS) {
      s->throttle_reasons.set(static_cast<double>(mask), kNvmlSource);
      return;
    }
    if (result != NVML_ERROR_FUNCTION_NOT_FOUND) return;
    use_clocks_event_reasons = false;
  }
  if (fn().device_get_current_clocks_throttle_reasons != nullptr &&
      fn().device_get_current_clocks_throttle_reasons(device, &mask) == NVML_SUCCESS) {
    s->throttle_reasons.set(static_cast<double>(mask), kNvmlSource);
  }
}

void GpuReader::Impl::read_device(Device& device, int64_t now_ns, const std::vector<pid_t>& pids, bool with_pcie,
                                  GpuSample* s) {
  const NvmlFunctions& f = fn();
  const nvmlDevice_t h = device.handle;
  unsigned int value = 0;

  if (f.device_get_utilization_rates != nullptr) {
    nvmlUtilization_t utilization{};
    if (f.device_get_utilization_rates(h, &utilization) == NVML_SUCCESS) {
      s->util_gpu_percent.set(utilization.gpu, kNvmlSource);
      s->util_memory_percent.set(utilization.memory, kNvmlSource);
    }
  }
  // Over the whole interval since the last read where the driver keeps its samples; the
  // instantaneous figure above otherwise (see utilization_samples.h).
  if (const auto mean = device.gpu_busy->mean_since_last()) s->util_gpu_percent.set(*mean, kNvmlSource);
  if (const auto mean = device.memory_busy->mean_since_last()) s->util_memory_percent.set(*mean, kNvmlSource);
  read_memory(h, s);
  if (f.device_get_power_usage != nullptr && f.device_get_power_usage(h, &value) == NVML_SUCCESS) {
    s->power_watts.set(value * kWattsPerMilliwatt, kNvmlSource);
  }
  if (f.device_get_enforced_power_limit != nullptr && f.device_get_enforced_power_limit(h, &value) == NVML_SUCCESS) {
    s->power_limit_watts.set(value * kWattsPerMilliwatt, kNvmlSource);
  }
  if (f.device_get_temperature != nullptr &&
      f.device_get_temperature(h, NVML_TEMPERATURE_GPU, &value) == NVML_SUCCESS) {
    s->temperature_c.set(value, kNvmlSource);
  }
  if (f.device_get_clock_info != nullptr && f.device_get_clock_info(h, NVML_CLOCK_SM, &value) == NVML_SUCCESS) {
    s->sm_clock_mhz.set(value, kNvmlSource);
  }
  read_clocks_event_reasons(h, s);
  if (with_pcie && f.device_get_pcie_throughput != nullptr) {
    if (f.device_get_pcie_throughput(h, NVML_PCIE_UTIL_RX_BYTES, &value) == NVML_SUCCESS) {
      s->pcie_rx_bytes_per_s.set(value * kBytesPerKb, kNvmlSource);
    }
    if (f.device_get_pcie_throughput(h, NVML_PCIE_UTIL_TX_BYTES, &value) == NVML_SUCCESS) {
      s->pcie_tx_bytes_per_s.set(value * kBytesPerKb, kNvmlSource);
    }
  }
  if (device.gpm) device.gpm->sample(now_ns, s);
  if (const auto used = processes->used_bytes(h, pids)) {
    s->process_memory_bytes.set(static_cast<double>(*used), kNvmlSource);
  }
}

std::unique_ptr<GpuReader> GpuReader::open(std::string* why_not, const std::string& library) {
  std::string ignored;
  if (why_not == nullptr) why_not = &ignored;
  std::unique_ptr<NvmlLibrary> nvml = NvmlLibrary::load(library, why_not);
  if (!nvml) return nullptr;

  auto impl = std::make_unique<Impl>();
  impl->nvml = std::move(nvml);
  const NvmlLibrary& lib = *impl->nvml;
  const NvmlFunctions& fn = lib.fn();

  nvmlReturn_t result = fn.init();
  if (result != NVML_SUCCESS) {
    *why_not = "NVML could not start (" + lib.error_string(result) + ")";
    return nullptr;
  }
  impl->initialised = true;  // from here on, returning nullptr shuts NVML down again

  unsigned int count = 0;
  result = fn.device_get_count(&count);
  if (result != NVML_SUCCESS) {
    *why_not = "NVML could not count the GPUs (" + lib.error_string(result) + ")";
    return nullptr;
  }
  if (count == 0) {
    *why_not = "NVML sees no GPU";
    return nullptr;
  }

  // A GPU NVML may not open (no permission, fallen off the bus) is left out; the others are
  // watched under their NVML index.
  nvmlReturn_t first_failure = NVML_SUCCESS;
  for (unsigned int i = 0; i < count; ++i) {
    Device device;
    result = fn.device_get_handle_by_index(i, &device.handle);
    if (result != NVML_SUCCESS) {
      if (first_failure == NVML_SUCCESS) first_failure = result;
      continue;
    }
    device.gpm = GpmSampler::create(fn, device.handle);
    device.gpu_busy = std::make_unique<UtilizationSamples>(fn, device.handle, NVML_GPU_UTILIZATION_SAMPLES);
    device.memory_busy = std::make_unique<UtilizationSamples>(fn, device.handle, NVML_MEMORY_UTILIZATION_SAMPLES);
    GpuInfo info;
    info.index = static_cast<int>(i);
    info.name = read_string(fn.device_get_name, device.handle, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
    info.uuid = read_string(fn.device_get_uuid, device.handle, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
    info.gpm_supported = device.gpm != nullptr;
    impl->gpus.push_back(std::move(info));
    impl->devices.push_back(std::move(device));
  }
  if (impl->devices.empty()) {
    *why_not =
        "NVML could not open any of " + std::to_string(count) + " GPUs (" + lib.error_string(first_failure) + ")";
    return nullptr;
  }

  impl->versions = "driver " + read_string(fn.system_get_driver_version, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE) +
                   ", NVML " + read_string(fn.system_get_nvml_version, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
  impl->processes = std::make_unique<ProcessMemoryReader>(fn);
  return std::unique_ptr<GpuReader>(new GpuReader(std::move(impl)));
}

GpuReader::GpuReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuReader::~GpuReader() = default;

const std::vector<GpuInfo>& GpuReader::gpus() const { return impl_->gpus; }
const std::string& GpuReader::versions() const { return impl_->versions; }

void GpuReader::sample(std::vector<GpuSample>* out, int64_t now_ns, const std::vector<pid_t>& pids, bool with_pcie) {
  out->resize(impl_->devices.size());
  for (size_t i = 0; i < impl_->devices.size(); ++i) {
    GpuSample& s = (*out)[i];
    s = GpuSample{};
    s.index = impl_->gpus[i].index;
    impl_->read_device(impl_->devices[i], now_ns, pids, with_pcie, &s);
  }
}

}  // namespace stoker::monitor
