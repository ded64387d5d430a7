// One in-process monitor: a stoker::monitor::Sampler watching this process, with an optional
// log (CSV, or JSON lines for a path ending in .jsonl) and the watched loops' CSV beside it
// (stoker/report/loop_records.h), and an optional TensorBoard event file, which the watched
// loops' windows go to as well, and the run's step its samples are written along (the step
// count of the loops watched without a name: stoker/report/run_step.h). Shared by the monitor
// and the diagnosis bindings.
// Thread safety: as monitor::Sampler's; the event file and the loops CSV serialise their writes.
#pragma once

#include <memory>
#include <string>

#include "stoker/monitor/sampler.h"
#include "stoker/report/event_file.h"
#include "stoker/report/loop_records.h"
#include "stoker/report/run_step.h"

namespace stoker::python {

class MonitorHandle {
 public:
  // Throws UsageError for an interval below 0.05 s or a log that cannot be written, and
  // SystemError for a TensorBoard folder ("" = none) that cannot be made.
  MonitorHandle(double interval_s, const std::string& log_path, bool gpu, const std::string& nvml_library,
                const std::string& tensorboard_folder);
  monitor::Sampler& sampler() { return *sampler_; }
  // The event file's path; "" without one.
  std::string tensorboard_file() const { return tensorboard_ ? tensorboard_->path() : ""; }
  // The event file (nullptr without one) and the loops CSV (nullptr without a log).
  report::EventFile* events() { return tensorboard_.get(); }
  report::LoopsCsv* loops() { return loops_.get(); }
  // The step the run has reached: the axis its samples are written along (report/monitor_events.h).
  report::RunStep& run_step() { return *run_step_; }

 private:
  std::shared_ptr<report::EventFile> tensorboard_;                                   // shared with the sampler's sink
  std::shared_ptr<report::RunStep> run_step_ = std::make_shared<report::RunStep>();  // 〃
  std::unique_ptr<report::LoopsCsv> loops_;
  std::unique_ptr<monitor::Sampler> sampler_;
};

}  // namespace stoker::python
