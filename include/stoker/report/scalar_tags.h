// stoker/report/scalar_tags.h — the TensorBoard tags stoker writes, declared once here
// (docs/MONITOR_FORMATS.md lists them), and the monitor's figures as scalars.
//
// Steps. Every scalar is at the step the run had reached when it was measured (stoker train's
// optimizer step), the monitor's too (stoker/report/run_step.h): one axis, which a resumed
// run continues; where no loop counts steps, the monitor's samples are numbered
// (stoker/report/monitor_events.h).
// A figure that is not available (no GPU, no GPM, no watched process) is left out, never 0.
// Thread safety: plain functions and constants.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/monitor/sample.h"
#include "stoker/report/event_file.h"

namespace stoker::report::tags {

// Every logging window of stoker train (the loop diagnosis's windows of at least 2 s and 10
// steps, and the rest of each epoch): means over the window's steps.
inline constexpr const char* kTrainLoss = "train/loss";
inline constexpr const char* kTrainLr = "train/lr";  // the rate of the window's last step
inline constexpr const char* kTrainSamplesPerSec = "train/samples_per_sec";
inline constexpr const char* kTrainGradNorm = "train/grad_norm";   // where clip_grad_norm > 0
inline constexpr const char* kWaitShare = "step_time/wait_share";  // waiting for data, 0..1
inline constexpr const char* kCopyShare = "step_time/copy_share";  // host-to-device copy, 0..1
inline constexpr const char* kComputeShare = "step_time/compute_share";

// Every epoch of stoker train, at the epoch's last optimizer step: the figures of its
// metrics.csv row and summary.json entry.
inline constexpr const char* kEpochTrainLoss = "epoch/train_loss";
inline constexpr const char* kEpochTrainTop1 = "epoch/train_top1";
inline constexpr const char* kEpochSamplesPerSec = "epoch/samples_per_sec";
inline constexpr const char* kValLoss = "val/loss";
inline constexpr const char* kValTop1 = "val/top1";
inline constexpr const char* kValTop5 = "val/top5";
inline constexpr const char* kValAuc = "val/auc";
inline constexpr const char* kValMae = "val/mae";  // mean over the outputs
inline constexpr const char* kEmaValLoss = "ema_val/loss";
inline constexpr const char* kEmaValTop1 = "ema_val/top1";
inline constexpr const char* kEmaValMae = "ema_val/mae";

// A loop a Python script watches (stoker.watch under stoker.monitor(tensorboard=...)) writes
// the window tags train/samples_per_sec and step_time/* at the loop's step count (its steps
// finished so far, across its passes); a loop named "val" writes them under its name:
// val/samples_per_sec, val/step_time/wait_share, ...

// Every monitor sample: the machine, then the watched process tree, then each GPU.
inline constexpr const char* kHostCpuPercent = "host/cpu_percent";
inline constexpr const char* kHostRamUsedGib = "host/ram_used_gib";
inline constexpr const char* kHostRamPercent = "host/ram_percent";
inline constexpr const char* kProcessCpuPercent = "process/cpu_percent";  // % of one core
inline constexpr const char* kProcessRssGib = "process/rss_gib";
// gpu<N>/<name>, N the NVML index.
inline constexpr const char* kGpuUtil = "util";               // % of time a kernel ran
inline constexpr const char* kGpuSmActivity = "sm_activity";  // GPM, Hopper and newer
inline constexpr const char* kGpuMemoryUsedGib = "memory_used_gib";
inline constexpr const char* kGpuMemoryPercent = "memory_percent";  // used of total
std::string gpu_tag(int index, const char* name);                   // gpu_tag(0, kGpuUtil) = "gpu0/util"

}  // namespace stoker::report::tags

namespace stoker::report {

// A logging window's samples/s and step-time shares (wait, copy, compute seconds summed over
// its steps) under the window tags above, or under `loop`'s name for a named loop ("" = none).
// None when the window took no time.
std::vector<Scalar> step_time_scalars(const std::string& loop, int64_t samples, double wait_s, double copy_s,
                                      double compute_s);

// The sample's figures under the tags above, in that order; unavailable ones left out.
std::vector<Scalar> monitor_scalars(const monitor::Sample& sample);

}  // namespace stoker::report
