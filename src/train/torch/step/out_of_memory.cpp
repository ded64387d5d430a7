#include "train/torch/step/out_of_memory.h"

#include <fmt/format.h>

namespace stoker::train {

SystemError out_of_memory(const TrainConfig& cfg, const torch::Device& device, const std::string& where) {
  const int effective = cfg.batch_size * cfg.accumulation_steps;
  std::string tries;
  if (cfg.batch_size > 1) {
    const int half = (cfg.batch_size + 1) / 2;
    tries = fmt::format("--batch-size {} --accumulation-steps {} (effective batch {}{})", half,
                        cfg.accumulation_steps * 2, half * cfg.accumulation_steps * 2,
                        half * cfg.accumulation_steps * 2 == effective ? ", as now" : "");
  }
  if (cfg.amp == AmpMode::kOff) tries += std::string(tries.empty() ? "" : ", ") + "--amp bf16";
  if (tries.empty()) tries = "a smaller model or input size";
  return SystemError(
      fmt::format("out of memory {} at batch size {} on {}; try {}, or stoker doctor "
                  "--find-batch-size to find the largest batch that fits",
                  where, cfg.batch_size, device.str(), tries));
}

}  // namespace stoker::train
