// Checkpoints: model, optimiser, fp16 loss scaler, moving average of the weights, the plateau schedule, CPU RNG and
// where the data stream stands, in one file
// written atomically (temp file, fsync, rename, fsync of the directory), so a crash or a
// full disk never leaves a half-written checkpoint in place of the previous one.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "train/common/plateau.h"
#include "train/torch/model/model_ema.h"
#include "train/torch/model/models.h"
#include "train/torch/step/grad_scaler.h"

namespace stoker::train {

// Standardize's per-feature statistics, as the run fitted them on its training data.
struct FittedStatistics {
  std::vector<float> mean;
  std::vector<float> std;
};

struct CheckpointMeta {
  int64_t epoch = 0;        // epoch to continue in
  int64_t next_batch = 0;   // first batch of that epoch still to train on
  int64_t global_step = 0;  // optimiser steps taken
  uint64_t seed = 0;
  int64_t batch_size = 0;
  std::string model;
  int64_t world_size = 1;                   // data-parallel processes that trained (1 in files from before)
  std::optional<GradScaler::State> scaler;  // amp fp16 only
  std::optional<int64_t> ema_updates;       // the file holds a moving average (ema_decay > 0)
  std::optional<PlateauState> plateau;      // schedule plateau only
  std::optional<int64_t> train_samples;     // the training data's sample count (absent in files from before)
  // The run's Standardize statistics (feature data with Standardize; absent in files from
  // before): a resumed run takes these rather than fitting the data again.
  std::optional<FittedStatistics> standardize;
};

// Throws SystemError naming the path when it cannot be written; the previous file stays.
// `ema` (if any) is saved with its update count; meta.ema_updates is not read.
void save_checkpoint(const std::string& path, Network& model, torch::optim::Optimizer& optimizer,
                     const CheckpointMeta& meta, const ModelEma* ema = nullptr);

// A checkpoint read once: its meta to check against the config, then its state loaded into
// a model and optimiser (--resume reads the file one time, not two). The constructor throws
// DataError naming the path for a missing, truncated or foreign file.
class CheckpointFile {
 public:
  explicit CheckpointFile(const std::string& path);
  const CheckpointMeta& meta() const { return meta_; }
  // Loads into `model` and `optimizer` and restores the CPU RNG. The optimizer takes the
  // file's state but keeps its own hyperparameters (its groups' options: the config's, which a
  // resume may change), on libtorch 1.13 and 2.x alike. `ema` (if any) gets the
  // file's moving average, or, from a file without one (meta().ema_updates empty), starts
  // over from the loaded model. Throws DataError when the state does not fit them.
  void load_into(Network& model, torch::optim::Optimizer& optimizer, ModelEma* ema = nullptr);

 private:
  std::string path_;
  torch::serialize::InputArchive archive_;
  CheckpointMeta meta_;
};

// The meta only.
CheckpointMeta read_checkpoint_meta(const std::string& path);

// CheckpointFile(path).load_into(model, optimizer); returns the meta.
CheckpointMeta load_checkpoint(const std::string& path, Network& model, torch::optim::Optimizer& optimizer);

}  // namespace stoker::train
