#include "monitor/gpu/utilization_samples.h"

#include <algorithm>

namespace stoker::monitor {
namespace {

// A sample's value as the driver typed it; nullopt for a type this build does not know.
std::optional<double> value_of(const nvmlValue_t& v, nvmlValueType_t type) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return static_cast<double>(v.uiVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return static_cast<double>(v.siVal);
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return static_cast<double>(v.usVal);
  }
  return std::nullopt;
}

// Answers that mean the device keeps no such buffer: asking again would not help.
bool unsupported(nvmlReturn_t r) { return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND; }

}  // namespace

UtilizationSamples::UtilizationSamples(const NvmlFunctions& fn, nvmlDevice_t device, nvmlSamplingType_t type)
    : fn_(fn), device_(device), type_(type), supported_(fn.device_get_samples != nullptr) {}

std::optional<double> UtilizationSamples::mean_since_last() {
  if (!supported_) return std::nullopt;
  nvmlValueType_t type{};
  unsigned int count = 0;
  nvmlReturn_t r = fn_.device_get_samples(device_, type_, seen_us_, &type, &count, nullptr);
  if (r == NVML_SUCCESS && count > 0) {
    buffer_.resize(count);
    r = fn_.device_get_samples(device_, type_, seen_us_, &type, &count, buffer_.data());
  }
  if (r != NVML_SUCCESS) {  // NVML_ERROR_NOT_FOUND: nothing newer
    if (unsupported(r)) supported_ = false;
    return std::nullopt;
  }
  double sum = 0;
  int n = 0;
  unsigned long long newest = seen_us_;
  for (unsigned int i = 0; i < std::min<size_t>(count, buffer_.size()); ++i) {
    const nvmlSample_t& sample = buffer_[i];
    if (sample.timeStamp <= seen_us_) continue;  // the driver's filter, checked
    const std::optional<double> value = value_of(sample.sampleValue, type);
    if (!value) {
      supported_ = false;
      return std::nullopt;
    }
    sum += *value;
    ++n;
    newest = std::max(newest, sample.timeStamp);
  }
  seen_us_ = newest;
  const bool first = !started_;
  started_ = true;
  if (first || n == 0) return std::nullopt;
  return sum / n;
}

}  // namespace stoker::monitor
