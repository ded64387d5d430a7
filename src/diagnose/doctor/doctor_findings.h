// Private: what `stoker doctor` measured, and the pure steps after measuring: ranking the
// changes and writing the report (text or JSON). No torch: src/train/torch/probe/doctor.cpp
// measures with libtorch and fills DoctorFindings; doctor_report.cpp only reads it, so the
// ranking and the report are unit-tested (tests/unit/diagnose/doctor_rank_test.cpp) and run
// under the sanitizers without libtorch.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stoker/data/loader.h"
#include "stoker/data/prepare.h"
#include "stoker/diagnose/verdict.h"

namespace stoker::diagnose {

struct LoaderProbe {
  int workers = 0;
  double images_per_s = 0;
  data::StageTimes stages;  // over the probe
};

struct JointProbe {
  int workers = 0;
  StepWindow window;
  double samples_per_s() const { return window.total_s() > 0 ? window.samples / window.total_s() : 0; }
};

struct ModelProbe {
  std::string variant;  // "as configured", "amp bf16", "batch 128"
  int batch = 0;
  double samples_per_s = 0;
  std::string skipped;  // why it did not run
};

struct DoctorFindings {
  // The configuration.
  std::string model;
  std::string data;              // --data as given
  std::string data_description;  // Source::describe()
  std::string device;            // "cpu", "cuda:0"
  bool cuda = false;
  std::string torch_description;
  int batch_size = 0;
  int accumulation_steps = 1;
  int prefetch_factor = 0;
  int cores = 0;
  int configured_workers = 0;
  bool channels_last = false, gpu_normalize = false, pinned = false;  // the CUDA feed
  // --decode gpu or auto: the decoder ("nvJPEG 13.0.1: hardware engine ..."); "" on the CPU.
  std::string gpu_decoder;

  // The measurements.
  std::vector<LoaderProbe> loader;     // one per worker count, the configured one included
  std::vector<ModelProbe> model_runs;  // [0] is as configured
  JointProbe joint;                    // at the configured worker count
  Verdict verdict;                     // of `joint` (predicted from the rates when `slow_step`)
  // A step at the configured batch slower than a probe's window: measured once (or, where it
  // would not fit in memory, not at all: `slow_step_skipped`), and the probes that repeat
  // steps (other variants, together) were left out.
  struct SlowStep {
    double estimate_s = 0;  // from one step at batch 1
    double first_s = 0;     // the first step at the configured batch, one-time costs and all
    double measured_s = 0;  // the step measured at the configured batch; 0 when skipped
    std::string skipped;    // why it was not measured

    // Whether the first step at the configured batch is not the step to report and a second
    // must be timed: it outlasted the probes' window, and either the device is a GPU (cuDNN
    // tries its algorithms at each new shape: 5.3 s of a 0.04 s ResNet-50 step at batch 128
    // on an H200) or it took longer than the batch-1 bound, which only one-time costs explain.
    bool wants_second_step(bool cuda, double window_s) const {
      return first_s > window_s && (cuda || first_s > estimate_s);
    }
  };
  std::optional<SlowStep> slow_step;
  std::optional<JointProbe> tried_workers;  // the count the loader alone suggests, together
  std::optional<JointProbe> fewer_threads;  // CPU: torch threads = cores - workers, together
  int threads_now = 0, threads_free = 0;
  PipelineEvidence evidence;                      // of the loader probe at the configured count
  std::optional<data::RestartGain> restart_gain;  // JPEGs decoded as they are vs prepared

  const LoaderProbe& at_configured() const;
  double model_rate() const { return model_runs.empty() ? 0 : model_runs[0].samples_per_s; }
};

struct DoctorChange {
  std::string change;  // the flag(s) or command
  double gain = 1;     // expected samples/s ratio
  std::string how;     // "measured together: …", "predicted: …"
};

// The worker counts the loader is measured at: 1, 2, 4, ... below `cores`, `cores` and
// `configured`, ascending. Doubling keeps the sweep short on many cores (every count from 1
// to 16 took 55 s of a 16-core doctor run at 3 s each; 64 cores would take minutes).
std::vector<int> worker_counts(int cores, int configured);

// The flags that train at `batch` per step, and what they do to the effective batch
// (`effective` = batch size × accumulation steps as configured): kept when `batch` divides it,
// otherwise the effective batch they give, or the larger one `batch` alone makes.
struct BatchSuggestion {
  int accumulation_steps = 1;  // the --accum-steps it names
  std::string text;
};
BatchSuggestion batch_suggestion(int batch, int effective);

// Every change worth 2 % or more, best first.
std::vector<DoctorChange> rank_changes(const DoctorFindings& f);

// The report: one JSON object, or the text lines.
nlohmann::json doctor_json(const DoctorFindings& f, const std::vector<DoctorChange>& changes,
                           const std::optional<nlohmann::json>& batch_search);
void print_doctor_text(const DoctorFindings& f, const std::vector<DoctorChange>& changes,
                       const std::optional<nlohmann::json>& batch_search);

}  // namespace stoker::diagnose
