// monitor/gpu/nvml_api.h — the subset of NVML's C ABI that stoker calls, declared here so
// that building stoker needs no nvml.h (NVML is loaded with dlopen; see nvml_library.h).
//
// Copied from NVIDIA's nvml.h (API version 12, CUDA 12.x; the GPM part is unchanged in 13.x):
// names, enum values and struct layouts must match it exactly, since nothing checks them at
// build time. The names stay NVML's own, at global scope as nvml.h has them, so that this
// file reads against the documentation. Only the types stoker uses are here.
#pragma once

#include <cstddef>
#include <cstdint>

// --- Return codes -------------------------------------------------------------------------

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,  // the library has the symbol, the driver lacks it
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,  // a versioned struct's version field is wrong
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

// Some fields take this value when the figure is unknown (usedGpuMemory under WDDM, ...).
// nvml.h defines it as (-1); stored in an unsigned long long that is all ones.
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

// Versioned structs carry their size and version in their first field:
// NVML_STRUCT_VERSION(data, ver) = sizeof(nvml<data>_v<ver>_t) | (ver << 24).
template <typename Struct>
constexpr unsigned int nvml_struct_version(unsigned int ver) {
  return static_cast<unsigned int>(sizeof(Struct)) | (ver << 24U);
}

// --- Handles -------------------------------------------------------------------------------

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

// --- Buffer sizes --------------------------------------------------------------------------

inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;

// --- Enums ---------------------------------------------------------------------------------

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlPcieUtilCounter_enum {
  NVML_PCIE_UTIL_TX_BYTES = 0,  // value in KB/s
  NVML_PCIE_UTIL_RX_BYTES = 1
} nvmlPcieUtilCounter_t;

typedef enum nvmlSamplingType_enum {
  NVML_TOTAL_POWER_SAMPLES = 0,
  NVML_GPU_UTILIZATION_SAMPLES = 1,  // % of each sample period in which a kernel ran
  NVML_MEMORY_UTILIZATION_SAMPLES = 2,
} nvmlSamplingType_t;

typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
} nvmlValueType_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlSample_st {
  unsigned long long timeStamp;  // CPU time, µs
  nvmlValue_t sampleValue;
} nvmlSample_t;
static_assert(sizeof(nvmlSample_t) == 16);

// nvmlClocksEventReasons (formerly nvmlClocksThrottleReasons; same bits).
inline constexpr unsigned long long nvmlClocksEventReasonGpuIdle = 0x1ULL;
inline constexpr unsigned long long nvmlClocksEventReasonApplicationsClocksSetting = 0x2ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSwPowerCap = 0x4ULL;
inline constexpr unsigned long long nvmlClocksEventReasonHwSlowdown = 0x8ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSyncBoost = 0x10ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long nvmlClocksEventReasonHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long nvmlClocksEventReasonHwPowerBrakeSlowdown = 0x80ULL;
inline constexpr unsigned long long nvmlClocksEventReasonDisplayClockSetting = 0x100ULL;

// GPM metric identifiers (nvmlGpmMetricId_t). Note 1 is GRAPHICS_UTIL, not SM activity.
inline constexpr unsigned int NVML_GPM_METRIC_GRAPHICS_UTIL = 1;
inline constexpr unsigned int NVML_GPM_METRIC_SM_UTIL = 2;       // share of SMs busy
inline constexpr unsigned int NVML_GPM_METRIC_SM_OCCUPANCY = 3;  // resident warps / max
inline constexpr unsigned int NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5;
inline constexpr unsigned int NVML_GPM_METRIC_DRAM_BW_UTIL = 10;
// nvml.h's NVML_GPM_METRIC_MAX was 98 in early CUDA 12 headers and is 333 in later ones, with
// the struct version left at 1: the library reads only numMetrics entries, so any array size that
// holds what we ask for is right. We use the larger.
inline constexpr unsigned int NVML_GPM_METRIC_MAX = 333;

// --- Structs -------------------------------------------------------------------------------

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // % of the last period in which a kernel ran
  unsigned int memory;  // % of the last period in which device memory was read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {  // v1: used includes the driver's reservation
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
  unsigned int version;  // nvmlMemory_v2
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;  // excludes `reserved`, as nvidia-smi shows it
} nvmlMemory_v2_t;
inline constexpr unsigned int nvmlMemory_v2 = nvml_struct_version<nvmlMemory_v2_t>(2);

// Running-process entries. The plain (unversioned) functions fill v1; _v2 and _v3 fill v2.
typedef struct nvmlProcessInfo_v1_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or NVML_VALUE_NOT_AVAILABLE
} nvmlProcessInfo_v1_t;

typedef struct nvmlProcessInfo_v2_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;      // MIG only, else 0xFFFFFFFF
  unsigned int computeInstanceId;  // MIG only, else 0xFFFFFFFF
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

// What drivers 535.43 to 535.86 wrote through the _v3 functions, without a version bump.
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;

typedef struct {
  unsigned int metricId;    // IN: NVML_GPM_METRIC_*
  nvmlReturn_t nvmlReturn;  // OUT: status of this metric; value valid only on NVML_SUCCESS
  double value;             // OUT
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // OUT: may be null
} nvmlGpmMetric_t;

typedef struct {
  unsigned int version;     // NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;  // entries of metrics[] to fill
  nvmlGpmSample_t sample1;  // the older sample
  nvmlGpmSample_t sample2;  // the newer sample
  nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
// A plain 1, not NVML_STRUCT_VERSION: this struct predates that scheme.
inline constexpr unsigned int NVML_GPM_METRICS_GET_VERSION = 1;

typedef struct {
  unsigned int version;            // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;  // OUT
} nvmlGpmSupport_t;
inline constexpr unsigned int NVML_GPM_SUPPORT_VERSION = 1;

// The layouts above, as nvml.h has them on LP64 Linux.
static_assert(sizeof(nvmlReturn_t) == 4);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && nvmlMemory_v2 == 0x02000028U);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(sizeof(nvmlProcessDetail_v1_t) == 32);
static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);

// --- Functions -----------------------------------------------------------------------------
// Types of the functions stoker resolves, named after the symbol without the "nvml" prefix.

namespace stoker::monitor::nvml_fn {

using Init = nvmlReturn_t();
using Shutdown = nvmlReturn_t();
using ErrorString = const char*(nvmlReturn_t result);
using SystemGetString = nvmlReturn_t(char* buffer, unsigned int length);
using DeviceGetCount = nvmlReturn_t(unsigned int* count);
using DeviceGetHandleByIndex = nvmlReturn_t(unsigned int index, nvmlDevice_t* device);
using DeviceGetString = nvmlReturn_t(nvmlDevice_t device, char* buffer, unsigned int length);
using DeviceGetUtilizationRates = nvmlReturn_t(nvmlDevice_t device, nvmlUtilization_t* out);
using DeviceGetMemoryInfo = nvmlReturn_t(nvmlDevice_t device, nvmlMemory_t* out);
using DeviceGetMemoryInfoV2 = nvmlReturn_t(nvmlDevice_t device, nvmlMemory_v2_t* out);
using DeviceGetUint = nvmlReturn_t(nvmlDevice_t device, unsigned int* out);  // mW
using DeviceGetTemperature = nvmlReturn_t(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* out);
using DeviceGetClockInfo = nvmlReturn_t(nvmlDevice_t device, nvmlClockType_t type, unsigned int* out);
using DeviceGetClocksEventReasons = nvmlReturn_t(nvmlDevice_t device, unsigned long long* out);
using DeviceGetPcieThroughput = nvmlReturn_t(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* out);
// The driver's buffered samples newer than `last_seen_us`: `samples` null asks for the count.
using DeviceGetSamples = nvmlReturn_t(nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long last_seen_us,
                                      nvmlValueType_t* value_type, unsigned int* count, nvmlSample_t* samples);
// `infos` points to nvmlProcessInfo_v1_t or _v2_t entries depending on the symbol; see
// ProcessListFn in nvml_library.h.
using DeviceGetRunningProcesses = nvmlReturn_t(nvmlDevice_t device, unsigned int* count, void* infos);
using GpmQueryDeviceSupport = nvmlReturn_t(nvmlDevice_t device, nvmlGpmSupport_t* out);
using GpmSampleAlloc = nvmlReturn_t(nvmlGpmSample_t* out);
using GpmSampleFree = nvmlReturn_t(nvmlGpmSample_t sample);
using GpmSampleGet = nvmlReturn_t(nvmlDevice_t device, nvmlGpmSample_t sample);
using GpmMetricsGet = nvmlReturn_t(nvmlGpmMetricsGet_t* metrics);

}  // namespace stoker::monitor::nvml_fn
