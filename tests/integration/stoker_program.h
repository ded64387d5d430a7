// What the command-line tests run: the stoker program of this build, and the dataset the
// training tests use where Debian's dataset-fashion-mnist is installed.
#pragma once

#include <cstdint>
#include <string>

#include "support/build_paths.h"
#include "support/run_command.h"

namespace stoker::testing {

inline const std::string kStoker = build_path("src/stoker");
inline const std::string kFashion = "/usr/share/datasets/fashion-mnist";

// The optimizer steps the checkpoint of run folder `run` holds: a resume with --max-steps 1
// names them when it refuses (and trains one step when the checkpoint is at step 0). For
// tests that resume for exactly one more step: --max-steps checkpoint_step(run) + 1.
inline int64_t checkpoint_step(const std::string& run, const std::string& flags = "") {
  const CommandResult r = run_command(kStoker + " train --no-progress --max-steps 1 " + flags + " --resume " + run);
  const std::string named = "is not beyond the checkpoint's step ";
  const size_t at = r.err.find(named);
  return r.exit_code == 0 || at == std::string::npos ? 0 : std::stoll(r.err.substr(at + named.size()));
}

}  // namespace stoker::testing
