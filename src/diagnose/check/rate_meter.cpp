#include <algorithm>
#include <cmath>

#include "stoker/core/clock.h"
#include "stoker/diagnose/check.h"

namespace stoker::diagnose::check {

RateMeter::RateMeter(double budget_s, int windows)
    : start_ns_(now_ns()),
      window_start_ns_(start_ns_),
      window_ns_(std::max<int64_t>(1, std::llround(budget_s * 1e9 / std::max(1, windows)))),
      budget_ns_(std::llround(std::max(0.0, budget_s) * 1e9)) {}

bool RateMeter::add(double work) {
  const int64_t t = now_ns();
  total_ += work;
  window_work_ += work;
  seconds_ = ns_to_seconds(t - start_ns_);
  if (t - window_start_ns_ >= window_ns_) {
    best_ = std::max(best_, window_work_ / ns_to_seconds(t - window_start_ns_));
    ++complete_windows_;
    window_start_ns_ = t;
    window_work_ = 0;
  }
  return t - start_ns_ < budget_ns_;
}

double RateMeter::best_rate() const {
  if (complete_windows_ > 0) return best_;
  return seconds_ > 0 ? total_ / seconds_ : 0;
}

}  // namespace stoker::diagnose::check
