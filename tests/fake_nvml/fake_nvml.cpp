// tests/fake_nvml/fake_nvml.cpp — a stand-in libnvidia-ml.so.1 for testing stoker::monitor
// without a GPU: GPUs, figures and failures are scripted in a text file.
//
// The script is the file named by $STOKER_FAKE_NVML_SCRIPT, re-read on every call, so a test
// may change it between samples. One `key=value` a line; `#` starts a comment. Per-GPU keys
// end in the GPU index:
//   gpus=2                      GPUs nvmlDeviceGetCount_v2 reports (default 0)
//   driver=580.159  nvml=13.580.159
//   name0=Fake H100  uuid0=GPU-...
//   util0=85  util_mem0=40      nvmlDeviceGetUtilizationRates (both or neither)
//   mem_used0=... mem_total0=... mem_reserved0=...   bytes; v1 reports used + reserved
//   power_mw0=312000  power_limit_mw0=700000  temp0=71  sm_clock0=1980  throttle0=0x44
//   pcie_rx_kbs0=1000  pcie_tx_kbs0=500
//   util_samples0=<µs>:<value>,...   nvmlDeviceGetSamples' buffer of GPU_UTILIZATION samples,
//   mem_samples0=...                 and of MEMORY_UTILIZATION ones, oldest first
//   samples_type0=0             their nvmlValueType_t: 1 (unsigned int, the default) or 0 (double)
//   gpm0=1  sm_activity0=71.5  sm_occupancy0=40  tensor_activity0=30  dram_bw0=55
//   proc0=<pid>:<bytes>,<pid>:na,...   compute processes; gproc0=... graphics processes
//   proc_v3_stride=32           entry size the _v3 process calls write (24; 32 as 535.43-86)
//   fail_<symbol>=<code>        that function returns the nvmlReturn_t code, does nothing else
// A per-GPU figure without its key answers NVML_ERROR_NOT_SUPPORTED.
//
// The fake checks what a real driver checks and a wrong reader would get wrong: the version
// fields of versioned structs (NVML_ERROR_ARGUMENT_VERSION_MISMATCH), the enum values it is
// passed, device and GPM sample handles, and that GPM sample pairs come oldest first. Its ABI
// declarations are its own, with nvml.h's literal numbers, so that a mistake in the reader's
// copy (src/monitor/gpu/nvml_api.h) fails here instead of agreeing with itself.
//
// For tests, besides NVML's symbols: fake_nvml_init_count() (nvmlInit minus nvmlShutdown),
// fake_nvml_live_gpm_samples(), fake_nvml_calls(symbol) and fake_nvml_reset().
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// --- ABI (nvml.h, API version 12) ----------------------------------------------------------

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

struct nvmlDevice_st {
  unsigned int index;
};
typedef struct nvmlDevice_st* nvmlDevice_t;

struct nvmlGpmSample_st {
  int device;    // -1 until filled
  uint64_t seq;  // when it was filled, in nvmlGpmSampleGet calls
};
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} nvmlUtilization_t;

typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
constexpr unsigned int kMemoryV2Version = 40U | (2U << 24);  // NVML_STRUCT_VERSION(Memory, 2)
static_assert(sizeof(nvmlMemory_v2_t) == 40);

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
} nvmlGpmMetric_t;

constexpr unsigned int kOldestGpmMetricMax = 98;  // the smallest array nvml.h ever had
typedef struct {
  unsigned int version;
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kOldestGpmMetricMax];
} nvmlGpmMetricsGet_t;
constexpr unsigned int kGpmMetricsGetVersion = 1;

typedef struct {
  unsigned int version;
  unsigned int isSupportedDevice;
} nvmlGpmSupport_t;
constexpr unsigned int kGpmSupportVersion = 1;

constexpr unsigned long long kValueNotAvailable = ~0ULL;

namespace {

// --- State ---------------------------------------------------------------------------------

constexpr unsigned int kMaxGpus = 16;

std::mutex g_mutex;  // every exported function holds it: NVML is thread-safe
int g_init_count = 0;
std::map<std::string, int> g_calls;
std::set<nvmlGpmSample_t> g_samples;
uint64_t g_sample_seq = 0;
nvmlDevice_st g_devices[kMaxGpus] = {{0}, {1}, {2},  {3},  {4},  {5},  {6},  {7},
                                     {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}};

// --- Script --------------------------------------------------------------------------------

class Script {
 public:
  static Script load() {
    Script script;
    const char* path = std::getenv("STOKER_FAKE_NVML_SCRIPT");
    if (path == nullptr) return script;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      script.values_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return script;
  }

  const std::string* find(const std::string& key) const {
    const auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    const std::string* v = find(key);
    return v != nullptr ? *v : fallback;
  }
  // Decimal or 0x hex.
  unsigned long long number(const std::string& key, unsigned long long fallback) const {
    const std::string* v = find(key);
    return v != nullptr ? std::strtoull(v->c_str(), nullptr, 0) : fallback;
  }

 private:
  std::map<std::string, std::string> values_;
};

std::string key(const char* name, unsigned int gpu) { return name + std::to_string(gpu); }

// Start of every NVML function: counts the call, loads the script, and says whether the
// script makes this function fail (and with what).
bool scripted_failure(const char* function, const Script& script, nvmlReturn_t* code) {
  ++g_calls[function];
  const std::string* fail = script.find(std::string("fail_") + function);
  if (fail == nullptr) return false;
  *code = static_cast<nvmlReturn_t>(std::strtol(fail->c_str(), nullptr, 0));
  return true;
}

// The GPU a handle stands for, after the checks NVML makes.
nvmlReturn_t check_device(const Script& script, nvmlDevice_t device, unsigned int* gpu) {
  if (g_init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  const unsigned int gpus = static_cast<unsigned int>(script.number("gpus", 0));
  for (unsigned int i = 0; i < gpus && i < kMaxGpus; ++i) {
    if (device == &g_devices[i]) {
      *gpu = i;
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t scripted_uint(const Script& script, const char* name, unsigned int gpu, unsigned int* out) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (script.find(key(name, gpu)) == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<unsigned int>(script.number(key(name, gpu), 0));
  return NVML_SUCCESS;
}

nvmlReturn_t copy_string(const std::string& text, char* buffer, unsigned int length) {
  if (buffer == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

struct Process {
  unsigned int pid;
  unsigned long long used;
};

// "pid:bytes,pid:na,..."
std::vector<Process> parse_processes(const std::string& list) {
  std::vector<Process> processes;
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      const std::string bytes = item.substr(colon + 1);
      processes.push_back({static_cast<unsigned int>(std::strtoul(item.c_str(), nullptr, 10)),
                           bytes == "na" ? kValueNotAvailable : std::strtoull(bytes.c_str(), nullptr, 10)});
    }
    start = end + 1;
  }
  return processes;
}

// Writes processes the way the driver does: too small a buffer gets the count needed.
// `stride`: 16 (v1), 24 (v2) or 32 (what 535.43-86 wrote through _v3).
nvmlReturn_t write_processes(const Script& script, const char* list_key, nvmlDevice_t device, unsigned int* count,
                             void* infos, size_t stride) {
  unsigned int gpu = 0;
  if (const nvmlReturn_t r = check_device(script, device, &gpu); r != NVML_SUCCESS) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::vector<Process> processes = parse_processes(script.text(key(list_key, gpu), ""));
  const unsigned int needed = static_cast<unsigned int>(processes.size());
  if (*count < needed || (needed > 0 && infos == nullptr)) {
    *count = needed;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  auto* bytes = static_cast<unsigned char*>(infos);
  for (size_t i = 0; i < processes.size(); ++i) {
    unsigned char* entry = bytes + i * stride;
    std::memset(entry, 0, stride);
    std::memcpy(entry, &processes[i].pid, 4);
    std::memcpy(entry + 8, &processes[i].used, 8);
    if (stride >= 24) {
      const unsigned int no_mig = 0xFFFFFFFFU;  // gpuInstanceId, computeInstanceId
      std::memcpy(entry + 16, &no_mig, 4);
      std::memcpy(entry + 20, &no_mig, 4);
    }
  }
  *count = needed;
  return NVML_SUCCESS;
}

size_t v3_stride(const Script& script) { return script.number("proc_v3_stride", 24) == 32 ? 32 : 24; }

}  // namespace

// --- NVML ------------------------------------------------------------------------------------

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

// Common head of the exported functions: lock, load the script, apply fail_<name>.
#define FAKE_BEGIN()                                                                       \
  std::lock_guard<std::mutex> lock(g_mutex);                                               \
  const Script script = Script::load();                                                    \
  if (nvmlReturn_t failure = NVML_SUCCESS; scripted_failure(__func__, script, &failure)) { \
    return failure;                                                                        \
  }

#define FAKE_DEVICE()                                                                 \
  unsigned int gpu = 0;                                                               \
  if (const nvmlReturn_t r = check_device(script, device, &gpu); r != NVML_SUCCESS) { \
    return r;                                                                         \
  }

FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  FAKE_BEGIN();
  ++g_init_count;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  FAKE_BEGIN();
  if (g_init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  --g_init_count;
  return NVML_SUCCESS;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (static_cast<int>(result)) {
    case 0:
      return "Success";
    case 1:
      return "Uninitialized";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 4:
      return "Insufficient Permissions";
    case 7:
      return "Insufficient Size";
    case 9:
      return "Driver Not Loaded";
    case 13:
      return "Function Not Found";
    case 15:
      return "GPU is lost";
    case 25:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  FAKE_BEGIN();
  return copy_string(script.text("driver", "999.99"), version, length);
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  FAKE_BEGIN();
  return copy_string(script.text("nvml", "13.999.99"), version, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  FAKE_BEGIN();
  if (g_init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned int>(script.number("gpus", 0));
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  FAKE_BEGIN();
  if (g_init_count <= 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= script.number("gpus", 0) || index >= kMaxGpus) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *device = &g_devices[index];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  return copy_string(script.text(key("name", gpu), "Fake GPU " + std::to_string(gpu)), name, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  return copy_string(script.text(key("uuid", gpu), "GPU-fake-" + std::to_string(gpu)), uuid, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (const nvmlReturn_t r = scripted_uint(script, "util", gpu, &utilization->gpu); r != NVML_SUCCESS) {
    return r;
  }
  return scripted_uint(script, "util_mem", gpu, &utilization->memory);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (script.find(key("mem_total", gpu)) == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = script.number(key("mem_total", gpu), 0);
  memory->used = script.number(key("mem_used", gpu), 0) + script.number(key("mem_reserved", gpu), 0);
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != kMemoryV2Version) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (script.find(key("mem_total", gpu)) == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = script.number(key("mem_total", gpu), 0);
  memory->reserved = script.number(key("mem_reserved", gpu), 0);
  memory->used = script.number(key("mem_used", gpu), 0);
  memory->free = memory->total - memory->used - memory->reserved;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  return scripted_uint(script, "power_mw", gpu, power);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  return scripted_uint(script, "power_limit_mw", gpu, limit);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int* temp) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;  // only NVML_TEMPERATURE_GPU exists
  return scripted_uint(script, "temp", gpu, temp);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* clock) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (type < 0 || type > 3) return NVML_ERROR_INVALID_ARGUMENT;
  if (type != 1) return NVML_ERROR_NOT_SUPPORTED;  // only NVML_CLOCK_SM is scripted
  return scripted_uint(script, "sm_clock", gpu, clock);
}

namespace {
nvmlReturn_t clock_reasons(const Script& script, nvmlDevice_t device, unsigned long long* mask) {
  FAKE_DEVICE();
  if (mask == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (script.find(key("throttle", gpu)) == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *mask = script.number(key("throttle", gpu), 0);
  return NVML_SUCCESS;
}
}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_BEGIN();
  return clock_reasons(script, device, reasons);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  FAKE_BEGIN();
  return clock_reasons(script, device, reasons);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned int* value) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (counter == 0) return scripted_uint(script, "pcie_tx_kbs", gpu, value);  // TX_BYTES
  if (counter == 1) return scripted_uint(script, "pcie_rx_kbs", gpu, value);  // RX_BYTES
  return NVML_ERROR_INVALID_ARGUMENT;
}

// The buffer's entries newer than `last_seen`: with `samples` null their count; else as many as
// *count holds, oldest first. None newer: NVML_ERROR_NOT_FOUND, as the driver answers.
typedef union {
  double dVal;
  unsigned int uiVal;
  unsigned long long ullVal;
} nvmlValue_t;
typedef struct {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
} nvmlSample_t;
static_assert(sizeof(nvmlSample_t) == 16);

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, int type, unsigned long long last_seen,
                                              int* value_type, unsigned int* count, nvmlSample_t* samples) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (value_type == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (type < 0 || type > 9) return NVML_ERROR_INVALID_ARGUMENT;  // NVML_SAMPLINGTYPE_COUNT
  const char* name = type == 1 ? "util_samples" : type == 2 ? "mem_samples" : nullptr;
  const std::string* buffer = name != nullptr ? script.find(key(name, gpu)) : nullptr;
  if (buffer == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  const int as = static_cast<int>(script.number(key("samples_type", gpu), 1));
  std::vector<nvmlSample_t> newer;
  size_t at = 0;
  while (at < buffer->size()) {
    size_t end = buffer->find(',', at);
    if (end == std::string::npos) end = buffer->size();
    const std::string entry = buffer->substr(at, end - at);
    at = end + 1;
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) continue;
    nvmlSample_t sample{};
    sample.timeStamp = std::strtoull(entry.c_str(), nullptr, 10);
    const double value = std::strtod(entry.c_str() + colon + 1, nullptr);
    if (as == 0) {
      sample.sampleValue.dVal = value;
    } else {
      sample.sampleValue.uiVal = static_cast<unsigned int>(value);
    }
    if (sample.timeStamp > last_seen) newer.push_back(sample);
  }
  *value_type = as;
  if (newer.empty()) return NVML_ERROR_NOT_FOUND;
  if (samples == nullptr) {
    *count = static_cast<unsigned int>(newer.size());
    return NVML_SUCCESS;
  }
  const unsigned int n = std::min<unsigned int>(*count, static_cast<unsigned int>(newer.size()));
  std::memcpy(samples, newer.data(), n * sizeof(nvmlSample_t));
  *count = n;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                                 void* infos) {
  FAKE_BEGIN();
  return write_processes(script, "proc", device, count, infos, v3_stride(script));
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                                 void* infos) {
  FAKE_BEGIN();
  return write_processes(script, "proc", device, count, infos, 24);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count, void* infos) {
  FAKE_BEGIN();
  return write_processes(script, "proc", device, count, infos, 16);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                                  void* infos) {
  FAKE_BEGIN();
  return write_processes(script, "gproc", device, count, infos, v3_stride(script));
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                                  void* infos) {
  FAKE_BEGIN();
  return write_processes(script, "gproc", device, count, infos, 24);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* count, void* infos) {
  FAKE_BEGIN();
  return write_processes(script, "gproc", device, count, infos, 16);
}

FAKE_EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* support) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (support == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (support->version != kGpmSupportVersion) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  support->isSupportedDevice = script.number(key("gpm", gpu), 0) != 0 ? 1 : 0;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  FAKE_BEGIN();
  if (sample == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *sample = new nvmlGpmSample_st{-1, 0};
  g_samples.insert(*sample);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  FAKE_BEGIN();
  if (g_samples.erase(sample) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  delete sample;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  FAKE_BEGIN();
  FAKE_DEVICE();
  if (g_samples.count(sample) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (script.number(key("gpm", gpu), 0) == 0) return NVML_ERROR_NOT_SUPPORTED;
  sample->device = static_cast<int>(gpu);
  sample->seq = ++g_sample_seq;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* request) {
  FAKE_BEGIN();
  if (request == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (request->version != kGpmMetricsGetVersion) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (request->numMetrics == 0 || request->numMetrics > kOldestGpmMetricMax) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const nvmlGpmSample_t older = request->sample1;
  const nvmlGpmSample_t newer = request->sample2;
  if (g_samples.count(older) == 0 || g_samples.count(newer) == 0 || older == newer || older->device < 0 ||
      older->device != newer->device || older->seq >= newer->seq) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const unsigned int gpu = static_cast<unsigned int>(older->device);
  for (unsigned int i = 0; i < request->numMetrics; ++i) {
    nvmlGpmMetric_t& metric = request->metrics[i];
    const char* name = metric.metricId == 2    ? "sm_activity"      // NVML_GPM_METRIC_SM_UTIL
                       : metric.metricId == 3  ? "sm_occupancy"     // .._SM_OCCUPANCY
                       : metric.metricId == 5  ? "tensor_activity"  // .._ANY_TENSOR_UTIL
                       : metric.metricId == 10 ? "dram_bw"          // .._DRAM_BW_UTIL
                                               : nullptr;
    const std::string* value = name != nullptr ? script.find(key(name, gpu)) : nullptr;
    metric.metricInfo = {nullptr, nullptr, nullptr};
    if (value == nullptr) {
      metric.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      metric.value = 0;
    } else {
      metric.nvmlReturn = NVML_SUCCESS;
      metric.value = std::strtod(value->c_str(), nullptr);
    }
  }
  return NVML_SUCCESS;
}

// --- For tests -------------------------------------------------------------------------------

FAKE_EXPORT int fake_nvml_init_count(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_init_count;
}

FAKE_EXPORT int fake_nvml_live_gpm_samples(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return static_cast<int>(g_samples.size());
}

FAKE_EXPORT int fake_nvml_calls(const char* symbol) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = g_calls.find(symbol);
  return it == g_calls.end() ? 0 : it->second;
}

FAKE_EXPORT void fake_nvml_reset(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_init_count = 0;
  g_calls.clear();
  for (nvmlGpmSample_t sample : g_samples) delete sample;
  g_samples.clear();
  g_sample_seq = 0;
}
