// stoker/diagnose/verdict.h — why the accelerator waits: classify a window of training
// steps from where their time went, attach the evidence, and name the smallest change.
//
// Every function here is pure (numbers in, words out): the trainer and `stoker doctor` feed
// measured figures, the unit tests feed scripted ones. No torch, no threads, no I/O.
//
// Rules (also in docs/design/diagnose.md, "The verdict"), first match wins:
//   1. waiting for data >= 20 % of step time            → input-bound (high)
//   2. host→device copy >= 20 % and more than waiting   → transfer-bound
//   3. waiting for data >= 5 %                          → input-bound (moderate)
//   4. the GPU reported a slowdown reason (thermal, power cap, HW slowdown)
//                                                        → throttled
//   5. GPU utilisation known and < 70 % although the steps did not wait for data
//                                                        → host/launch-bound
//   6. otherwise                                         → compute-bound
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/data/loader_keys.h"

namespace stoker::diagnose {

enum class Bottleneck { kInput, kTransfer, kThrottled, kHost, kCompute, kUnknown };
enum class Severity { kNone, kModerate, kHigh };

// A window of steps: seconds summed over its steps, plus what the monitor saw meanwhile.
struct StepWindow {
  double wait_s = 0;     // the consumer blocked in Loader::next()
  double copy_s = 0;     // host→device copy
  double compute_s = 0;  // forward, backward, optimiser
  int64_t steps = 0;
  int64_t samples = 0;
  double gpu_util_percent = -1;  // mean over the window; < 0 = unknown (no GPU / no NVML)
  std::string slowdown;          // GPU clock-event reasons that cost speed ("HW thermal"), "" = none

  double total_s() const { return wait_s + copy_s + compute_s; }
};

struct Verdict {
  Bottleneck kind = Bottleneck::kUnknown;
  Severity severity = Severity::kNone;
  double wait_share = 0, copy_share = 0, compute_share = 0;  // of step time, 0..1
};

Verdict classify(const StepWindow& window);

// "input-bound (high)", "compute-bound", ...
std::string verdict_name(const Verdict& verdict);

// "step time: compute 97.8 % · waiting for data 1.9 % · copy 0.3 % → compute-bound"
std::string format_step_shares(const StepWindow& window);

// What the input pipeline reported over the same window (stoker::data's stage clocks) and
// the machine around it; the figures a recommendation quotes.
struct PipelineEvidence {
  int workers = 0;
  int prefetch_factor = 0;                           // batches in flight per worker; 0 = unknown
  int cores = 0;                                     // CPUs this process may run on
  double read_s = 0, decode_s = 0, transform_s = 0;  // worker seconds in each stage
  double busy_worker_s = 0;                          // read + decode + transform (excludes waiting for buffers)
  int64_t samples = 0;                               // samples the workers produced in the window
  double cpu_percent = -1;                           // whole machine, 0..100; < 0 = unknown
  // For the decoded cache: full-resolution pixel bytes of the window's samples, the dataset's
  // size, RAM available, and whether the cache is already on. 0 = unknown.
  double decoded_bytes = 0;
  int64_t dataset_samples = 0;
  double free_ram_bytes = 0;
  bool cache_on = false;
  bool cache_possible = true;    // false: the loader's data cannot be cached (a Dataset object's own items)
  bool reads_in_python = false;  // true: read_s is a Dataset object's __getitem__, not file reads
  int dataset_processes = 0;     // with reads_in_python: the processes calling it; 0 = the worker threads
  bool reads_stream = false;     // with reads_in_python: an iterable-style Dataset's __iter__ in the processes
  // JPEG samples decoded in the window, and how many of them from just the restart intervals
  // their crop needs (files rewritten by `stoker prepare`).
  int64_t jpeg_samples = 0;
  int64_t spliced_samples = 0;
  std::string dataset;  // --data as given, for commands in recommendations; "" = unknown
};

// "stoker prepare --data D --out D-prepared" for the dataset given as --data (a folder, or a
// CSV list whose folder is prepared); placeholders DIR and NEW_DIR when it is unknown ("").
std::string prepare_command(const std::string& dataset);

// One change to try. A loader option comes as data, named by its row of the loader's table,
// and each front end words it from the row's names (`--workers 7`, `num_workers=7`); anything
// else (a command, a way to store the data) is the same words everywhere.
struct Recommendation {
  std::optional<data::OptionChange> option;  // the loader option to set, when it is one
  std::string change;                        // otherwise: "stoker prepare --data D --out D-prepared"
  std::string reason;                        // "7 of 16 cores idle"
  double predicted_gain = 0;                 // throughput ratio expected (1.5 = +50 %); 0 = not predicted
};

// The change in `front`'s words: "--workers 7" or "num_workers=7", else `change`.
std::string change_words(const Recommendation& recommendation, data::FrontEnd front);

// The input pipeline's ceiling in samples/s: samples per busy worker-second × workers.
double pipeline_rate(const PipelineEvidence& pipeline);
// The model's ceiling in samples/s: samples per second of copy + compute.
double model_rate(const StepWindow& window);
// The joint rate to expect from a model and a loader measured apart. On a GPU the model
// runs on the device and the slower side sets the pace: min(model, loader). On the CPU
// both draw on the same `cores`: the model alone kept all of them busy, the loader alone
// `loader_workers`, so a sample costs cores/model + workers/loader core-seconds and the
// joint rate is cores / that, never above min(model, loader). Rates in samples/s; 0 when
// either is unknown.
double joint_rate(double model_rate, double loader_rate, int loader_workers, int cores, bool shared_cores);

// What `--cache decoded` would take and save, from the pipeline's evidence: the dataset's
// full-resolution decoded size, the share of worker time spent reading and decoding (what
// later epochs skip), the loader's rate without it, and whether it is worth offering: not on
// yet and possible for the data, read + decode at least 30 % of worker time, and the images fit
// in 80 % of free RAM.
struct CacheEstimate {
  double needed_bytes = 0;
  double load_share = 0;
  double speedup = 1;  // loader rate with the cache ÷ without (1 / (1 - load_share))
  bool worth_offering = false;
};
CacheEstimate estimate_decoded_cache(const PipelineEvidence& pipeline);

// The stage with the most worker time and its share of busy worker time ("decode", 0.71);
// the read stage is named "dataset[i]" where it is a Dataset's __getitem__ (reads_in_python),
// "__iter__" where it is an iterable-style Dataset's (reads_stream).
std::pair<std::string, double> dominant_stage(const PipelineEvidence& pipeline);

// Ranked changes for an input-bound window: the worker count that matches the model's rate
// (bounded by the cores, leaving one for the training thread), deeper prefetch when the
// pipeline is fast enough on average, and lighter inputs when every core is already
// decoding; option values stay inside the loader's table's ranges. Empty for other
// conditions: they have no flag to offer yet.
std::vector<Recommendation> recommend(const Verdict& verdict, const StepWindow& window,
                                      const PipelineEvidence& pipeline);

// "decode is 71 % of worker time; 4 workers deliver 850 samples/s, the model takes 1,400
// samples/s." ("" without stage clocks).
std::string format_evidence(const StepWindow& window, const PipelineEvidence& pipeline);
// "try: --workers 7 (7 of 16 cores idle)  or  …" ("" for none); in Python's words
// "try: num_workers=7 (7 of 16 cores idle)  or  …".
std::string format_changes(const std::vector<Recommendation>& changes,
                           data::FrontEnd front = data::FrontEnd::kCommandLine);

// The warning text (several lines, no trailing newline) for a condition that held over
// `steps` steps, e.g.
//   ⚠ input-bound for the last 400 steps: 37 % of step time waiting for data.
//     decode is 71 % of worker time; 4 workers deliver 850 img/s, the model takes 1,400 img/s.
//     try: --workers 7 (7 of 16 cores idle)
// The changes are worded for `front`.
std::string format_warning(const Verdict& verdict, int64_t steps, const StepWindow& window,
                           const PipelineEvidence& pipeline, const std::vector<Recommendation>& changes,
                           data::FrontEnd front = data::FrontEnd::kCommandLine);

// Decides when a condition has persisted long enough to warn: fed one verdict per window
// of steps, it fires once when the same non-compute verdict held for `windows_to_warn`
// consecutive windows, and again only after the condition cleared and came back.
// Not thread-safe; one per training loop.
class PersistenceGate {
 public:
  explicit PersistenceGate(int windows_to_warn = 4) : windows_to_warn_(windows_to_warn) {}
  // True when this window completes a streak worth a warning.
  bool observe(const Verdict& verdict);
  int streak() const { return streak_; }

 private:
  int windows_to_warn_;
  Bottleneck last_ = Bottleneck::kUnknown;
  int streak_ = 0;
  bool warned_ = false;
};

}  // namespace stoker::diagnose
