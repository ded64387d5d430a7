// The /proc parsers on literal text: field positions, odd names, malformed lines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "monitor/host/cpu_stat.h"
#include "monitor/host/device_counters.h"
#include "monitor/host/diskstats.h"
#include "monitor/host/meminfo.h"
#include "monitor/host/net_dev.h"
#include "monitor/host/proc_files.h"
#include "monitor/host/proc_stat.h"
#include "support/temp_dir.h"

namespace stoker::monitor::host {
namespace {

using stoker::testing::TempDir;

std::vector<std::string> names_of(const std::vector<DeviceCounters>& devices) {
  std::vector<std::string> names;
  for (const DeviceCounters& d : devices) names.push_back(d.name);
  return names;
}

TEST(ProcFilesTest, ReadsWholeFileAndReusesBuffer) {
  TempDir dir;
  const std::string big(10000, 'x');  // more than the initial 4 KiB: the buffer grows
  const std::string path = dir.write_text("big", big);
  std::string buffer;
  ASSERT_TRUE(read_small_file(path.c_str(), &buffer));
  EXPECT_EQ(buffer, big);
  const std::string small_path = dir.write_text("small", "abc\n");
  const size_t capacity = buffer.capacity();
  ASSERT_TRUE(read_small_file(small_path.c_str(), &buffer));
  EXPECT_EQ(buffer, "abc\n");
  EXPECT_EQ(buffer.capacity(), capacity);
  EXPECT_FALSE(read_small_file((dir.str() + "/missing").c_str(), &buffer));
  EXPECT_TRUE(buffer.empty());
  EXPECT_FALSE(read_small_file(dir.str().c_str(), &buffer));  // a directory: EISDIR
}

TEST(ProcFilesTest, LinesAndFields) {
  std::string_view text = "a  b\tc\n\nlast";
  std::string_view line;
  ASSERT_TRUE(next_line(&text, &line));
  std::string_view field;
  ASSERT_TRUE(next_field(&line, &field));
  EXPECT_EQ(field, "a");
  ASSERT_TRUE(skip_fields(&line, 1));
  ASSERT_TRUE(next_field(&line, &field));
  EXPECT_EQ(field, "c");
  EXPECT_FALSE(next_field(&line, &field));
  ASSERT_TRUE(next_line(&text, &line));
  EXPECT_EQ(line, "");
  ASSERT_TRUE(next_line(&text, &line));
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(next_line(&text, &line));

  uint64_t value = 0;
  EXPECT_TRUE(parse_u64("18446744073709551615", &value));
  EXPECT_EQ(value, UINT64_MAX);
  EXPECT_FALSE(parse_u64("18446744073709551616", &value));
  EXPECT_FALSE(parse_u64("-1", &value));
  EXPECT_FALSE(parse_u64("12x", &value));
  EXPECT_FALSE(parse_u64("", &value));
  std::string path = "/proc/";
  append_decimal(&path, 4242);
  EXPECT_EQ(path, "/proc/4242");
}

TEST(CpuStatTest, BusyCountsIrqAndStealButNotIowaitOrGuestTwice) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const std::string text =
      "cpu  100 20 30 400 50 5 6 7 90 9\n"
      "cpu0 60 10 15 200 25 2 3 4 0 0\n"
      "cpu1 40 10 15 200 25 3 3 3 0 0\n"
      "intr 12345 1 2 3\n"
      "cpu9 this line is past the cpu block and ignored\n";
  CpuStat stat;
  ASSERT_TRUE(parse_cpu_stat(text, &stat));
  EXPECT_EQ(stat.all.busy, 100u + 20 + 30 + 5 + 6 + 7);
  EXPECT_EQ(stat.all.total, stat.all.busy + 400 + 50);
  ASSERT_EQ(stat.cores.size(), 2u);
  EXPECT_EQ(stat.cores[1].busy, 40u + 10 + 15 + 3 + 3 + 3);
}

TEST(CpuStatTest, OldKernelShortLinesAndOfflineGaps) {
  CpuStat stat;
  ASSERT_TRUE(parse_cpu_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\ncpu2 1 2 3 4\n", &stat));
  EXPECT_EQ(stat.all.busy, 6u);
  EXPECT_EQ(stat.all.total, 10u);
  ASSERT_EQ(stat.cores.size(), 3u);
  EXPECT_TRUE(stat.cores[0].present);
  EXPECT_FALSE(stat.cores[1].present);  // offline cpu1
  EXPECT_TRUE(stat.cores[2].present);
  EXPECT_FALSE(parse_cpu_stat("cpu 1 2\n", &stat));
  EXPECT_FALSE(parse_cpu_stat("", &stat));
}

TEST(CpuStatTest, PercentBetweenReads) {
  const CpuTimes a{100, 400, true};
  const CpuTimes b{150, 500, true};
  EXPECT_DOUBLE_EQ(*busy_percent(a, b), 50.0);
  EXPECT_FALSE(busy_percent(b, a));                                     // backwards
  EXPECT_FALSE(busy_percent(a, a));                                     // no jiffy passed
  EXPECT_FALSE(busy_percent(CpuTimes{}, b));                            // core absent before
  EXPECT_FALSE(busy_percent(a, CpuTimes{120, 390, true}));              // total back, busy on
  EXPECT_DOUBLE_EQ(*busy_percent(a, CpuTimes{130, 420, true}), 100.0);  // idle stepped back
}

TEST(MeminfoTest, FieldsInBytes) {
  const MemInfo info = parse_meminfo(
      "MemTotal:       1000 kB\n"
      "MemFree:         100 kB\n"
      "MemAvailable:    600 kB\n"
      "Buffers:          10 kB\n"
      "Cached:          200 kB\n"
      "SwapCached:        1 kB\n"
      "SwapTotal:       500 kB\n"
      "SwapFree:        400 kB\n");
  EXPECT_EQ(info.total, 1000u * 1024);
  EXPECT_EQ(info.available, 600u * 1024);
  EXPECT_EQ(info.swap_total, 500u * 1024);
  EXPECT_EQ(info.swap_free, 400u * 1024);
}

TEST(MeminfoTest, AvailableFallsBackToFreeBuffersCached) {
  const MemInfo info =
      parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\nSwapCached: 7 kB\n");
  EXPECT_EQ(info.available, 310u * 1024);
  EXPECT_FALSE(info.swap_total);
  EXPECT_FALSE(parse_meminfo("MemTotal: 1000 kB\nMemFree: 100 kB\n").available);
}

TEST(DiskstatsTest, WholeDisksOnly) {
  struct Case {
    const char* name;
    bool kept;
  };
  const Case cases[] = {
      {"sda", true},     {"sda1", false},      {"sda15", false},   {"sdaa", true},       {"sdaa1", false},
      {"nvme0n1", true}, {"nvme0n1p1", false}, {"nvme0n10", true}, {"vda", true},        {"vda1", false},
      {"xvda", true},    {"xvda2", false},     {"mmcblk0", true},  {"mmcblk0p1", false}, {"loop0", false},
      {"loop12", false}, {"loop0p1", false},   {"ram0", false},    {"zram0", false},     {"sr0", false},
      {"fd0", false},    {"dm-0", true},       {"dm-10", true},    {"md0", true},        {"md0p1", false},
      {"md127", true},   {"nbd0", true},
  };
  std::string text;
  uint64_t n = 1;
  for (const Case& c : cases) {
    text += "   8       0 " + std::string(c.name) + " 1 2 " + std::to_string(n) + " 4 5 6 " + std::to_string(10 * n) +
            " 8 0 9 10 0 0 0 0 0 0\n";
    ++n;
  }
  std::vector<DeviceCounters> disks;
  parse_diskstats(text, &disks);
  std::vector<std::string> expected;
  for (const Case& c : cases) {
    if (c.kept) expected.push_back(c.name);
  }
  EXPECT_EQ(names_of(disks), expected);
  EXPECT_EQ(disks[0].in, 1u * 512);    // sda: sectors read (field 6) x 512
  EXPECT_EQ(disks[0].out, 10u * 512);  // sectors written (field 10)
}

TEST(DiskstatsTest, PartitionListedBeforeItsDiskAndMalformedLines) {
  std::vector<DeviceCounters> disks;
  parse_diskstats(
      "8 1 sda1 1 1 1 1 1 1 1 1 1 1 1\n"
      "8 0 sda 1 1 1 1 1 1 1 1 1 1 1\n"
      "8 16 sdb 1 1 1\n"           // too short
      "8 32 sdc 1 1 x 1 1 1 1\n",  // not a number
      &disks);
  EXPECT_EQ(names_of(disks), (std::vector<std::string>{"sda"}));
}

TEST(NetDevTest, AllInterfacesButLoopback) {
  std::vector<DeviceCounters> interfaces;
  parse_net_dev(
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n"
      "    lo:    3267      29    0    0    0     0          0         0     3267      29    0 "
      "   0    0     0       0          0\n"
      "  eth0: 284117883    6267    0    0    0     0          0         0   338334    4459    "
      "0    0    0     0       0          0\n"
      "wlan0:123456789012 5 0 0 0 0 0 0 42 1 0 0 0 0 0 0\n"  // old kernels: no blank
      "  bad0: 1 2 3\n",
      &interfaces);
  ASSERT_EQ(names_of(interfaces), (std::vector<std::string>{"eth0", "wlan0"}));
  EXPECT_EQ(interfaces[0].in, 284117883u);
  EXPECT_EQ(interfaces[0].out, 338334u);
  EXPECT_EQ(interfaces[1].in, 123456789012u);
  EXPECT_EQ(interfaces[1].out, 42u);
}

TEST(DiskNetCountersTest, MatchedByNameNewDevicesAddNothing) {
  const std::vector<DeviceCounters> before = {{"a", 100, 10}, {"gone", 5, 5}};
  const std::vector<DeviceCounters> after = {{"new", 1000000, 1000000}, {"a", 150, 30}};
  CounterIncrease increase;
  ASSERT_TRUE(sum_increases(before, after, &increase));
  EXPECT_EQ(increase.in, 50u);
  EXPECT_EQ(increase.out, 20u);
  EXPECT_FALSE(sum_increases(after, before, &increase));  // "a" went backwards
}

TEST(ProcStatParseTest, CommWithSpacesAndParentheses) {
  const std::string line =
      "4242 (my (weird) proc) S 17 4242 4242 0 -1 4194560 100 0 0 0 "
      "250 50 3 4 20 0 8 0 123456 1000000 777 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 "
      "17 1 0 0 0 0 0\n";
  ProcStat stat;
  ASSERT_TRUE(parse_proc_stat(line, &stat));
  EXPECT_EQ(stat.state, 'S');
  EXPECT_EQ(stat.ppid, 17);
  EXPECT_EQ(stat.cpu_ticks, 300u);
  EXPECT_EQ(stat.start_time, 123456u);
  EXPECT_EQ(stat.rss_pages, 777u);
  EXPECT_FALSE(parse_proc_stat("4242 (truncated) S 17 4242", &stat));
  EXPECT_FALSE(parse_proc_stat("no parenthesis at all", &stat));
  EXPECT_FALSE(parse_proc_stat("1 (x) S -5 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 1 1 1", &stat));
}

}  // namespace
}  // namespace stoker::monitor::host
