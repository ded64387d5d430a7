// Batching for GPU decoding: see decode_batch.h.
#include "data/decode/gpu/decode_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace stoker::data::gpu {

BackendGroups group_by_backend(std::span<const DecodePlan> plans) {
  BackendGroups groups;
  for (size_t slot = 0; slot < plans.size(); ++slot) {
    groups.slots[static_cast<size_t>(plans[slot].backend)].push_back(static_cast<int>(slot));
  }
  return groups;
}

void DecodeCounts::add(const DecodeCounts& other) {
  for (size_t b = 0; b < kBackendCount; ++b) {
    for (size_t r = 0; r < kReasonCount; ++r) files[b][r] += other.files[b][r];
  }
}

int64_t DecodeCounts::on(DecodeBackend backend) const {
  const auto& row = files[static_cast<size_t>(backend)];
  return std::accumulate(row.begin(), row.end(), int64_t{0});
}

std::string DecodeCounts::summary() const {
  static constexpr const char* kWhere[] = {"on the hardware engine", "on nvJPEG's CUDA path", "on the CPU"};
  std::string line;
  for (size_t b = 0; b < kBackendCount; ++b) {
    const int64_t total = on(static_cast<DecodeBackend>(b));
    if (total == 0) continue;
    if (!line.empty()) line += "; ";
    line += fmt::format("{} {}", total, kWhere[b]);
    std::vector<size_t> reasons;
    for (size_t r = 0; r < kReasonCount; ++r) {
      if (files[b][r] > 0 && static_cast<DecodeReason>(r) != DecodeReason::kNone) reasons.push_back(r);
    }
    std::stable_sort(reasons.begin(), reasons.end(), [&](size_t x, size_t y) { return files[b][x] > files[b][y]; });
    for (size_t i = 0; i < reasons.size(); ++i) {
      line += fmt::format("{}{} ({})", i == 0 ? ": " : ", ", to_string(static_cast<DecodeReason>(reasons[i])),
                          files[b][reasons[i]]);
    }
  }
  return line;
}

}  // namespace stoker::data::gpu
