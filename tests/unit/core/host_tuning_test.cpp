#include "stoker/core/host_tuning.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "support/sanitizers.h"

namespace stoker {
namespace {

#if defined(STOKER_UNDER_ASAN) || defined(STOKER_UNDER_TSAN)
constexpr bool kSanitizerAllocator = true;  // their allocator ignores mallopt
#else
constexpr bool kSanitizerAllocator = false;
#endif

long minor_faults() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// One "training step" of host memory: a 48 MiB block (above the largest mmap threshold glibc
// ever picks by itself, so it is mapped and unmapped each time by default), four of 8 MiB and
// eight of 1 MiB, each written in full, then freed. Returns the minor page faults it took.
long step_faults() {
  const std::vector<size_t> sizes = {48u << 20, 8u << 20, 8u << 20, 8u << 20, 8u << 20, 1u << 20, 1u << 20,
                                     1u << 20,  1u << 20, 1u << 20, 1u << 20, 1u << 20, 1u << 20};
  const long before = minor_faults();
  std::vector<void*> blocks;
  for (const size_t size : sizes) {
    void* p = std::malloc(size);
    std::memset(p, 1, size);
    asm volatile("" : : "r"(p) : "memory");  // keep the writes: the compiler may not drop them
    blocks.push_back(p);
  }
  for (void* p : blocks) std::free(p);
  return minor_faults() - before;
}

TEST(HostTuningTest, TunedAllocatorReusesFreedBlocksWithoutPageFaults) {
  if (kSanitizerAllocator) GTEST_SKIP() << "the sanitizer's allocator ignores mallopt";
  unsetenv("GLIBC_TUNABLES");
  unsetenv("MALLOC_MMAP_THRESHOLD_");
  unsetenv("MALLOC_TRIM_THRESHOLD_");
  unsetenv("MALLOC_TOP_PAD_");
#if !defined(__GLIBC__)
  GTEST_SKIP() << "not glibc";
#endif
  ASSERT_TRUE(tune_allocator_for_training());
  step_faults();  // the first step faults its pages in once
  const long pages = (48 + 32 + 8) * 256;
  for (int step = 0; step < 3; ++step) {
    // Untuned, glibc maps and unmaps the 48 MiB block every step: at least 12,288 faults.
    EXPECT_LT(step_faults(), pages / 20) << "step " << step << " faulted its memory in again";
  }
}

TEST(HostTuningTest, LeavesAllocatorAloneWhenTheEnvironmentSetsIt) {
  setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1048576", 1);
  EXPECT_FALSE(tune_allocator_for_training());
  const HostTuning t = tune_host_for_training();
  EXPECT_FALSE(t.allocator_tuned);
  EXPECT_EQ(t.allocator, "malloc as set by the environment");
  unsetenv("GLIBC_TUNABLES");

  // Other tunables are not malloc settings.
  setenv("GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F", 1);
  if (!kSanitizerAllocator) {
    EXPECT_TRUE(tune_allocator_for_training());
  }
  unsetenv("GLIBC_TUNABLES");
}

}  // namespace
}  // namespace stoker
