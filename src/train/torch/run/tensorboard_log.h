// The run folder's TensorBoard event files (tb/, stoker/report/event_file.h): per logging
// window the loss, learning rate, samples/s, step-time split and gradient norm; per epoch the
// figures of its metrics.csv row; per monitor sample the GPU, CPU and RAM figures (tags:
// stoker/report/scalar_tags.h), every one at the optimizer step the run had reached (a resumed
// run's continue the preempted run's). TensorBoard logging never stops training: when the folder
// cannot be made or a write fails (disk full), one line on stderr says so and why, and
// logging is off from there on.
// Thread safety: window(), epoch() and reached() from the training loop's thread; the monitor's
// sink runs on the sampler's thread (the event file serialises the two; the run step is atomic).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "stoker/monitor/sampler.h"
#include "stoker/report/event_file.h"
#include "stoker/report/run_step.h"
#include "train/torch/run/run_records.h"

namespace stoker::train {

// The steps since the last logging window was written.
struct LogWindow {
  int64_t steps = 0;
  int64_t samples = 0;
  double wait_s = 0, copy_s = 0, compute_s = 0;
  double loss_sum = 0;
  int64_t losses = 0;  // finite ones
  double grad_norm_sum = 0;
  int64_t grad_norms = 0;

  void add_grad_norm(double norm) {
    if (norm < 0) return;  // not measured
    grad_norm_sum += norm;
    ++grad_norms;
  }
  double total_s() const { return wait_s + copy_s + compute_s; }
};

class TensorBoardLog {
 public:
  // Opens <run_dir>/tb/ and a new event file in it; when it cannot, says why once and stays off.
  // `start_step`: the optimizer steps the run had taken when it started (a resumed run's).
  TensorBoardLog(const std::string& run_dir, int64_t start_step);

  // Sends `monitor`'s samples to the event file too (before monitor.start()), each at the
  // step reached when it is taken.
  void attach(monitor::Sampler& monitor);
  // The run has taken `step` optimizer steps: the monitor's samples from now are at it.
  void reached(int64_t step) { step_->reach(step); }
  // The window's scalars at optimizer step `step`; `lr` < 0: none yet.
  void window(int64_t step, const LogWindow& w, double lr);
  // The epoch's scalars (those of its metrics.csv row) at optimizer step `step`.
  void epoch(int64_t step, const EpochRecord& record);
  // The event file's path; "" when logging is off.
  std::string path() const;

 private:
  void write(int64_t step, const std::vector<report::Scalar>& scalars);

  std::shared_ptr<report::EventFile> events_;  // null: off
  std::shared_ptr<report::RunStep> step_;      // shared with the monitor's sink
};

}  // namespace stoker::train
