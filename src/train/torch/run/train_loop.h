// The loop of a training run: its epochs, each trained step by step (waiting for data, copying,
// computing, as the diagnosis counts them), then validated, recorded, checkpointed, and judged
// for the best weights, the plateau schedule and early stopping; checkpoints and stops at
// window boundaries inside an epoch for signals, max_steps and checkpoint_every_steps.
// run_training (trainer.cpp) builds what the loop works with, runs it, and exports the weights
// (weights_export.h).
//
// In a data-parallel group every process runs one loop; only the leader (rank 0) validates,
// prints, writes records and checkpoints, and it shares its early-stop and plateau decisions
// with the group at each epoch's end.
// Ownership: the loop borrows everything in RunParts, which must outlive it; it owns its
// stepper, its device feed, its plateau schedule and the leader's best weights.
// Thread safety: none; the run's thread only.
// Errors: DataError for a loss that stays non-finite, the out-of-memory line
// (naming_out_of_memory), and what the parts it calls throw.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stoker/core/clock.h"
#include "stoker/diagnose/loop_diagnosis.h"
#include "stoker/monitor/sampler.h"
#include "stoker/train/config.h"
#include "stoker/train/trainer.h"
#include "train/common/plateau.h"
#include "train/common/progress.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/parallel/data_parallel.h"
#include "train/torch/run/best_weights.h"
#include "train/torch/run/run_directory.h"
#include "train/torch/run/run_records.h"
#include "train/torch/run/setup.h"
#include "train/torch/run/stop_signals.h"
#include "train/torch/run/tensorboard_log.h"
#include "train/torch/run/weights_export.h"
#include "train/torch/step/device_feed.h"
#include "train/torch/step/gpu_memory.h"
#include "train/torch/step/step.h"

namespace stoker::train {

// What the loop works with, built by run_training before the first epoch. The pointers are
// null where a part is off or belongs to the leader alone.
struct RunParts {
  const TrainConfig& cfg;
  const TrainUi& ui;  // progress and json_summary already off outside the leader
  TrainSetup& setup;
  const RunStart& start;
  monitor::Sampler& monitor;
  diagnose::LoopDiagnosis& diagnosis;
  GpuMemoryPeak& gpu_memory_peak;
  const WeightsMetadata& metadata;
  int gpu_index;                // the CUDA device's NVML index; -1 on the CPU
  DataParallel* group;          // null when training alone
  ModelEma* ema;                // the leader's moving average of the weights (AveragePlan::on)
  RunRecords* records;          // the leader's run folder
  TensorBoardLog* tensorboard;  // the leader's, with tensorboard on
};

class TrainLoop {
 public:
  explicit TrainLoop(const RunParts& run);

  // Trains from the start's epoch and batch to the end of cfg.epochs, or until max_steps, early
  // stopping or a signal ends it. Returns the exit code: 0, or 128 + the signal that stopped it
  // (its checkpoint saved).
  int run();

  const Stepper& stepper() const { return stepper_; }
  // The leader's best weights so far, as BestWeights::summary(); null in the other processes.
  nlohmann::json best_summary() const { return best_ ? best_->summary() : nlohmann::json(); }

 private:
  // How an epoch's step loop ended.
  enum class EpochEnd { kCompleted, kMaxSteps, kSignal };

  // Trains epoch `epoch` (0-based) from `first_batch`; fills `record` with what it measured.
  EpochEnd train_epoch(int64_t epoch, int64_t first_batch, EpochRecord* record);
  // The leader's end of an epoch: validates, feeds the best weights and the plateau, prints and
  // records the epoch line, saves the checkpoint, decides early stopping. Returns whether the
  // run stops here.
  bool finish_epoch_as_leader(int64_t epoch, EpochEnd end, bool max_reached, EpochRecord& record);
  // The same for the other processes of a group: they hear the leader's plateau and early-stop
  // decisions. Returns whether the run stops here.
  bool finish_epoch_as_follower(bool max_reached);
  // Feeds the plateau schedule the epoch's figure; notes and follows a lowered rate.
  void observe_plateau(const EvalResult& eval, EpochRecord& record, bool share);
  // Saves the checkpoint that resumes at `next_batch` of `epoch` (the leader; a no-op in the
  // other processes of a group).
  void save(int64_t epoch, int64_t next_batch);
  // The plateau schedule's rate caps the steps' from now on.
  void follow_plateau() { stepper_.cap_lr(plateau_->lr()); }
  // The signal that stopped the run: this process's, or SIGTERM when another process of the
  // group was the one signalled.
  int signal() const;
  void check_loss(double loss, int64_t epoch, int64_t step);
  void report(const std::vector<std::string>& lines);
  // At a window boundary: whether a signal asks to stop (in any process of the group).
  bool stop_requested();
  // Writes the logging window's scalars (the leader, with TensorBoard on) and starts the next.
  void log_window();
  void draw_progress(int64_t epoch, int64_t first, int64_t step, const Stopwatch& clock, int64_t samples,
                     double loss_sum, int64_t loss_count);

  const RunParts run_;
  const TrainConfig& cfg_;
  const bool leader_;
  const int world_size_;
  const int64_t steps_per_epoch_;
  Stepper stepper_;
  DeviceFeed feed_;
  ProgressLine progress_;
  StopSignals signals_;
  LogWindow log_window_;
  std::optional<Plateau> plateau_;   // schedule plateau: every process keeps its rate
  std::optional<BestWeights> best_;  // the leader's; it judges the average when there is one
  int non_finite_in_a_row_ = 0;
  int64_t last_draw_ns_ = 0;
};

}  // namespace stoker::train
