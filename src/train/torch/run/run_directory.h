// Where a training run lives and the point it starts from: a new folder
// <output_dir>/<YYYY-mm-dd_HH-MM-SS> (-2, -3, ... for runs started in the same second), or,
// with --resume, the folder of the checkpoint named, whose state is loaded. The leader locks
// the folder for the run's lifetime. Also the run's header lines (device, data, inputs, model).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stoker/core/directory_lock.h"
#include "stoker/train/config.h"
#include "train/common/plateau.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/model/models.h"
#include "train/torch/run/setup.h"
#include "train/torch/step/grad_scaler.h"

namespace stoker::train {

struct RunStart {
  std::string run_dir;
  // The leader's hold on run_dir for the whole run: a second run or --resume there is one
  // line (DirectoryLock). Shared: RunStart is copied into the loop's state.
  std::shared_ptr<DirectoryLock> lock;
  std::string checkpoint_path;  // <run_dir>/checkpoint.pt
  bool resumed = false;
  int64_t epoch = 0;                        // 0-based epoch to go on in
  int64_t batch = 0;                        // first batch of that epoch still to train on
  int64_t global_step = 0;                  // optimiser steps already taken
  std::optional<GradScaler::State> scaler;  // amp fp16 only
  std::optional<int64_t> ema_updates;       // resumed with the checkpoint's moving average
  std::optional<PlateauState> plateau;      // resumed with the checkpoint's plateau schedule
};

// The checkpoint a --resume goes on from, opened before the data and the model are set up, so
// that a resume with another model is named as such and not as whatever the other model cannot
// take.
struct Resumption {
  std::shared_ptr<DirectoryLock> lock;  // the leader's (see RunStart::lock)
  std::string path;                     // the checkpoint file
  std::shared_ptr<CheckpointFile> checkpoint;
};

// Without cfg.resume: nothing. With it: the leader locks the run folder first (a second resume
// of a run in progress would write over its checkpoint), then reads the checkpoint (a file, or
// a run folder holding checkpoint.pt) and checks it was made with the same model, batch size,
// seed and number of data-parallel processes, and that cfg.max_steps (if set) lies beyond its
// step: UsageError naming both values otherwise; DataError for an unreadable file.
std::optional<Resumption> open_resumption(const TrainConfig& cfg, const ProcessPlace& place = {});

// With a resumption: checks the checkpoint was made on as many training samples as setup's
// (UsageError otherwise) and loads it into setup's model and optimizer (and `ema`, if given:
// the checkpoint's average, or a restart from the loaded weights when it has none). Without: makes a new run folder
// (UsageError when it cannot). Either way writes config.yaml, the effective config. Only the group's leader (rank 0)
// makes the folder and writes; the other processes get the point to start from (run_dir empty on a new run).
RunStart open_run(const TrainConfig& cfg, const TrainSetup& setup, std::optional<Resumption> resumption,
                  const ProcessPlace& place = {}, ModelEma* ema = nullptr);

// The lines printed before the first step: run dir, device, data, model, config, the batch
// size used and asked for (per process and per step in a data-parallel group), and where a
// resumed run goes on. `average`: the run's moving average (average_plan), as kept.
void print_run_header(const TrainConfig& cfg, const TrainSetup& setup, const RunStart& start,
                      const AveragePlan& average, const ProcessPlace& place = {});

}  // namespace stoker::train
