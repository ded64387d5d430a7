#include "train/torch/run/tensorboard_log.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "stoker/report/monitor_events.h"
#include "stoker/report/scalar_tags.h"

namespace stoker::train {

namespace {

void say_stopped(const std::string& reason) {
  std::fprintf(stderr, "warning: TensorBoard logging stopped: %s; training goes on (its other records are kept)\n",
               reason.c_str());
}

}  // namespace

TensorBoardLog::TensorBoardLog(const std::string& run_dir, int64_t start_step)
    : step_(std::make_shared<report::RunStep>()) {
  step_->reach(start_step);  // its optimizer steps count from the start: no sample is numbered
  try {
    events_ = std::make_shared<report::EventFile>((std::filesystem::path(run_dir) / "tb").string());
  } catch (const Error& e) {
    say_stopped(e.what());
  }
}

void TensorBoardLog::attach(monitor::Sampler& monitor) {
  if (events_) monitor.add_sink(report::monitor_events_sink(events_, say_stopped, step_));
}

std::string TensorBoardLog::path() const { return events_ ? events_->path() : ""; }

void TensorBoardLog::write(int64_t step, const std::vector<report::Scalar>& scalars) {
  if (!events_) return;
  const Status status = events_->write(step, scalars);
  if (!status.ok()) say_stopped(status.reason());
}

void TensorBoardLog::window(int64_t step, const LogWindow& w, double lr) {
  using namespace report::tags;
  std::vector<report::Scalar> scalars;
  if (w.losses > 0) scalars.push_back({kTrainLoss, w.loss_sum / static_cast<double>(w.losses)});
  if (lr >= 0) scalars.push_back({kTrainLr, lr});
  for (report::Scalar& s : report::step_time_scalars("", w.samples, w.wait_s, w.copy_s, w.compute_s))
    scalars.push_back(std::move(s));
  if (w.grad_norms > 0) scalars.push_back({kTrainGradNorm, w.grad_norm_sum / static_cast<double>(w.grad_norms)});
  write(step, scalars);
}

void TensorBoardLog::epoch(int64_t step, const EpochRecord& r) {
  using namespace report::tags;
  std::vector<report::Scalar> scalars = {{kEpochTrainLoss, r.train_loss}};
  if (r.train_top1 >= 0) scalars.push_back({kEpochTrainTop1, r.train_top1});
  scalars.push_back({kEpochSamplesPerSec, r.samples_per_sec()});
  const EvalResult& eval = r.eval;
  if (eval.samples > 0) scalars.push_back({kValLoss, eval.loss});
  if (eval.top1 >= 0) scalars.push_back({kValTop1, eval.top1});
  if (eval.top5 >= 0) scalars.push_back({kValTop5, eval.top5});
  if (eval.auc >= 0) scalars.push_back({kValAuc, eval.auc});
  if (!eval.mae.empty()) scalars.push_back({kValMae, eval.mean_mae()});
  if (r.ema_eval && r.ema_eval->samples > 0) {
    const EvalResult& ema = *r.ema_eval;
    scalars.push_back({kEmaValLoss, ema.loss});
    if (ema.top1 >= 0) scalars.push_back({kEmaValTop1, ema.top1});
    if (!ema.mae.empty()) scalars.push_back({kEmaValMae, ema.mean_mae()});
  }
  write(step, scalars);
}

}  // namespace stoker::train
