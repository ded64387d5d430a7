// stoker/report/monitor_events.h — the monitor's samples into a TensorBoard event file, for
// stoker train and the Python package's stoker.monitor alike.
//
//   auto events = std::make_shared<report::EventFile>("runs/x/tb");
//   auto step = std::make_shared<report::RunStep>(start_step);
//   sampler.add_sink(report::monitor_events_sink(events, [](const std::string& why) { ... }, step));
//
// Each sample becomes one Event: monitor_scalars() (stoker/report/scalar_tags.h) and the
// sample's wall time, at a step that never decreases in the file:
//   - while no loop counts (!step->counting()): numbered, the first at step->now() (the run's
//     start) and each next one after the last (or at step->now() where that is further);
//   - once a loop counts: the step the run has reached (step->now(): the axis of the run's other
//     series, which a resumed run continues), or the last step written where that is further
//     (the samples numbered before the loop started). Several samples within one step share it.
// When a write fails, `stopped` is called once, with the reason, and the sink writes no more
// (EventFile's contract).
// Thread safety: the sink runs on the sampler thread; it shares `events` and `step` (both
// thread-safe) with whoever else writes to them, and keeps them alive as long as the sampler
// holds the sink.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "stoker/monitor/sampler.h"
#include "stoker/report/event_file.h"
#include "stoker/report/run_step.h"

namespace stoker::report {

monitor::SampleSink monitor_events_sink(std::shared_ptr<EventFile> events,
                                        std::function<void(const std::string& reason)> stopped,
                                        std::shared_ptr<const RunStep> step);

}  // namespace stoker::report
