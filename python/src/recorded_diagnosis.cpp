#include "recorded_diagnosis.h"

#include <cstdio>
#include <utility>

#include "stoker/report/scalar_tags.h"

namespace stoker::python {

void RecordedDiagnosis::set_monitor_handle(MonitorHandle* monitor, int gpu_index) {
  set_monitor(monitor != nullptr ? &monitor->sampler() : nullptr, gpu_index);
  monitor_ = monitor;
}

void RecordedDiagnosis::record_as(std::string loop, int rank) {
  recording_ = true;
  loop_ = std::move(loop);
  rank_ = rank;
  reach_run_step();  // an unnamed loop counts the run's steps from its pass's start
}

void RecordedDiagnosis::resume_steps_at(int64_t steps) {
  if (!counted_) steps_ = steps;
  reach_run_step();
}

void RecordedDiagnosis::reach_run_step() {
  if (recording_ && loop_.empty() && monitor_ != nullptr) monitor_->run_step().reach(steps_);
}

std::vector<std::string> RecordedDiagnosis::step(double wait_s, double copy_s, double compute_s, int64_t samples) {
  std::vector<std::string> lines = after_step(wait_s, copy_s, compute_s, samples);
  ++steps_;
  counted_ = true;
  reach_run_step();
  if (!shapes_.first(samples)) {
    window_.wait_s += wait_s;
    window_.copy_s += copy_s;
    window_.compute_s += compute_s;
    window_.steps += 1;
    window_.samples += samples;
  }
  if (window_closed()) write_window();
  return lines;
}

void RecordedDiagnosis::write_window() {
  const diagnose::StepWindow w = std::exchange(window_, {});
  if (!recording_ || monitor_ == nullptr || monitor_->events() == nullptr || w.steps == 0) return;
  const Status status =
      monitor_->events()->write(steps_, report::step_time_scalars(loop_, w.samples, w.wait_s, w.copy_s, w.compute_s));
  if (!status.ok()) {
    std::fprintf(stderr, "stoker.watch: TensorBoard logging stopped: %s; the loop goes on\n", status.reason().c_str());
  }
}

void RecordedDiagnosis::end_pass(int64_t epoch) {
  write_window();
  const diagnose::StepWindow& all = epoch_window();
  if (!recording_ || monitor_ == nullptr || monitor_->loops() == nullptr || all.steps == 0) return;
  report::LoopEpoch row;
  row.loop = loop_;
  row.rank = rank_;
  row.epoch = epoch;
  row.steps = all.steps;
  row.samples = all.samples;
  row.wait_s = all.wait_s;
  row.copy_s = all.copy_s;
  row.compute_s = all.compute_s;
  const diagnose::Verdict v = diagnose::classify(epoch_judged_window());
  row.wait_share = v.wait_share;
  row.copy_share = v.copy_share;
  row.compute_share = v.compute_share;
  if (epoch_judged()) row.verdict = diagnose::verdict_name(v);
  const Status status = monitor_->loops()->write(row);
  if (!status.ok() && !loops_said_) {
    loops_said_ = true;
    std::fprintf(stderr, "stoker.watch: recording the loop's passes stopped: %s; the loop goes on\n",
                 status.reason().c_str());
  }
}

}  // namespace stoker::python
