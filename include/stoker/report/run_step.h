// stoker/report/run_step.h — the step a training run has reached: the horizontal axis of every
// TensorBoard series of the run, the monitor's samples included (stoker/report/monitor_events.h
// says where a sample goes before a loop counts steps).
//
//   auto step = std::make_shared<report::RunStep>(resumed_global_step);  // 0 for a new run
//   sampler.add_sink(report::monitor_events_sink(events, stopped, step));
//   ... after each step:  step->reach(global_step);
//
// It starts where the run starts: 0, or the step a resumed run goes on from (the checkpoint's
// global step in stoker train; a resumed stoker.DataLoader's place in Python, which resume_at()
// may also give later), so that a resumed run's series continue the preempted run's instead of
// being drawn over them. It never goes back: reach() or resume_at() with a count below the one
// reached changes nothing, so a second loop counting from 0 cannot pull the axis back.
// Thread safety: every member may be called from any thread (the training loop reaches, the
// sampler thread reads).
#pragma once

#include <atomic>
#include <cstdint>

namespace stoker::report {

class RunStep {
 public:
  explicit RunStep(int64_t start = 0) : steps_(start) {}
  RunStep(const RunStep&) = delete;
  RunStep& operator=(const RunStep&) = delete;

  // A loop counting the run's steps has finished `steps` (a larger count than reached so far
  // moves the axis on): from the first call on, counting() is true.
  void reach(int64_t steps) {
    counting_.store(true, std::memory_order_relaxed);
    raise(steps);
  }
  // The run resumes after `steps` steps (a resumed loader's place, known after the start): as
  // reach(), but no loop counts yet.
  void resume_at(int64_t steps) { raise(steps); }
  // The steps finished so far: the step a figure measured now is written at.
  int64_t now() const { return steps_.load(std::memory_order_relaxed); }
  // Whether a loop has counted steps (reach()); until then the axis is only the run's start.
  bool counting() const { return counting_.load(std::memory_order_relaxed); }

 private:
  void raise(int64_t steps) {
    int64_t seen = steps_.load(std::memory_order_relaxed);
    while (steps > seen && !steps_.compare_exchange_weak(seen, steps, std::memory_order_relaxed)) {
    }
  }

  std::atomic<int64_t> steps_;
  std::atomic<bool> counting_{false};
};

}  // namespace stoker::report
