// The entry-stride inference of process_list.h, on bytes laid out as each driver writes them.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "monitor/gpu/process_list.h"

namespace stoker::monitor {
namespace {

// `entries` laid out `stride` bytes apart, as NVML writes them, in a zeroed 32-byte-a-slot
// buffer like the reader's.
std::vector<uint8_t> layout(const std::vector<GpuProcess>& entries, size_t stride) {
  std::vector<uint8_t> bytes(entries.size() * 32, 0);
  for (size_t i = 0; i < entries.size(); ++i) {
    std::memcpy(bytes.data() + i * stride, &entries[i].pid, 4);
    std::memcpy(bytes.data() + i * stride + 8, &entries[i].used_bytes, 8);
    if (stride >= 24) std::memset(bytes.data() + i * stride + 16, 0xFF, 8);  // no MIG
  }
  return bytes;
}

TEST(GpuProcessListTest, InfersTheStrideAVersion3CallWrote) {
  const std::vector<GpuProcess> entries = {{4242, 1 << 30}, {77, 3ULL << 30}, {4194304, 0}};
  struct Case {
    size_t written;
    ProcessLayout layout;
    size_t expected;
  };
  const Case cases[] = {
      {24, ProcessLayout::kV2, 24},  // what _v2 and _v3 write
      {32, ProcessLayout::kV2, 32},  // _v3 on drivers 535.43 to 535.86
      {16, ProcessLayout::kV1, 16},  // the unversioned calls
  };
  for (const Case& c : cases) {
    const std::vector<uint8_t> bytes = layout(entries, c.written);
    EXPECT_EQ(process_entry_stride(bytes, 3, c.layout), c.expected) << "written " << c.written;
    std::vector<GpuProcess> decoded;
    decode_process_list(bytes, 3, c.layout, &decoded);
    ASSERT_EQ(decoded.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(decoded[i].pid, entries[i].pid);
      EXPECT_EQ(decoded[i].used_bytes, entries[i].used_bytes);
    }
  }
}

TEST(GpuProcessListTest, OneEntryOrNoneNeedsNoGuess) {
  const std::vector<uint8_t> one = layout({{9, 100}}, 32);
  std::vector<GpuProcess> decoded;
  decode_process_list(one, 1, ProcessLayout::kV2, &decoded);
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].pid, 9u);
  EXPECT_EQ(decoded[0].used_bytes, 100u);
  decoded.clear();
  decode_process_list({}, 0, ProcessLayout::kV2, &decoded);
  EXPECT_TRUE(decoded.empty());
}

TEST(GpuProcessListTest, NeverReadsPastTheBuffer) {
  // A count larger than the bytes hold (a misbehaving driver) decodes what fits.
  const std::vector<uint8_t> bytes = layout({{9, 100}, {10, 200}}, 24);
  std::vector<GpuProcess> decoded;
  decode_process_list(std::span<const uint8_t>(bytes.data(), 48), 5, ProcessLayout::kV2, &decoded);
  EXPECT_EQ(decoded.size(), 2u);
}

}  // namespace
}  // namespace stoker::monitor
