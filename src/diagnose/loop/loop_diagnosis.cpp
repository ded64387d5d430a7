#include "stoker/diagnose/loop_diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "stoker/core/numbers.h"
#include "stoker/core/process.h"

namespace stoker::diagnose {

namespace {

constexpr double kWindowSeconds = 2.0;
constexpr int64_t kWindowSteps = 10;
// NVML clock-event reasons that cost speed: SW power cap, HW slowdown, SW thermal, HW
// thermal, HW power brake (idle and application-clock settings are not slowdowns).
constexpr uint64_t kSlowdownMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

void add(StepWindow& into, const StepWindow& w) {
  into.wait_s += w.wait_s;
  into.copy_s += w.copy_s;
  into.compute_s += w.compute_s;
  into.steps += w.steps;
  into.samples += w.samples;
}

StepWindow minus(StepWindow from, const StepWindow& w) {
  from.wait_s -= w.wait_s;
  from.copy_s -= w.copy_s;
  from.compute_s -= w.compute_s;
  from.steps -= w.steps;
  from.samples -= w.samples;
  return from;
}

// Warm-up steps above this share of their epoch's step time are named in the epoch report.
constexpr double kWarmupNoticeShare = 0.1;
// A step holding at least this share of its epoch's waiting is a stall (judge_epoch).
constexpr double kStallShare = 0.5;

}  // namespace

LoopDiagnosis::LoopDiagnosis(data::Loader* loader, const monitor::Sampler* monitor, int cores, int gpu_index,
                             bool auto_workers, int prefetch_factor, std::string dataset, data::FrontEnd words)
    : loader_(loader),
      monitor_(monitor),
      cores_(cores),
      gpu_index_(gpu_index),
      dataset_(std::move(dataset)),
      words_(words) {
  if (auto_workers && loader_ != nullptr) {
    TunerLimits limits;
    limits.max_workers = cores;
    limits.prefetch_factor = prefetch_factor;
    const data::LoaderOptions& o = loader->options();
    limits.batch_bytes = static_cast<double>(o.batch_size) * static_cast<double>(o.transform.sample_bytes());
    limits.ram_budget_bytes = 0.25 * free_ram_bytes();  // a quarter of what is free now
    tuner_.emplace(loader->workers(), limits);
  }
  window_start_ = epoch_start_ = stage_times();
}

void LoopDiagnosis::start_epoch() {
  epoch_ = {};  // windows run on across epochs: short epochs still fill them
  epoch_gpu_ = {};
  epoch_warmup_ = {};
  epoch_warmup_sizes_.clear();
  epoch_stall_ = {};
  run_start_in_epoch_ = false;
  epoch_start_ = stage_times();
}

namespace {

// What `sample` says of GPU `index`: its utilisation (< 0 unknown) and slowdown reasons.
std::pair<double, std::string> gpu_reading(const monitor::Sample& sample, int index) {
  std::pair<double, std::string> r{-1, ""};
  for (const auto& gpu : sample.gpus) {
    if (gpu.index != index) continue;
    if (gpu.util_gpu_percent.ok()) r.first = gpu.util_gpu_percent.value;
    if (gpu.throttle_reasons.ok()) {
      const auto slow = static_cast<uint64_t>(gpu.throttle_reasons.value) & kSlowdownMask;
      if (slow != 0) r.second = monitor::describe_throttle_reasons(slow);
    }
  }
  return r;
}

}  // namespace

void LoopDiagnosis::set_monitor(const monitor::Sampler* monitor, int gpu_index) {
  if (monitor == monitor_ && gpu_index == gpu_index_) return;
  monitor_ = monitor;
  gpu_index_ = gpu_index;
  samples_seen_ = monitor != nullptr ? monitor->samples_published() : 0;  // only its samples from now on
}

void LoopDiagnosis::observe_monitor() {
  if (gpu_index_ < 0 || monitor_ == nullptr) return;
  const uint64_t published = monitor_->samples_published();  // every step: a load, no copy
  if (published == samples_seen_) return;
  samples_seen_ = published;
  const auto [util, slowdown] = gpu_reading(monitor_->latest(), gpu_index_);
  for (GpuSeen* seen : {&window_gpu_, &epoch_gpu_}) {
    if (util >= 0) {
      seen->util_sum += util;
      ++seen->samples;
    }
    if (!slowdown.empty()) seen->slowdown = slowdown;
  }
}

StepWindow LoopDiagnosis::with_monitor(StepWindow w, const GpuSeen& seen) const {
  if (gpu_index_ < 0 || monitor_ == nullptr || !monitor_->has_sample()) return w;
  if (seen.samples > 0) {
    w.gpu_util_percent = seen.util_sum / static_cast<double>(seen.samples);
    w.slowdown = seen.slowdown;
    return w;
  }
  const auto [util, slowdown] = gpu_reading(monitor_->latest(), gpu_index_);
  w.gpu_util_percent = util;
  w.slowdown = slowdown;
  return w;
}

PipelineEvidence pipeline_evidence(const data::StageTimes& d, const data::Loader& loader) {
  PipelineEvidence p;
  p.workers = loader.workers();
  p.prefetch_factor = std::max(1, static_cast<int>(loader.prefetch()) / std::max(1, p.workers));
  p.read_s = d.read;
  p.decode_s = d.decode;
  p.transform_s = d.transform;
  p.busy_worker_s = d.read + d.decode + d.transform;
  p.samples = static_cast<int64_t>(d.samples);
  p.decoded_bytes = static_cast<double>(d.decoded_bytes);
  p.dataset_samples = static_cast<int64_t>(loader.source().size());
  p.free_ram_bytes = free_ram_bytes();
  p.cache_on = loader.options().cache_decoded_bytes > 0;
  p.jpeg_samples = static_cast<int64_t>(d.jpeg_samples);
  p.spliced_samples = static_cast<int64_t>(d.spliced_samples);
  return p;
}

data::StageTimes LoopDiagnosis::stage_times() const {
  return loader_ != nullptr ? loader_->stage_times() : data::StageTimes{};
}

PipelineEvidence LoopDiagnosis::evidence(const data::StageTimes& d) const {
  PipelineEvidence p = loader_ != nullptr ? pipeline_evidence(d, *loader_) : PipelineEvidence{};
  p.cores = cores_;
  p.dataset = dataset_;
  p.cache_possible = cache_possible_;
  p.reads_in_python = reads_in_python_;
  p.reads_stream = reads_stream_;
  p.dataset_processes = dataset_processes_;
  if (monitor_ != nullptr && monitor_->has_sample()) {
    const monitor::Sample s = monitor_->latest();
    if (s.host.cpu_percent.ok()) p.cpu_percent = s.host.cpu_percent.value;
  }
  return p;
}

std::vector<std::string> LoopDiagnosis::after_step(double wait_s, double copy_s, double compute_s, int64_t samples) {
  const StepWindow step{wait_s, copy_s, compute_s, 1, samples, -1, ""};
  window_closed_ = false;
  observe_monitor();
  add(epoch_, step);
  std::vector<std::string> lines;
  const bool run_start = shapes_.none_yet();
  if (shapes_.first(samples)) {
    // Warm-up: the first step at this batch size is in no window. The run's first step is
    // also left out of the GPU utilisation seen so far (the device was starting up).
    if (run_start) {
      run_start_in_epoch_ = true;
      window_gpu_ = epoch_gpu_ = {};
      window_start_ = stage_times();
    }
    add(epoch_warmup_, step);
    epoch_warmup_sizes_.push_back(samples);
    return lines;
  }
  if (step.wait_s > epoch_stall_.wait_s) epoch_stall_ = step;
  add(window_, step);
  if (window_.total_s() < kWindowSeconds || window_.steps < kWindowSteps) return lines;

  const data::StageTimes now = stage_times();
  const data::StageTimes stages = now - window_start_;
  const StepWindow w = with_monitor(window_, window_gpu_);
  const PipelineEvidence p = evidence(stages);
  const Verdict v = classify(w);
  last_window_ = JudgedWindow{window_, window_gpu_, window_start_};
  const bool problem = v.kind != Bottleneck::kCompute && v.kind != Bottleneck::kUnknown;
  streak_steps_ = problem ? streak_steps_ + w.steps : 0;
  if (gate_.observe(v)) {
    lines.push_back(format_warning(v, streak_steps_, w, p, recommend(v, w, p), words_));
  }
  if (tuner_) {
    const double idle = stages.wait_free_buffer;
    TuneWindow t;
    t.samples_per_s = static_cast<double>(w.samples) / w.total_s();
    t.wait_share = v.wait_share;
    t.worker_idle_share = p.busy_worker_s + idle > 0 ? idle / (p.busy_worker_s + idle) : 0;
    const TuneAction action = tuner_->observe(t);
    if (action.changed) {
      loader_->set_prefetch(action.prefetch);
      loader_->set_workers(action.workers);
      lines.push_back(fmt::format("autotune: {} (prefetch {})", action.reason, loader_->prefetch()));
    }
  }
  window_ = {};
  window_gpu_ = {};
  window_start_ = now;
  window_closed_ = true;
  return lines;
}

std::string LoopDiagnosis::warmup_note() const {
  // A first step spent waiting for its batch was the loader starting (worker processes
  // spawned, files opened), not the model's libraries and kernels.
  const bool loader_start = epoch_warmup_.wait_s > epoch_warmup_.copy_s + epoch_warmup_.compute_s;
  const char* what = loader_start ? "(warm-up: the loader starting and making its first batch)"
                                  : "(warm-up: libraries and kernels loaded, algorithms chosen, memory allocated)";
  if (run_start_in_epoch_ && epoch_warmup_.steps == 1) {
    return fmt::format("first step {} of the epoch's {} {}: left out of these shares",
                       duration_text(epoch_warmup_.total_s()), duration_text(epoch_.total_s()), what);
  }
  std::string sizes;
  for (size_t i = 0; i < epoch_warmup_sizes_.size(); ++i) {
    if (i > 0) sizes += i + 1 == epoch_warmup_sizes_.size() ? " and " : ", ";
    sizes += std::to_string(epoch_warmup_sizes_[i]);
  }
  const bool one = epoch_warmup_.steps == 1;
  return fmt::format("first step{} at batch size{} {}: {} of the epoch's {} {}: left out of these shares",
                     one ? "" : "s", one ? "" : "s", sizes, duration_text(epoch_warmup_.total_s()),
                     duration_text(epoch_.total_s()),
                     run_start_in_epoch_ ? what : "(warm-up: algorithms chosen for a new input shape)");
}

LoopDiagnosis::EpochJudgement LoopDiagnosis::judge_epoch() const {
  // An epoch of warm-up steps alone keeps them: its shares are all there is to show.
  EpochJudgement j;
  j.left_out_warmup = epoch_warmup_.steps > 0 && epoch_.steps > epoch_warmup_.steps;
  j.window = with_monitor(j.left_out_warmup ? minus(epoch_, epoch_warmup_) : epoch_, epoch_gpu_);
  j.stages = stage_times() - epoch_start_;
  // An epoch shorter than a window is judged on the last window closed and every step since:
  // a 4-step epoch cut off by --max-steps read "input-bound" from one 27 ms wait, and a 1.3 s
  // epoch's GPU utilisation was a single monitor sample. The steps since are the window still
  // open, which may hold all of the epoch: judged on the closed window alone, a starved 0.9-s
  // epoch read "compute-bound" from the epoch before's steps only.
  const StepWindow& w = j.window;
  if ((w.steps < kWindowSteps || w.total_s() < kWindowSeconds) && last_window_) {
    j.too_short = w.steps < kWindowSteps ? fmt::format("{} {} too few", w.steps, w.steps == 1 ? "step is" : "steps are")
                                         : fmt::format("{} is too short", duration_text(w.total_s()));
    StepWindow recent = last_window_->window;
    add(recent, window_);
    GpuSeen gpu = last_window_->gpu;
    gpu.util_sum += window_gpu_.util_sum;
    gpu.samples += window_gpu_.samples;
    if (!window_gpu_.slowdown.empty()) gpu.slowdown = window_gpu_.slowdown;
    j.window = with_monitor(recent, gpu);
    j.stages = stage_times() - last_window_->start;
  } else if (w.steps < kWindowSteps && !last_window_) {
    // Nothing to judge on: a smoke test broken off after 3 steps read "the model takes 166,750
    // samples/s" and was offered the decoded cache from 0.1 s.
    j.unjudged = true;
  } else if (const StepWindow rest = minus(w, epoch_stall_);
             run_start_in_epoch_ && epoch_stall_.steps == 1 && epoch_stall_.wait_s >= kStallShare * w.wait_s &&
             rest.steps >= kWindowSteps && classify(w).kind == Bottleneck::kInput &&
             classify(rest).kind != Bottleneck::kInput) {
    // One stall made the run's first epoch input-bound: a loader whose start spans two batches read
    // "input-bound (high)" at 25 % waiting, 84 % of it one step's, and "try: a lighter
    // __getitem__", though the model set the pace after it. Later epochs keep theirs: torch's
    // DataLoader starting its workers again each epoch is a cost persistent_workers=True saves.
    j.window = rest;
    j.left_out_stall = true;
  }
  return j;
}

std::vector<std::string> LoopDiagnosis::epoch_report() const {
  const EpochJudgement j = judge_epoch();
  const StepWindow& w = j.window;
  std::string shares = format_step_shares(w);
  if (!j.too_short.empty()) {
    shares = fmt::format("{} (the last {} steps, {}, across epochs: this epoch's {} to judge alone)", shares, w.steps,
                         duration_text(w.total_s()), j.too_short);
  }
  if (j.unjudged) {
    shares = fmt::format("{} ({} step{}, {}: too few to judge; the evidence and the changes to try need {})", shares,
                         w.steps, w.steps == 1 ? "" : "s", duration_text(w.total_s()), kWindowSteps);
  }
  std::vector<std::string> lines{shares};
  if (j.left_out_warmup && epoch_warmup_.total_s() > kWarmupNoticeShare * epoch_.total_s()) {
    lines.push_back(warmup_note());
  }
  if (j.left_out_stall) {
    lines.push_back(
        fmt::format("one step waited {}, {:.0f} % of the epoch's waiting: a stall (the loader still starting), "
                    "left out of these shares",
                    duration_text(epoch_stall_.wait_s), 100 * epoch_stall_.wait_s / (w.wait_s + epoch_stall_.wait_s)));
  }
  if (j.unjudged) return lines;
  const Verdict v = classify(w);
  const PipelineEvidence p = evidence(j.stages);
  if (v.kind == Bottleneck::kInput) {
    const std::string evidence = format_evidence(w, p);
    if (!evidence.empty()) lines.push_back(evidence);
  }
  const std::string changes = format_changes(recommend(v, w, p), words_);
  if (!changes.empty()) lines.push_back(changes);
  return lines;
}

std::vector<Recommendation> LoopDiagnosis::epoch_changes() const {
  const EpochJudgement j = judge_epoch();
  if (j.unjudged) return {};
  return recommend(classify(j.window), j.window, evidence(j.stages));
}

}  // namespace stoker::diagnose
