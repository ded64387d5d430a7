#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stoker/data/loader_keys.h"
#include "stoker/diagnose/tune.h"

namespace stoker::diagnose {

WorkerTuner::WorkerTuner(int start_workers, TunerLimits limits) : limits_(limits) {
  limits_.min_workers = std::max(1, limits_.min_workers);
  limits_.max_workers = std::max(limits_.min_workers, limits_.max_workers);
  workers_ = std::clamp(start_workers, limits_.min_workers, limits_.max_workers);
}

int WorkerTuner::prefetch() const {
  int depth = data::buffers_in_flight(limits_.prefetch_factor, workers_);
  if (limits_.ram_budget_bytes > 0 && limits_.batch_bytes > 0) {
    const int affordable = static_cast<int>(limits_.ram_budget_bytes / limits_.batch_bytes);
    depth = std::max(2, std::min(depth, affordable));
  }
  return depth;
}

TuneAction WorkerTuner::change_to(int workers, std::string reason) {
  trial_from_ = workers_;
  workers_ = workers;
  settling_ = true;
  return {true, workers_, prefetch(), std::move(reason)};
}

TuneAction WorkerTuner::observe(const TuneWindow& w) {
  TuneAction none{false, workers_, prefetch(), ""};
  if (settling_) {  // the queue is refilling after a change; judge the next window
    settling_ = false;
    return none;
  }
  rates_[workers_] = w.samples_per_s;  // the latest figure: the load drifts over epochs

  // The load changed a lot since a count was rejected: those verdicts are stale.
  if (rejected_wait_ >= 0 && std::fabs(w.wait_share - rejected_wait_) >= 0.10) {
    rejected_.clear();
    rejected_wait_ = -1;
  }

  if (trial_from_ > 0) {  // judge the change just made
    const int from = trial_from_;
    trial_from_ = 0;
    const double before = rates_[from];
    const bool grew = workers_ > from;
    const bool keep =
        grew ? w.samples_per_s >= before * (1 + limits_.min_gain) : w.samples_per_s >= before * (1 - limits_.min_gain);
    if (!keep) {
      rejected_[workers_] = true;
      rejected_wait_ = w.wait_share;
      const int tried = workers_;
      workers_ = from;
      settling_ = true;
      return {true, workers_, prefetch(),
              fmt::format("{} workers gave {:.0f} samples/s vs {:.0f} with {} → back to {}", tried, w.samples_per_s,
                          before, from, from)};
    }
    // Kept: fall through and consider the next step from here.
  }

  if (w.wait_share >= limits_.input_wait_share && workers_ < limits_.max_workers && !rejected_[workers_ + 1]) {
    return change_to(workers_ + 1, fmt::format("waiting {:.0f} % of step time at {:.0f} samples/s → trying {} workers",
                                               100 * w.wait_share, w.samples_per_s, workers_ + 1));
  }
  if (w.wait_share < limits_.input_wait_share / 5 && w.worker_idle_share >= limits_.idle_share &&
      workers_ > limits_.min_workers && !rejected_[workers_ - 1]) {
    return change_to(workers_ - 1, fmt::format("workers idle {:.0f} % of their time, no waiting → trying {} workers",
                                               100 * w.worker_idle_share, workers_ - 1));
  }
  return none;
}

}  // namespace stoker::diagnose
