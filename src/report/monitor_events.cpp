#include "stoker/report/monitor_events.h"

#include <algorithm>
#include <utility>

#include "stoker/report/scalar_tags.h"

namespace stoker::report {

monitor::SampleSink monitor_events_sink(std::shared_ptr<EventFile> events,
                                        std::function<void(const std::string& reason)> stopped,
                                        std::shared_ptr<const RunStep> step) {
  return [events = std::move(events), stopped = std::move(stopped), step = std::move(step),
          last = int64_t{-1}](const monitor::Sample& sample) mutable {
    const double wall_time = sample.unix_ns > 0 ? static_cast<double>(sample.unix_ns) / 1e9 : -1;
    const int64_t after_last = step->counting() ? last : last + 1;  // a counted step is shared
    last = last < 0 ? step->now() : std::max(after_last, step->now());
    const Status status = events->write(last, monitor_scalars(sample), wall_time);
    if (!status.ok() && stopped) stopped(status.reason());
  };
}

}  // namespace stoker::report
