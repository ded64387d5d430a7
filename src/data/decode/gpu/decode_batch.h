// Private: a batch's samples split by the backend that decodes them (decode_plan.h), and the
// counts that statistics report.
//
// Thread safety: group_by_backend() is pure; a DecodeCounts is a plain value (one per worker
// or per epoch, merged with add()).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/decode/gpu/decode_plan.h"

namespace stoker::data::gpu {

// The slots (indices into the batch) each backend decodes, ascending: every slot is in
// exactly one group, so each decoded image goes back to the slot its sample came from.
struct BackendGroups {
  std::array<std::vector<int>, kBackendCount> slots;
  const std::vector<int>& of(DecodeBackend backend) const { return slots[static_cast<size_t>(backend)]; }
};

// Splits a batch's plans (one per slot, in slot order) into the hardware, CUDA and CPU groups.
BackendGroups group_by_backend(std::span<const DecodePlan> plans);

// How many files each backend decoded, and why those off the hardware engine were.
struct DecodeCounts {
  std::array<std::array<int64_t, kReasonCount>, kBackendCount> files{};  // [backend][reason]

  void add(const DecodePlan& plan) { ++files[static_cast<size_t>(plan.backend)][static_cast<size_t>(plan.reason)]; }
  void add(const DecodeCounts& other);
  int64_t on(DecodeBackend backend) const;
  // One line, backends with files only, reasons most frequent first: "60 on the hardware
  // engine; 3 on nvJPEG's CUDA path: progressive (3); 5 on the CPU: damaged (3), CMYK (2)".
  // "" when empty.
  std::string summary() const;
};

}  // namespace stoker::data::gpu
