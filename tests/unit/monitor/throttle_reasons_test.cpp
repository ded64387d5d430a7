#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "stoker/monitor/sample.h"

namespace stoker::monitor {
namespace {

TEST(ThrottleReasonsTest, DescribesEachBitLowestFirst) {
  struct Case {
    uint64_t mask;
    const char* words;
  };
  const Case cases[] = {
      {0x0, "none"},
      {0x1, "idle"},
      {0x2, "app clocks"},
      {0x4, "power cap"},
      {0x8, "HW slowdown"},
      {0x10, "sync boost"},
      {0x20, "SW thermal"},
      {0x40, "HW thermal"},
      {0x80, "power brake"},
      {0x100, "display clocks"},
      {0x44, "power cap, HW thermal"},
      {0x1ff,
       "idle, app clocks, power cap, HW slowdown, sync boost, SW thermal, HW thermal, "
       "power brake, display clocks"},
      {0x1000, "0x1000"},                     // a bit this build does not know
      {0x8 | 0x3000, "HW slowdown, 0x3000"},  // unknown bits together, after the words
      {0x8000000000000000ULL, "0x8000000000000000"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(describe_throttle_reasons(c.mask), c.words) << std::hex << "mask 0x" << c.mask;
  }
}

}  // namespace
}  // namespace stoker::monitor
