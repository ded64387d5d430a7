#include "monitor/gpu/gpm_sampler.h"

#include <cstring>
#include <utility>

namespace stoker::monitor {
namespace {

constexpr const char* kGpmSource = "nvml-gpm";

// What each of last_[] holds.
constexpr unsigned int kMetricIds[] = {NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
                                       NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_DRAM_BW_UTIL};
constexpr unsigned int kMetricCount = sizeof kMetricIds / sizeof kMetricIds[0];

}  // namespace

std::unique_ptr<GpmSampler> GpmSampler::create(const NvmlFunctions& fn, nvmlDevice_t device) {
  if (!fn.has_gpm()) return nullptr;
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  if (fn.gpm_query_device_support(device, &support) != NVML_SUCCESS || support.isSupportedDevice == 0) {
    return nullptr;
  }
  nvmlGpmSample_t a = nullptr;
  nvmlGpmSample_t b = nullptr;
  if (fn.gpm_sample_alloc(&a) != NVML_SUCCESS) return nullptr;
  if (fn.gpm_sample_alloc(&b) != NVML_SUCCESS) {
    fn.gpm_sample_free(a);
    return nullptr;
  }
  return std::unique_ptr<GpmSampler>(new GpmSampler(fn, device, a, b));
}

GpmSampler::GpmSampler(const NvmlFunctions& fn, nvmlDevice_t device, nvmlGpmSample_t a, nvmlGpmSample_t b)
    : fn_(fn), device_(device), base_(a), spare_(b), request_(new nvmlGpmMetricsGet_t) {}

GpmSampler::~GpmSampler() {
  fn_.gpm_sample_free(base_);
  fn_.gpm_sample_free(spare_);
}

bool GpmSampler::compute() {
  nvmlGpmMetricsGet_t& request = *request_;
  std::memset(&request, 0, sizeof request);
  request.version = NVML_GPM_METRICS_GET_VERSION;
  request.numMetrics = kMetricCount;
  request.sample1 = base_;
  request.sample2 = spare_;
  for (unsigned int i = 0; i < kMetricCount; ++i) request.metrics[i].metricId = kMetricIds[i];
  if (fn_.gpm_metrics_get(&request) != NVML_SUCCESS) return false;
  // Each metric has its own status: a GPU may lack one (no tensor cores) and have the rest.
  for (unsigned int i = 0; i < kMetricCount; ++i) {
    const nvmlGpmMetric_t& metric = request.metrics[i];
    if (metric.nvmlReturn == NVML_SUCCESS) {
      last_[i].set(metric.value, kGpmSource);
    } else {
      last_[i].clear();
    }
  }
  return true;
}

void GpmSampler::sample(int64_t now_ns, GpuSample* out) {
  if (!have_base_) {
    have_base_ = fn_.gpm_sample_get(device_, base_) == NVML_SUCCESS;
    base_ns_ = now_ns;
  } else if (now_ns - base_ns_ >= kMinWindowNs) {
    if (fn_.gpm_sample_get(device_, spare_) != NVML_SUCCESS) {
      // Keep the base: the next attempt gets a longer window, which is still valid.
      for (Reading& r : last_) r.clear();
    } else {
      if (!compute()) {
        for (Reading& r : last_) r.clear();
      }
      std::swap(base_, spare_);
      base_ns_ = now_ns;
    }
  }
  out->sm_activity_percent = last_[0];
  out->sm_occupancy_percent = last_[1];
  out->tensor_activity_percent = last_[2];
  out->dram_bandwidth_percent = last_[3];
}

}  // namespace stoker::monitor
