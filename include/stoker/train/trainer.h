// stoker/train/trainer.h — run a training job from a TrainConfig. No torch headers here:
// the CLI and other layers call this without paying for libtorch's compile time.
//
// The batch size asked for is the batch size used: it is printed as
// "Batch size: 64 (requested: 64)" and never lowered; suggestions are printed, not applied.
// A run directory <output_dir>/<YYYY-mm-dd_HH-MM-SS> receives config.yaml (the effective
// config), metrics.csv (one row per epoch), summary.json and checkpoint.pt (written
// atomically: temp file, fsync, rename). SIGINT/SIGTERM finish the current step, save a
// checkpoint and return 130 / 143.
#pragma once

#include <string>

#include "stoker/train/config.h"

namespace stoker::train {

struct TrainUi {
  bool progress = true;       // progress line (redrawn on a terminal, every 10 % otherwise)
  bool json_summary = false;  // print summary.json to stdout at the end
};

// Trains per `config`. Returns the process exit code. Throws UsageError / DataError /
// SystemError for problems the user can fix (the CLI prints them as one line).
int run_training(const TrainConfig& config, const TrainUi& ui);

// "libtorch 1.13.1 (CPU)" or "not built with libtorch".
std::string torch_description();

// Why this build cannot train in several processes (--nproc-per-node, WORLD_SIZE > 1): one
// line saying what is missing and what to do; "" where it can.
std::string data_parallel_unavailable_reason();

}  // namespace stoker::train
