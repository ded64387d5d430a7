// stoker/report/monitor_events.h — the monitor's samples into a TensorBoard event file, for
// stoker train and the Python package's stoker.monitor alike.
//
//   auto events = std::make_shared<report::EventFile>("runs/x/tb");
//   sampler.add_sink(report::monitor_events_sink(events, [](const std::string& why) { ... }));
//
// Each sample becomes one Event: monitor_scalars() (stoker/report/scalar_tags.h) at step 0,
// 1, 2, ... and the sample's wall time. When a write fails, `stopped` is called once, with the
// reason, and the sink writes no more (EventFile's contract).
// Thread safety: the sink runs on the sampler thread; it shares `events` (thread-safe) with
// whoever else writes to it, and keeps it alive as long as the sampler holds the sink.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "stoker/monitor/sampler.h"
#include "stoker/report/event_file.h"

namespace stoker::report {

monitor::SampleSink monitor_events_sink(std::shared_ptr<EventFile> events,
                                        std::function<void(const std::string& reason)> stopped);

}  // namespace stoker::report
