// stoker/train/doctor.h — `stoker doctor`: in one short run, measure the input pipeline
// alone (at the configured worker count and at each count up to the cores), the model alone
// on synthetic batches already on the device, and both together; name which one limits and
// by how much, and rank the changes that would help. Changes that are cheap to try (the
// worker count, AMP, a larger batch for the model) are measured, not predicted.
// No torch headers here. Not thread-safe; one doctor per process.
#pragma once

#include <string>

#include "stoker/train/config.h"

namespace stoker::train {

struct DoctorOptions {
  double seconds = 3;            // per measurement
  bool json = false;             // one JSON object on stdout instead of the report
  bool find_batch_size = false;  // also search the largest batch that fits and the fastest
};

// Returns the exit code. Throws UsageError / DataError (one line) when the config cannot
// start (missing data, unknown model, bad values).
int run_doctor(const TrainConfig& config, const DoctorOptions& options);

}  // namespace stoker::train
