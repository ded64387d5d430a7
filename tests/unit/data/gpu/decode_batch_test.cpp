// Batching for GPU decoding: every slot in exactly one backend's group, in order; the counts
// and the line statistics print.
#include "data/decode/gpu/decode_batch.h"

#include <gtest/gtest.h>

#include <vector>

namespace stoker::data::gpu {
namespace {

DecodePlan plan(DecodeBackend backend, DecodeReason reason = DecodeReason::kNone) {
  DecodePlan p;
  p.backend = backend;
  p.reason = reason;
  return p;
}

TEST(GpuDecodeBatchTest, EachSlotGoesToItsBackendsGroupInOrder) {
  using enum DecodeBackend;
  const std::vector<DecodePlan> plans = {
      plan(kHardware), plan(kCpu, DecodeReason::kCmyk),    plan(kCuda, DecodeReason::kProgressive),
      plan(kHardware), plan(kCpu, DecodeReason::kDamaged), plan(kHardware)};
  const BackendGroups groups = group_by_backend(plans);
  EXPECT_EQ(groups.of(kHardware), (std::vector<int>{0, 3, 5}));
  EXPECT_EQ(groups.of(kCuda), (std::vector<int>{2}));
  EXPECT_EQ(groups.of(kCpu), (std::vector<int>{1, 4}));
}

TEST(GpuDecodeBatchTest, EmptyAndSingleBackendBatches) {
  const BackendGroups none = group_by_backend({});
  for (const auto& group : none.slots) EXPECT_TRUE(group.empty());
  const std::vector<DecodePlan> all_cpu(4, plan(DecodeBackend::kCpu, DecodeReason::kNotJpeg));
  const BackendGroups cpu = group_by_backend(all_cpu);
  EXPECT_EQ(cpu.of(DecodeBackend::kCpu), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(cpu.of(DecodeBackend::kHardware).empty());
}

TEST(GpuDecodeBatchTest, CountsSayWhereFilesWentAndWhy) {
  DecodeCounts counts;
  EXPECT_EQ(counts.summary(), "");
  for (int i = 0; i < 60; ++i) counts.add(plan(DecodeBackend::kHardware));
  for (int i = 0; i < 3; ++i) counts.add(plan(DecodeBackend::kCuda, DecodeReason::kProgressive));
  DecodeCounts other;
  for (int i = 0; i < 2; ++i) other.add(plan(DecodeBackend::kCpu, DecodeReason::kCmyk));
  for (int i = 0; i < 3; ++i) other.add(plan(DecodeBackend::kCpu, DecodeReason::kDamaged));
  counts.add(other);
  EXPECT_EQ(counts.on(DecodeBackend::kCpu), 5);
  EXPECT_EQ(counts.summary(),
            "60 on the hardware engine; 3 on nvJPEG's CUDA path: progressive (3); 5 on the CPU: damaged (3), CMYK (2)");
}

}  // namespace
}  // namespace stoker::data::gpu
