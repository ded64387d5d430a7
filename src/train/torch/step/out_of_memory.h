// Out of memory during training or validation, on the GPU or the host: one line naming the
// batch size that failed and what keeps the effective batch (UX: never a raw allocator
// exception).
#pragma once

#include <torch/torch.h>

#include <exception>
#include <string>

#include "stoker/core/error.h"
#include "stoker/train/config.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

// "out of memory <where> at batch size 256 on cuda:0; try --batch-size 128
// --accumulation-steps 2 (effective batch 256, as now), --amp bf16, or stoker doctor ..."
SystemError out_of_memory(const TrainConfig& cfg, const torch::Device& device, const std::string& where);

// Runs `work`; an out-of-memory failure in it becomes out_of_memory()'s one line, with
// `where()` saying what ran out. Other failures pass through unchanged.
template <typename Work, typename Where>
auto naming_out_of_memory(const TrainConfig& cfg, const torch::Device& device, Where where, Work work) {
  try {
    return work();
  } catch (const std::exception& e) {
    if (!compat::is_out_of_memory(e)) throw;
    throw out_of_memory(cfg, device, where());
  }
}

}  // namespace stoker::train
