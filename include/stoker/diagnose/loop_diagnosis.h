// stoker/diagnose/loop_diagnosis.h — the diagnosis that rides along a training loop (stoker
// train's, or a Python script's through stoker.watch): steps are grouped into windows (at
// least 2 s and 10 steps, running on across epochs); each window is classified
// (stoker/diagnose/verdict.h) with the loader's stage clocks and the monitor's latest figures
// as evidence; a condition that persists over several windows prints one warning; with
// `--workers auto` each window also feeds the worker tuner, whose changes are applied to the
// loader and logged with reasons. Each epoch gets the shares line and, when input-bound, the
// recommended changes; an epoch shorter than a window (10 steps, 2 s) is judged on the last
// window closed and the steps since (so on all of its own), and its line says so; one of fewer than 10 steps with no
// window before it (a run's first pass broken off) shows its shares, saying they are too few to judge, without evidence
// or changes.
//
// The first step at each batch size is warm-up. The run's first loads libraries and kernels
// and takes the allocator's first blocks (26 s for ResNet-50 on an H100); each new input
// shape makes cuDNN choose its algorithms again (an epoch's short last batch: about 6 s more
// in ResNet-50's first epoch on an H100). Warm-up steps count in the epoch's totals
// (epoch_window(), the metrics file) but not in the windows nor in the shares the verdicts
// read, and the epoch report names them when they were a noticeable part of the epoch (as the
// loader starting where they mostly waited for their batch: torch's DataLoader spawning its
// worker processes). In the run's first epoch, one step holding at least half of its waiting,
// where the epoch is input-bound only with it (the loader's start spanning two batches), is
// judged the same way: out of the shares, named in the report.
//
// GPU utilisation is the mean of the monitor's samples taken during the window or epoch.
// Without a loader (another library's) there are no stage clocks: the verdicts stand, the
// evidence and the changes that need the clocks are left out. Without a monitor there are no
// GPU or CPU figures.
// Single-threaded: call from the training loop only. The loader and the monitor must outlive it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/data/loader.h"
#include "stoker/diagnose/tune.h"
#include "stoker/diagnose/verdict.h"
#include "stoker/monitor/sampler.h"

namespace stoker::diagnose {

// The pipeline figures of a stage-clock difference of `loader` (its workers, prefetch,
// dataset, decoded cache) and the RAM free now; `cores` and the CPU % are left to the caller.
PipelineEvidence pipeline_evidence(const data::StageTimes& stages, const data::Loader& loader);

// The batch sizes stepped so far, to tell a warm-up step (the first at its size) from the rest.
// Shared by the loop's diagnosis and the doctor's joint probe, so both leave out the same steps.
class WarmUpShapes {
 public:
  // Whether `samples` per step was not seen before; remembers it.
  bool first(int64_t samples) {
    if (std::find(seen_.begin(), seen_.end(), samples) != seen_.end()) return false;
    seen_.push_back(samples);
    return true;
  }
  bool none_yet() const { return seen_.empty(); }

 private:
  std::vector<int64_t> seen_;  // at most a few: the batch size and an epoch's short last batch
};

class LoopDiagnosis {
 public:
  // `loader`: stoker's loader feeding the loop, or nullptr for another; `monitor`: the running
  // monitor, or nullptr. `gpu_index` >= 0 reads that GPU's utilisation and slowdown reasons
  // from the monitor. `auto_workers` (with a loader) tunes its workers. `dataset`: --data as
  // given, named in the commands it recommends. `words`: whose names the changes it recommends
  // use (--workers 4 for stoker train, num_workers=4 for a Python script).
  LoopDiagnosis(data::Loader* loader, const monitor::Sampler* monitor, int cores, int gpu_index, bool auto_workers,
                int prefetch_factor, std::string dataset, data::FrontEnd words = data::FrontEnd::kCommandLine);

  // Whether the loader's data can take the decoded cache (a Dataset object's own items cannot:
  // the front end refuses it there); the changes offer the cache only then. Default: it can.
  void set_decoded_cache_possible(bool possible) { cache_possible_ = possible; }
  // Whether the loader's reads are a Dataset object's __getitem__ (Python) rather than file
  // reads: the evidence names that stage dataset[i], and the change for it is no faster storage.
  // `processes`: the worker processes calling it (stoker.DataLoader's dataset_processes); 0 =
  // the worker threads, under the GIL. `stream`: the processes run an iterable-style Dataset's
  // __iter__ instead (the stage is named __iter__).
  void set_reads_in_python(bool in_python, int processes = 0, bool stream = false) {
    reads_in_python_ = in_python;
    dataset_processes_ = processes;
    reads_stream_ = stream;
  }

  // The monitor (and GPU index) the next steps read: the one running now, or nullptr. A loop
  // watched again calls it at each pass, so a monitor started since is read and one stopped
  // since is not (its last sample would stand for every later window). It must outlive this.
  void set_monitor(const monitor::Sampler* monitor, int gpu_index);

  void start_epoch();
  // After each step; returns lines to print (a warning, a tuning change), usually none.
  std::vector<std::string> after_step(double wait_s, double copy_s, double compute_s, int64_t samples);
  // Whether the last after_step() closed a window (the trainer's logging windows follow them).
  bool window_closed() const { return window_closed_; }

  // Every step of the epoch, the warm-up included (its totals are the epoch's).
  const StepWindow& epoch_window() const { return epoch_; }
  // "step time: … → input-bound (high)" plus, when there are any, "try: …".
  std::vector<std::string> epoch_report() const;
  // False for an epoch too short to judge, with no window before it: its report has no
  // evidence and no changes (nor should a front end add its own).
  bool epoch_judged() const { return !judge_epoch().unjudged; }
  // The changes epoch_report() words in its "try: …" line, as data.
  std::vector<Recommendation> epoch_changes() const;
  // The verdict epoch_report() prints (the records keep it beside the epoch's figures).
  Verdict epoch_verdict() const { return classify(judge_epoch().window); }
  // The steps epoch_report()'s shares and verdict are of: the epoch less its warm-up, or the
  // last window for an epoch shorter than one.
  StepWindow epoch_judged_window() const { return judge_epoch().window; }
  // The loader's stage clocks over the epoch so far, summed over its workers (zero without a
  // loader): where the workers' time went, for the records.
  data::StageTimes epoch_stages() const { return stage_times() - epoch_start_; }

 private:
  // What the epoch is judged on: its steps less the warm-up, with the monitor's figures, or
  // the last window and every step since when the epoch is shorter than one (`too_short` then
  // says why).
  struct EpochJudgement {
    StepWindow window;
    data::StageTimes stages;
    std::string too_short;  // "4 steps are too few", "1.1 s is too short", or empty
    bool unjudged = false;  // fewer steps than a window and no window before: shares alone
    bool left_out_warmup = false;
    bool left_out_stall = false;  // epoch_stall_ is out of `window`
  };
  EpochJudgement judge_epoch() const;
  // The epoch report's line naming the warm-up steps it left out.
  std::string warmup_note() const;
  // The GPU's utilisation over the monitor samples seen during a window, and its slowdown.
  struct GpuSeen {
    double util_sum = 0;
    int64_t samples = 0;
    std::string slowdown;  // the last non-empty one
  };
  // Reads the monitor's latest sample when it is new, into both running means.
  void observe_monitor();
  // `w` with the mean utilisation of `seen` (the latest sample when it saw none).
  StepWindow with_monitor(StepWindow w, const GpuSeen& seen) const;
  // The pipeline figures of a stage-clock difference, with the monitor's CPU %.
  PipelineEvidence evidence(const data::StageTimes& stages) const;
  // The loader's stage clocks now (zero without a loader).
  data::StageTimes stage_times() const;

  data::Loader* loader_;
  const monitor::Sampler* monitor_;
  int cores_;
  int gpu_index_;
  std::string dataset_;
  data::FrontEnd words_;
  bool cache_possible_ = true;
  bool reads_in_python_ = false;
  bool reads_stream_ = false;
  int dataset_processes_ = 0;
  std::optional<WorkerTuner> tuner_;
  PersistenceGate gate_{5};
  StepWindow window_, epoch_;
  GpuSeen window_gpu_, epoch_gpu_;
  uint64_t samples_seen_ = 0;  // the monitor's samples_published() when last read
  // The last window judged, its GPU samples and the stage clocks at its start: an epoch
  // shorter than a window is judged on it and the steps since (the window still open).
  struct JudgedWindow {
    StepWindow window;
    GpuSeen gpu;
    data::StageTimes start;
  };
  std::optional<JudgedWindow> last_window_;
  WarmUpShapes shapes_;      // batch sizes (samples per step) stepped so far
  StepWindow epoch_warmup_;  // this epoch's warm-up steps, summed
  // The epoch's step that waited longest, warm-up aside. Where it holds at least half of the
  // run's first epoch's waiting and that epoch is input-bound only with it (a loader whose start
  // spans two batches), the epoch is judged without it and the report names it.
  StepWindow epoch_stall_;
  std::vector<int64_t> epoch_warmup_sizes_;
  bool run_start_in_epoch_ = false;  // this epoch holds the run's first step
  data::StageTimes window_start_, epoch_start_;
  int64_t streak_steps_ = 0;
  bool window_closed_ = false;
};

}  // namespace stoker::diagnose
