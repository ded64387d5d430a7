// HostReader on fake /proc trees rewritten between samples, and once on the real /proc.
#include "stoker/monitor/host_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace stoker::monitor {
namespace {

using stoker::testing::TempDir;

constexpr int64_t kSecond = 1'000'000'000;

// A fake /proc: the files HostReader reads, written as the kernel would.
class FakeProc {
 public:
  std::string root() const { return dir_.str(); }

  // Aggregate and per-core "cpu" lines from (user, system, idle) jiffies; the other columns
  // stay 0 except `steal` on the aggregate, to check it counts as busy.
  void cpu(const std::vector<std::array<uint64_t, 3>>& cores, uint64_t steal = 0) const {
    uint64_t user = 0, system = 0, idle = 0;
    std::string lines;
    for (size_t i = 0; i < cores.size(); ++i) {
      user += cores[i][0];
      system += cores[i][1];
      idle += cores[i][2];
      lines += "cpu" + std::to_string(i) + " " + std::to_string(cores[i][0]) + " 0 " + std::to_string(cores[i][1]) +
               " " + std::to_string(cores[i][2]) + " 0 0 0 0 0 0\n";
    }
    dir_.write_text("stat", "cpu  " + std::to_string(user) + " 0 " + std::to_string(system) + " " +
                                std::to_string(idle) + " 0 0 0 " + std::to_string(steal) + " 0 0\n" + lines +
                                "intr 1 2 3\nctxt 99\nbtime 1700000000\n");
  }

  void file(const std::string& relative, const std::string& text) const { dir_.write_text(relative, text); }

  void remove(const std::string& relative) const { std::filesystem::remove_all(dir_.path() / relative); }

  // /proc/<pid>/stat with the fields HostReader reads; the rest look like a real line.
  void process(int pid, const std::string& comm, char state, int ppid, uint64_t utime, uint64_t stime,
               uint64_t start_time, uint64_t rss_pages) const {
    const std::string p = std::to_string(pid);
    dir_.write_text(p + "/stat", p + " (" + comm + ") " + std::string(1, state) + " " + std::to_string(ppid) + " " + p +
                                     " " + p + " 0 -1 4194560 10 0 0 0 " + std::to_string(utime) + " " +
                                     std::to_string(stime) + " 0 0 20 0 1 0 " + std::to_string(start_time) +
                                     " 1000000 " + std::to_string(rss_pages) +
                                     " 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 "
                                     "0 0 0\n");
  }

 private:
  TempDir dir_;
};

std::string diskstats_line(const std::string& name, uint64_t sectors_read, uint64_t sectors_written) {
  return "   8       0 " + name + " 100 0 " + std::to_string(sectors_read) + " 50 200 0 " +
         std::to_string(sectors_written) + " 60 0 70 110 0 0 0 0 0 0\n";
}

std::string net_dev_text(uint64_t lo, uint64_t eth0_rx, uint64_t eth0_tx, uint64_t eth1_rx, uint64_t eth1_tx) {
  auto line = [](const std::string& name, uint64_t rx, uint64_t tx) {
    return "  " + name + ": " + std::to_string(rx) + " 10 0 0 0 0 0 0 " + std::to_string(tx) + " 10 0 0 0 0 0 0\n";
  };
  return "Inter-|   Receive                                                |  Transmit\n"
         " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
         "errs drop fifo colls carrier compressed\n" +
         line("lo", lo, lo) + line("eth0", eth0_rx, eth0_tx) + line("eth1", eth1_rx, eth1_tx);
}

double ticks_percent(uint64_t ticks, double seconds) {
  return 100.0 * static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK)) / seconds;
}

TEST(HostReaderTest, CpuPercentExactTotalAndPerCore) {
  FakeProc proc;
  proc.cpu({{100, 50, 850}, {200, 100, 700}}, /*steal=*/10);
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  EXPECT_FALSE(s.cpu_percent.ok());  // one read: no interval yet
  EXPECT_TRUE(s.core_percent.empty());

  // core0: +30 user +10 system +60 idle -> 40 %; core1: +90 busy +10 idle -> 90 %.
  // Aggregate: +130 busy (+ 20 steal) of +200 (+20) jiffies.
  proc.cpu({{130, 60, 910}, {270, 120, 710}}, /*steal=*/30);
  reader.sample(&s, 2 * kSecond);
  ASSERT_TRUE(s.cpu_percent.ok());
  EXPECT_STREQ(s.cpu_percent.source, "/proc/stat");
  EXPECT_DOUBLE_EQ(s.cpu_percent.value, 100.0 * 150 / 220);
  ASSERT_EQ(s.core_percent.size(), 2u);
  EXPECT_FLOAT_EQ(s.core_percent[0], 40.0f);
  EXPECT_FLOAT_EQ(s.core_percent[1], 90.0f);
}

TEST(HostReaderTest, CpuCounterWrapGivesNoValueForThatIntervalThenRecovers) {
  FakeProc proc;
  proc.cpu({{1000, 0, 1000}, {1000, 0, 1000}});
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  // core0 wraps (back to small numbers), core1 goes on normally.
  proc.cpu({{5, 0, 5}, {1050, 0, 1050}});
  reader.sample(&s, 2 * kSecond);
  EXPECT_FALSE(s.cpu_percent.ok());
  ASSERT_EQ(s.core_percent.size(), 2u);
  EXPECT_TRUE(std::isnan(s.core_percent[0]));
  EXPECT_FLOAT_EQ(s.core_percent[1], 50.0f);
  // The wrapped read is the new baseline: the next interval has values again.
  proc.cpu({{15, 0, 35}, {1100, 0, 1100}});
  reader.sample(&s, 3 * kSecond);
  ASSERT_TRUE(s.cpu_percent.ok());
  EXPECT_DOUBLE_EQ(s.cpu_percent.value, 100.0 * (10 + 50) / (40 + 100));
  EXPECT_FLOAT_EQ(s.core_percent[0], 25.0f);
}

TEST(HostReaderTest, CpuCoreComingOnlineHasNoValueUntilItsSecondRead) {
  FakeProc proc;
  proc.cpu({{10, 0, 10}});
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  proc.cpu({{20, 0, 20}, {5, 0, 5}});
  reader.sample(&s, 2 * kSecond);
  ASSERT_EQ(s.core_percent.size(), 2u);
  EXPECT_FLOAT_EQ(s.core_percent[0], 50.0f);
  EXPECT_TRUE(std::isnan(s.core_percent[1]));
}

TEST(HostReaderTest, MemoryWithMemAvailable) {
  FakeProc proc;
  proc.file("meminfo",
            "MemTotal:       16000000 kB\nMemFree:         1000000 kB\n"
            "MemAvailable:    6000000 kB\nBuffers:          100000 kB\n"
            "Cached:          3000000 kB\nSwapTotal:       2000000 kB\n"
            "SwapFree:        1500000 kB\n");
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  ASSERT_TRUE(s.memory_total_bytes.ok());
  EXPECT_STREQ(s.memory_total_bytes.source, "/proc/meminfo");
  EXPECT_DOUBLE_EQ(s.memory_total_bytes.value, 16000000.0 * 1024);
  EXPECT_DOUBLE_EQ(s.memory_available_bytes.value, 6000000.0 * 1024);
  EXPECT_DOUBLE_EQ(s.memory_used_bytes.value, 10000000.0 * 1024);
  EXPECT_DOUBLE_EQ(s.swap_total_bytes.value, 2000000.0 * 1024);
  EXPECT_DOUBLE_EQ(s.swap_used_bytes.value, 500000.0 * 1024);
}

TEST(HostReaderTest, MemoryWithoutMemAvailableUsesFreeBuffersCached) {
  FakeProc proc;
  proc.file("meminfo",
            "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 250 kB\n"
            "SwapTotal: 0 kB\nSwapFree: 0 kB\n");
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  EXPECT_DOUBLE_EQ(s.memory_available_bytes.value, 400.0 * 1024);
  EXPECT_DOUBLE_EQ(s.memory_used_bytes.value, 600.0 * 1024);
  ASSERT_TRUE(s.swap_used_bytes.ok());  // no swap is a real 0, not unavailable
  EXPECT_DOUBLE_EQ(s.swap_used_bytes.value, 0.0);
}

TEST(HostReaderTest, DiskRatesOverWholeDisksOnly) {
  FakeProc proc;
  auto write = [&](uint64_t k) {
    // Each whole disk moves k sectors read and 2k written per step; partitions, loop and
    // zram devices move far more, and must not show.
    proc.file("diskstats", diskstats_line("loop0", 1000000 * k, 1000000 * k) + diskstats_line("sda", 100 * k, 200 * k) +
                               diskstats_line("sda1", 100 * k, 200 * k) +
                               diskstats_line("nvme0n1", 1000 + 100 * k, 200 * k) +
                               diskstats_line("nvme0n1p1", 7777 * k, 7777 * k) +
                               diskstats_line("vda", 100 * k, 200 * k) + diskstats_line("vda1", 9 * k, 9 * k) +
                               diskstats_line("mmcblk0", 100 * k, 200 * k) + diskstats_line("mmcblk0p1", 9 * k, 9 * k) +
                               diskstats_line("dm-0", 100 * k, 200 * k) + diskstats_line("zram0", 5555 * k, 5555 * k));
  };
  write(1);
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  EXPECT_FALSE(s.disk_read_bytes_per_s.ok());
  write(3);
  reader.sample(&s, 3 * kSecond);  // 2 s later
  ASSERT_TRUE(s.disk_read_bytes_per_s.ok());
  EXPECT_STREQ(s.disk_read_bytes_per_s.source, "/proc/diskstats");
  // 5 whole disks (sda, nvme0n1, vda, mmcblk0, dm-0), 200 sectors read each in 2 s.
  EXPECT_DOUBLE_EQ(s.disk_read_bytes_per_s.value, 5 * 200 * 512 / 2.0);
  EXPECT_DOUBLE_EQ(s.disk_write_bytes_per_s.value, 5 * 400 * 512 / 2.0);

  // A disk counter going back (device reset): no rate for that interval, then it recovers.
  write(1);
  reader.sample(&s, 4 * kSecond);
  EXPECT_FALSE(s.disk_read_bytes_per_s.ok());
  EXPECT_FALSE(s.disk_write_bytes_per_s.ok());
  write(2);
  reader.sample(&s, 5 * kSecond);
  ASSERT_TRUE(s.disk_read_bytes_per_s.ok());
  EXPECT_DOUBLE_EQ(s.disk_read_bytes_per_s.value, 5 * 100 * 512);
}

TEST(HostReaderTest, DiskAppearingBetweenSamplesAddsNoSpike) {
  FakeProc proc;
  proc.file("diskstats", diskstats_line("sda", 100, 100));
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  proc.file("diskstats", diskstats_line("sda", 110, 120) + diskstats_line("sdb", 1 << 30, 1 << 30));
  reader.sample(&s, 2 * kSecond);
  EXPECT_DOUBLE_EQ(s.disk_read_bytes_per_s.value, 10 * 512);
  EXPECT_DOUBLE_EQ(s.disk_write_bytes_per_s.value, 20 * 512);
}

TEST(HostReaderTest, NetworkRatesExcludeLoopback) {
  FakeProc proc;
  proc.file("net/dev", net_dev_text(1000, 5000, 600, 100, 10));
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  EXPECT_FALSE(s.net_rx_bytes_per_s.ok());
  proc.file("net/dev", net_dev_text(900000000, 7000, 1600, 300, 20));
  reader.sample(&s, 1 * kSecond + kSecond / 2);  // 0.5 s later
  ASSERT_TRUE(s.net_rx_bytes_per_s.ok());
  EXPECT_STREQ(s.net_rx_bytes_per_s.source, "/proc/net/dev");
  EXPECT_DOUBLE_EQ(s.net_rx_bytes_per_s.value, (2000 + 200) / 0.5);
  EXPECT_DOUBLE_EQ(s.net_tx_bytes_per_s.value, (1000 + 10) / 0.5);
}

TEST(HostReaderTest, MissingFilesLeaveFiguresUnavailableWithoutThrowing) {
  FakeProc proc;  // empty: no stat, meminfo, diskstats, net/dev
  HostReader reader(proc.root());
  reader.watch(4242);
  HostSample s;
  EXPECT_NO_THROW(reader.sample(&s, 1 * kSecond));
  EXPECT_NO_THROW(reader.sample(&s, 2 * kSecond));
  for (const Reading* r :
       {&s.cpu_percent, &s.memory_total_bytes, &s.memory_available_bytes, &s.memory_used_bytes, &s.swap_total_bytes,
        &s.swap_used_bytes, &s.disk_read_bytes_per_s, &s.disk_write_bytes_per_s, &s.net_rx_bytes_per_s,
        &s.net_tx_bytes_per_s, &s.process_cpu_percent, &s.process_rss_bytes, &s.process_count}) {
    EXPECT_FALSE(r->ok());
  }
  EXPECT_TRUE(s.core_percent.empty());
  EXPECT_TRUE(reader.watched_pids().empty());
  EXPECT_FALSE(reader.watched_alive());

  HostReader nowhere("/nonexistent/proc");
  nowhere.watch(1);
  EXPECT_NO_THROW(nowhere.sample(&s, 1 * kSecond));
  EXPECT_FALSE(s.memory_total_bytes.ok());
  EXPECT_FALSE(s.process_count.ok());
}

TEST(HostReaderTest, FileVanishingBetweenSamplesRestartsItsBaseline) {
  FakeProc proc;
  proc.cpu({{10, 0, 10}});
  HostReader reader(proc.root());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  proc.remove("stat");
  reader.sample(&s, 2 * kSecond);
  EXPECT_FALSE(s.cpu_percent.ok());
  proc.cpu({{20, 0, 20}});
  reader.sample(&s, 3 * kSecond);
  EXPECT_FALSE(s.cpu_percent.ok());  // a fresh baseline, not a rate across the gap
  proc.cpu({{30, 0, 30}});
  reader.sample(&s, 4 * kSecond);
  EXPECT_TRUE(s.cpu_percent.ok());
}

// root 100 -> child 200 -> grandchild 300; 100 -> 250 with an awkward name; 400 unrelated;
// 260 listed as a directory but without a stat file (exited during the scan).
void write_tree(const FakeProc& proc, uint64_t k) {
  proc.process(1, "init", 'S', 0, 5000 * k, 0, 1, 100);
  proc.process(100, "python", 'S', 1, 10 * k, 5 * k, 1000, 1000);
  proc.process(200, "pt_data_worker", 'R', 100, 20 * k, 0, 1100, 2000);
  proc.process(300, "grand child", 'S', 200, 30 * k, 0, 1200, 3000);
  proc.process(250, "my (weird) proc", 'S', 100, 0, 40 * k, 1150, 4000);
  proc.process(400, "unrelated", 'R', 1, 1000 * k, 1000 * k, 900, 99999);
  proc.file("260/cmdline", "");
  proc.file("self/stat", "not a pid directory");
}

TEST(HostReaderTest, ProcessTreeSumsDescendantsOnly) {
  FakeProc proc;
  write_tree(proc, 1);
  HostReader reader(proc.root());
  reader.watch(100);
  EXPECT_TRUE(reader.watched_alive());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  ASSERT_TRUE(s.process_count.ok());
  EXPECT_STREQ(s.process_count.source, "/proc/<pid>");
  EXPECT_EQ(s.process_count.value, 4);
  EXPECT_EQ(reader.watched_pids(), (std::vector<pid_t>{100, 200, 250, 300}));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  EXPECT_DOUBLE_EQ(s.process_rss_bytes.value, (1000 + 2000 + 3000 + 4000) * page);
  EXPECT_FALSE(s.process_cpu_percent.ok());  // first sample of this root

  write_tree(proc, 3);  // every member gains (10+5 + 20 + 30 + 40) ticks per step
  reader.sample(&s, 3 * kSecond);
  ASSERT_TRUE(s.process_cpu_percent.ok());
  EXPECT_DOUBLE_EQ(s.process_cpu_percent.value, ticks_percent(2 * 105, 2.0));

  // Watching the child instead: its own subtree.
  reader.watch(200);
  reader.sample(&s, 4 * kSecond);
  EXPECT_EQ(reader.watched_pids(), (std::vector<pid_t>{200, 300}));
  EXPECT_FALSE(s.process_cpu_percent.ok());  // a new root starts a new baseline
}

TEST(HostReaderTest, ProcessTreeMembersComingAndGoing) {
  FakeProc proc;
  write_tree(proc, 1);
  HostReader reader(proc.root());
  reader.watch(100);
  HostSample s;
  reader.sample(&s, 1 * kSecond);

  // 250 (40 ticks so far) exits; 500, a new child of 300 with a long past, appears; the
  // others gain 15 + 20 + 30 ticks.
  write_tree(proc, 2);
  proc.remove("250");
  proc.process(500, "late worker", 'R', 300, 7000, 7000, 1900, 10);
  reader.sample(&s, 2 * kSecond);
  EXPECT_EQ(reader.watched_pids(), (std::vector<pid_t>{100, 200, 300, 500}));
  ASSERT_TRUE(s.process_cpu_percent.ok());
  EXPECT_DOUBLE_EQ(s.process_cpu_percent.value, ticks_percent(65, 1.0));

  // 500 now counts from its first appearance.
  proc.process(500, "late worker", 'R', 300, 7050, 7000, 1900, 10);
  reader.sample(&s, 3 * kSecond);
  EXPECT_DOUBLE_EQ(s.process_cpu_percent.value, ticks_percent(50, 1.0));

  // 200 exits: the kernel re-parents 300 to init, so 300 and 500 leave the tree. The root
  // alone remains and its time did not move: 0 %, not negative.
  proc.remove("200");
  proc.process(300, "grand child", 'S', 1, 60, 0, 1200, 3000);
  reader.sample(&s, 4 * kSecond);
  EXPECT_EQ(reader.watched_pids(), (std::vector<pid_t>{100}));
  EXPECT_EQ(s.process_count.value, 1);
  ASSERT_TRUE(s.process_cpu_percent.ok());
  EXPECT_DOUBLE_EQ(s.process_cpu_percent.value, 0.0);
}

TEST(HostReaderTest, ProcessTreeReusedPidIsNotMistakenForTheOldProcess) {
  FakeProc proc;
  write_tree(proc, 1);
  HostReader reader(proc.root());
  reader.watch(100);
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  // 300 exits and its pid goes to a new child of 200 with different start time and more
  // ticks: its ticks are not a delta from the old 300.
  proc.process(300, "new three hundred", 'R', 200, 500, 500, 5000, 3000);
  reader.sample(&s, 2 * kSecond);
  EXPECT_EQ(s.process_count.value, 4);
  EXPECT_DOUBLE_EQ(s.process_cpu_percent.value, 0.0);
}

TEST(HostReaderTest, ProcessTreeCachedOutsiderReusedAsChildIsFoundByFullRescan) {
  FakeProc proc;
  write_tree(proc, 1);
  HostReader reader(proc.root());
  reader.watch(100);
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  // The unrelated 400 exits and a new child of the root gets pid 400 between two samples:
  // its cached ppid hides it until the periodic full rescan (documented limitation).
  proc.process(400, "reused", 'S', 100, 0, 0, 5000, 10);
  reader.sample(&s, 2 * kSecond);
  EXPECT_EQ(s.process_count.value, 4);
  reader.sample(&s, 40 * kSecond);
  EXPECT_EQ(s.process_count.value, 5);
  EXPECT_EQ(reader.watched_pids(), (std::vector<pid_t>{100, 200, 250, 300, 400}));
}

TEST(HostReaderTest, ProcessTreeStaleCachedParentIsReReadBeforeTrusted) {
  FakeProc proc;
  write_tree(proc, 1);
  proc.process(401, "outsider child", 'S', 400, 0, 0, 950, 10);
  HostReader reader(proc.root());
  reader.watch(100);
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  // 400 exits: the kernel re-parents 401 to init, but 401's cached ppid still says 400.
  proc.remove("400");
  proc.process(401, "outsider child", 'S', 1, 0, 0, 950, 10);
  reader.sample(&s, 2 * kSecond);
  // The root forks a child that is given pid 400: the cached 401 now points into the tree
  // and must be re-read, not counted.
  proc.process(400, "new child", 'S', 100, 0, 0, 5000, 10);
  reader.sample(&s, 3 * kSecond);
  EXPECT_EQ(reader.watched_pids(), (std::vector<pid_t>{100, 200, 250, 300, 400}));
}

TEST(HostReaderTest, WatchedAliveFalseForMissingZombieAndNone) {
  FakeProc proc;
  write_tree(proc, 1);
  HostReader reader(proc.root());
  EXPECT_FALSE(reader.watched_alive());  // nothing watched
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  EXPECT_FALSE(s.process_count.ok());
  EXPECT_TRUE(reader.watched_pids().empty());

  reader.watch(777);
  EXPECT_FALSE(reader.watched_alive());
  reader.sample(&s, 2 * kSecond);
  EXPECT_FALSE(s.process_count.ok());

  reader.watch(200);
  EXPECT_TRUE(reader.watched_alive());
  proc.process(200, "pt_data_worker", 'Z', 100, 20, 0, 1100, 0);
  EXPECT_FALSE(reader.watched_alive());
  proc.remove("200");
  EXPECT_FALSE(reader.watched_alive());
  reader.sample(&s, 3 * kSecond);
  EXPECT_FALSE(s.process_count.ok());
  EXPECT_TRUE(reader.watched_pids().empty());
}

TEST(HostReaderTest, RealProcSmoke) {
  if (!std::filesystem::exists("/proc/self/stat")) GTEST_SKIP() << "no /proc";
  HostReader reader;
  reader.watch(getpid());
  EXPECT_TRUE(reader.watched_alive());
  HostSample s;
  reader.sample(&s, 1 * kSecond);
  // Burn some CPU so the interval has jiffies to count.
  volatile double sink = 0;
  for (int i = 0; i < 20'000'000; ++i) sink = sink + std::sqrt(static_cast<double>(i));
  usleep(20'000);
  reader.sample(&s, 2 * kSecond);
  ASSERT_TRUE(s.cpu_percent.ok());
  EXPECT_GE(s.cpu_percent.value, 0.0);
  EXPECT_LE(s.cpu_percent.value, 100.0);
  EXPECT_FALSE(s.core_percent.empty());
  ASSERT_TRUE(s.memory_total_bytes.ok());
  EXPECT_GT(s.memory_total_bytes.value, 0.0);
  EXPECT_TRUE(s.memory_used_bytes.ok());
  ASSERT_TRUE(s.process_rss_bytes.ok());
  EXPECT_GT(s.process_rss_bytes.value, 0.0);
  EXPECT_GE(s.process_count.value, 1);
  EXPECT_TRUE(s.process_cpu_percent.ok());
  ASSERT_FALSE(reader.watched_pids().empty());
  EXPECT_EQ(reader.watched_pids().front(), getpid());
}

}  // namespace
}  // namespace stoker::monitor
