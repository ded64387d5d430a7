// What a training run writes about itself in its run folder: metrics.csv (one row per epoch,
// appended to on resume), events.log (the diagnosis lines), summary.json (at the end), and
// the epoch line printed after each epoch. Not thread-safe: the training loop's thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "stoker/core/host_tuning.h"
#include "stoker/data/loader.h"
#include "stoker/data/transform.h"
#include "stoker/diagnose/verdict.h"
#include "stoker/train/config.h"
#include "train/torch/evaluate/evaluate.h"
#include "train/torch/step/grad_scaler.h"

namespace stoker::train {

// The gradients' total norm over an epoch's optimizer steps (measured where clip_grad_norm > 0).
struct GradNorms {
  int64_t steps = 0;    // steps measured (fp16 steps skipped for inf/NaN are not)
  int64_t clipped = 0;  // of them, steps whose norm exceeded clip_grad_norm
  double sum = 0, max = 0;

  void add(double norm, bool was_clipped) {
    ++steps;
    clipped += was_clipped ? 1 : 0;
    sum += norm;
    max = std::max(max, norm);
  }
  double mean() const { return steps > 0 ? sum / static_cast<double>(steps) : 0; }
};

// One epoch, as measured by the loop.
struct EpochRecord {
  int64_t epoch = 0;    // 1-based
  double seconds = 0;   // wall time of the epoch, validation excluded
  int64_t samples = 0;  // trained on in this epoch (this session's part of it on resume)
  int64_t batches = 0;
  double train_loss = 0;               // mean over finite batch losses
  double train_top1 = -1;              // classification: the share of training samples the model got right; -1 else
  EvalResult eval;                     // eval.samples == 0: no validation data
  std::optional<EvalResult> ema_eval;  // ema_decay > 0 with validation data: the moving average's
  diagnose::StepWindow times;          // waiting / copy / compute over the epoch's steps
  diagnose::Verdict verdict;           // the one the epoch's step-time line printed (LoopDiagnosis)
  data::StageTimes stages;             // the loader workers' time per stage over the epoch
  int workers = 0;                     // loader workers at the epoch's end
  std::optional<GradScaler::State> scaler;  // amp fp16 only
  std::optional<GradNorms> grad_norms;      // clip_grad_norm > 0 only
  std::string notes;                        // more " · …" for the epoch line (cache, GPU memory)

  // Over the step time (times.total_s()), so a slow validation does not count.
  double samples_per_sec() const;
  double batches_per_sec() const;
};

// " val acc 91.2 % (top-5 99.8 %)", " val acc 88.0 % · AUC 0.947", " val loss … · MAE 0.031 (0.02, 0.04)"
std::string format_eval(const EvalResult& eval);

// What the model was fed: {"transform": the chain, "features": count or null, "standardize":
// {"mean": [...], "std": [...]} or null}. Needed to feed the exported model later, so it goes
// into summary.json and into model.safetensors' metadata (key "inputs", as JSON text).
nlohmann::json inputs_json(const data::TransformSpec& spec);

class RunRecords {
 public:
  // Opens metrics.csv (new, with its header; appended to when `resumed`) and events.log.
  RunRecords(const TrainConfig& cfg, const std::string& run_dir, bool resumed);

  // What the process ran with, for summary.json: intra-op threads and the allocator and BLAS
  // settings (stoker/core/host_tuning.h).
  void set_process(int threads, const HostTuning& host);

  // What the model was fed, for summary.json: inputs_json(spec).
  void set_inputs(const data::TransformSpec& spec);

  // Prints `line` and appends it to events.log.
  void report(const std::string& line);

  // Writes the epoch's metrics.csv row and summary entry; returns the epoch line
  // ("epoch 2/5  done in 12.3 s · 4,870 samples/s · … · val acc 91.2 %").
  std::string add_epoch(const EpochRecord& record, int epochs);

  // Early stopping ended the run after `epoch` (1-based): summary.json's "stopped_early".
  void stopped_early(int64_t epoch) { summary_["stopped_early"] = {{"epoch", epoch}}; }

  // The moving average of the weights for summary.json's "ema": {"decay", "updates", "weights"}.
  void set_ema(double decay, int64_t updates, const std::optional<std::string>& weights);

  // The best epoch's weights for summary.json (BestWeights::summary(); null: none).
  void set_best(const nlohmann::json& best) { summary_["best"] = best; }

  // Writes summary.json (weights: the exported weights' path, if any) and returns it.
  const nlohmann::json& finish(const std::optional<std::string>& weights, int64_t global_step, int exit_code);

 private:
  std::string run_dir_;
  std::ofstream metrics_;
  std::ofstream events_;
  nlohmann::json summary_;
  double total_samples_ = 0;
  double total_train_seconds_ = 0;
};

}  // namespace stoker::train
