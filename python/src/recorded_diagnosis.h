// The diagnosis of a loop stoker.watch wraps, with its records: while a monitor runs, each
// logging window's samples/s and step-time shares go to the monitor's TensorBoard event file
// (the tags of stoker train, stoker/report/scalar_tags.h) and each pass's figures and verdict
// to the loops CSV beside its log (stoker/report/loop_records.h). A window closes where the
// diagnosis closes one (at least 2 s and 10 steps) and at the end of each pass; its warm-up
// steps (the first at each batch size) are left out, as from the shares the report prints.
// Nothing is written per step. A loop watched without a name moves the monitor's run step (the
// step its samples are written at) along with its own count. A write that fails says so once on
// stderr; the loop goes on.
// Single-threaded, as LoopDiagnosis: call from the training loop only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "monitor_handle.h"
#include "stoker/diagnose/loop_diagnosis.h"

namespace stoker::python {

class RecordedDiagnosis : public diagnose::LoopDiagnosis {
 public:
  using diagnose::LoopDiagnosis::LoopDiagnosis;

  // The monitor the next steps read and record to (nullptr: none), as LoopDiagnosis::set_monitor.
  void set_monitor_handle(MonitorHandle* monitor, int gpu_index);
  // Records the next passes as the loop `loop` ("" unnamed) of rank `rank`; until called, nothing
  // is recorded (a stoker.DataLoader iterated unwatched). An unnamed loop counts the monitor's
  // run step from here on (RunStep::reach).
  void record_as(std::string loop, int rank);
  // The step count the windows' TensorBoard step goes on from, where no step was counted yet:
  // a resumed loop's (its epoch times the batches of an epoch, plus the batch it resumes at), so
  // that its step_time/* continue the run's axis. Once a step is counted, changes nothing. The
  // monitor's run step goes there too (an unnamed loop's).
  void resume_steps_at(int64_t steps);
  // LoopDiagnosis::after_step, the step added to the open window, the window written when the
  // diagnosis closed one.
  std::vector<std::string> step(double wait_s, double copy_s, double compute_s, int64_t samples);
  // The pass `epoch` (its number as printed) ended: the rest of its window and its row written.
  void end_pass(int64_t epoch);

 private:
  void write_window();
  // An unnamed loop recorded to a monitor: its step count is the run's (RunStep::reach).
  void reach_run_step();

  MonitorHandle* monitor_ = nullptr;
  bool recording_ = false;
  std::string loop_;
  int rank_ = 0;
  int64_t steps_ = 0;     // every step so far, across passes (from resume_steps_at's): the windows' TensorBoard step
  bool counted_ = false;  // a step was counted: resume_steps_at changes nothing
  diagnose::WarmUpShapes shapes_;
  diagnose::StepWindow window_;  // the steps since the last window written, warm-up left out
  bool loops_said_ = false;      // a failed loops CSV write was said (the event file stops by itself)
};

}  // namespace stoker::python
