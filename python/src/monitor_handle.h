// One in-process monitor: a stoker::monitor::Sampler watching this process, with an optional
// log (CSV, or JSON lines for a path ending in .jsonl). Shared by the monitor and the
// diagnosis bindings. Thread safety: as monitor::Sampler's.
#pragma once

#include <memory>
#include <string>

#include "stoker/monitor/sampler.h"

namespace stoker::python {

class MonitorHandle {
 public:
  // Throws UsageError for an interval below 0.05 s or a log that cannot be written.
  MonitorHandle(double interval_s, const std::string& log_path, bool gpu, const std::string& nvml_library);
  monitor::Sampler& sampler() { return *sampler_; }

 private:
  std::unique_ptr<monitor::Sampler> sampler_;
};

}  // namespace stoker::python
