// allocation_ceiling_bytes(): what ulimit -v leaves, measured in a child that sets the limit;
// rank_cores(): a rank's share of the cores, and a pinned rank's own CPUs, measured in a child
// that pins itself.
#include "stoker/core/process.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "support/sanitizers.h"

namespace stoker {
namespace {

TEST(AllocationCeilingTest, NoMoreThanTheMachinesRamAndSwap) {
  struct sysinfo info {};
  ASSERT_EQ(sysinfo(&info), 0);
  const double ram_and_swap =
      (static_cast<double>(info.totalram) + static_cast<double>(info.totalswap)) * info.mem_unit;
  EXPECT_GT(allocation_ceiling_bytes(), 0);
  EXPECT_LE(allocation_ceiling_bytes(), ram_and_swap);
}

TEST(AllocationCeilingTest, UlimitVLeavesTheLimitLessWhatIsInUseAndAllocationsAboveItFail) {
#if defined(STOKER_UNDER_ASAN) || defined(STOKER_UNDER_TSAN)
  GTEST_SKIP() << "a sanitizer's shadow memory needs far more address space than any ulimit -v leaves";
#endif
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The limit: what is in use now plus 256 MiB.
    const double before = allocation_ceiling_bytes();
    rlimit limit{};
    getrlimit(RLIMIT_AS, &limit);
    long pages = 0;
    if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
      std::fclose(statm);
    }
    limit.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{256} << 20);
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(10);
    const double ceiling = allocation_ceiling_bytes();
    if (!(ceiling <= 256.0 * (1 << 20) && ceiling > 200.0 * (1 << 20) && ceiling < before)) _exit(11);
    // Fresh address space, as a new array's allocation takes: malloc could reuse a heap that an
    // earlier test in this process grew and the tuned allocator kept (host_tuning_test), which
    // counts as in use and so lies below the ceiling.
    void* above = mmap(nullptr, static_cast<size_t>(ceiling) + (size_t{64} << 20), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    _exit(above == MAP_FAILED ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: setrlimit failed; 11: the ceiling did not follow the limit; "
                                       "12: an allocation above the ceiling succeeded";
}

TEST(RankCoresTest, RanksThatShareTheirParentsCpusShareThemEqually) {
  const pid_t child = fork();  // a child has its parent's CPUs, as a launcher's ranks have
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (pinned_by_launcher()) _exit(10);
    const int cpus = usable_cores();
    if (rank_cores(1) != cpus || rank_cores(0) != cpus) _exit(11);
    if (rank_cores(2) != std::max(1, cpus / 2) || rank_cores(cpus + 1) != 1) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: seen as pinned; 11: one rank did not get every CPU; "
                                       "12: two ranks did not get half each, or more ranks than CPUs not 1 each";
}

TEST(RankCoresTest, ARankPinnedToFewerCpusThanItsParentKeepsThemUndivided) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Pinned to the first half of its parent's CPUs (at least 1), as numactl or taskset pins a rank.
    cpu_set_t parents, half;
    CPU_ZERO(&parents);
    CPU_ZERO(&half);
    if (sched_getaffinity(0, sizeof(parents), &parents) != 0) _exit(10);
    const int keep = std::max(1, CPU_COUNT(&parents) / 2);
    for (int cpu = 0; cpu < CPU_SETSIZE && CPU_COUNT(&half) < keep; ++cpu) {
      if (CPU_ISSET(cpu, &parents)) CPU_SET(cpu, &half);
    }
    if (CPU_COUNT(&half) == CPU_COUNT(&parents)) _exit(0);  // one CPU: nothing to pin to fewer
    if (sched_setaffinity(0, sizeof(half), &half) != 0) _exit(10);
    if (!pinned_by_launcher()) _exit(11);
    // As many ranks as the parent has CPUs: undivided, each keeps the half it was pinned to.
    if (usable_cores() != keep || rank_cores(CPU_COUNT(&parents)) != keep) _exit(12);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: sched_getaffinity/setaffinity failed; 11: not seen as pinned; "
                                       "12: the pinned CPUs were divided again";
}

}  // namespace
}  // namespace stoker
