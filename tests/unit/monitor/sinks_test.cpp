#include "stoker/monitor/sinks.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stoker/core/error.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker::monitor {
namespace {

Sample gpu_sample() {
  Sample s;
  s.seconds = 1.5;
  s.unix_ns = 1'795'000'000'123'000'000;  // 2026-11-18T...Z
  s.host.cpu_percent.set(45, "/proc/stat");
  s.host.memory_used_bytes.set(18.4e9, "/proc/meminfo");
  s.host.memory_total_bytes.set(64e9, "/proc/meminfo");
  s.host.disk_read_bytes_per_s.set(410e6, "/proc/diskstats");
  GpuSample g;
  g.util_gpu_percent.set(85, "nvml");
  g.sm_activity_percent.set(71, "nvml-gpm");
  g.tensor_activity_percent.set(40, "nvml-gpm");
  g.memory_used_bytes.set(12.3e9, "nvml");
  g.memory_total_bytes.set(24e9, "nvml");
  g.power_watts.set(312, "nvml");
  g.temperature_c.set(71, "nvml");
  g.throttle_reasons.set(0x4, "nvml");
  s.gpus.push_back(g);
  return s;
}

TEST(StatusLineTest, ShowsWhatIsAvailable) {
  const std::string line = format_status_line(gpu_sample());
  EXPECT_EQ(line.find("GPU0 85% SM 71% TC 40% | VRAM 12.3/24.0 GB | 312 W 71°C"), 0u) << line;
  EXPECT_NE(line.find("CPU 45% | RAM 18.4/64.0 GB | disk r 410 MB/s"), std::string::npos) << line;
  Sample host_only;
  const std::string bare = format_status_line(host_only);
  EXPECT_EQ(bare, "CPU n/a") << "no GPU, nothing read: no invented zeros";
}

TEST(LogsTest, CsvHasStableColumnsAndEmptyCellsForUnavailable) {
  testing::TempDir dir;
  const std::string path = dir.str() + "/m.csv";
  {
    CsvLog log(path, 1);
    log.write(gpu_sample());
  }
  const std::string text = testing::read_text(path);
  std::istringstream lines(text);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header.rfind("timestamp,seconds,cpu_percent,mem_used_bytes,", 0), 0u) << header;
  EXPECT_NE(header.find(",gpu0_util_percent,"), std::string::npos);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ','));
  EXPECT_EQ(row.rfind("2026-11-18T", 0), 0u) << row;
  EXPECT_NE(row.find(".123Z,1.500,45,18400000000,,64000000000,"), std::string::npos) << row;
  EXPECT_NE(row.find("\"power cap\""), std::string::npos) << row;
  EXPECT_EQ(CsvLog::columns(2).size(), 2 + 13 + 2 * 16u);
}

TEST(LogsTest, JsonlHasMetaThenSamplesWithNulls) {
  testing::TempDir dir;
  const std::string path = dir.str() + "/m.jsonl";
  {
    JsonlLog log(path, {GpuInfo{0, "Fake", "GPU-1", true}}, "1 GPU");
    log.write(gpu_sample());
  }
  std::istringstream lines(testing::read_text(path));
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  const auto meta = nlohmann::json::parse(first);
  EXPECT_EQ(meta["type"], "meta");
  EXPECT_EQ(meta["gpus"][0]["name"], "Fake");
  bool saw_source = false;
  for (const auto& f : meta["fields"])
    saw_source |= f["name"] == "gpus[].sm_activity_percent" && f["source"] == "nvml-gpm";
  EXPECT_TRUE(saw_source);
  const auto sample = nlohmann::json::parse(second);
  EXPECT_EQ(sample["cpu_percent"], 45);
  EXPECT_TRUE(sample["mem_available_bytes"].is_null());
  EXPECT_EQ(sample["gpus"][0]["util_percent"], 85);
  EXPECT_TRUE(sample["gpus"][0]["power_limit_w"].is_null());
  EXPECT_EQ(sample["gpus"][0]["throttle"], "power cap");
}

TEST(LogsTest, UnwritablePathIsAUsageErrorNamingIt) {
  try {
    CsvLog log("/nonexistent-dir/m.csv", 0);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write log file /nonexistent-dir/m.csv"), std::string::npos);
  }
  EXPECT_THROW(JsonlLog("/nonexistent-dir/m.jsonl", {}, ""), UsageError);
}

TEST(LogsTest, Iso8601) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(1'000'000'000LL * 86400 + 5'000'000), "1970-01-02T00:00:00.005Z");
}

}  // namespace
}  // namespace stoker::monitor
