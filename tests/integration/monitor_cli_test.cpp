// `stoker monitor` end to end: logs, a watched command's exit code and summary, a fake
// NVML found through the ordinary library search path, and one-line errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stoker_program.h"
#include "support/build_paths.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

using stoker::testing::expect_one_line_errors;
using stoker::testing::run_command;
using stoker::testing::TempDir;

using testing::kStoker;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(MonitorCli, WritesCsvAndJsonlForTheDuration) {
  TempDir dir;
  const auto r = run_command(kStoker + " monitor --no-gpu --interval 0.1 --duration 0.55 --log " + dir.str() +
                             "/m.csv --jsonl " + dir.str() + "/m.jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto csv = lines_of(dir.str() + "/m.csv");
  ASSERT_GE(csv.size(), 5u) << "header + about 6 samples";
  EXPECT_EQ(csv[0].rfind("timestamp,seconds,cpu_percent,", 0), 0u);
  const auto jsonl = lines_of(dir.str() + "/m.jsonl");
  ASSERT_EQ(jsonl.size(), csv.size());
  EXPECT_EQ(nlohmann::json::parse(jsonl[0])["type"], "meta");
  const auto last = nlohmann::json::parse(jsonl.back());
  EXPECT_TRUE(last["cpu_percent"].is_number()) << jsonl.back();
  EXPECT_GT(last["mem_total_bytes"].get<double>(), 0);
  EXPECT_NE(r.out.find("stoker monitor: "), std::string::npos) << r.out;
}

TEST(MonitorCli, RunsACommandPassesItsExitCodeAndSummarises) {
  const auto r =
      run_command(kStoker + " monitor --no-gpu --interval 0.05 -- sh -c 'echo child-out; sleep 0.3; exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("child-out"), std::string::npos) << "the command's own output passes through";
  EXPECT_NE(r.err.find("stoker monitor: 0."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("peak RSS"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no GPU"), std::string::npos) << r.err;
}

TEST(MonitorCli, KilledCommandReportsTheSignal) {
  const auto r = run_command(kStoker + " monitor --no-gpu -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(r.exit_code, 128 + 15) << r.err;
}

TEST(MonitorCli, FakeNvmlIsFoundLikeTheRealOne) {
  TempDir dir;
  const std::string script = dir.write_text(
      "nvml.txt", "gpus=1\nname0=Fake H100\nutil0=85\nutil_mem0=40\nmem_used0=12300000000\nmem_total0=24000000000\n");
  const std::string lib_dir = std::filesystem::path(testing::fake_nvml_path()).parent_path().string();
  const auto r = run_command("LD_LIBRARY_PATH=" + lib_dir + " STOKER_FAKE_NVML_SCRIPT=" + script + " " + kStoker +
                             " monitor --interval 0.1 --duration 0.25 --jsonl " + dir.str() + "/m.jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU0 85% | VRAM 12.3/24.0 GB"), std::string::npos) << r.out;
  const auto jsonl = lines_of(dir.str() + "/m.jsonl");
  ASSERT_GE(jsonl.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(jsonl[0])["gpus"][0]["name"], "Fake H100");
  EXPECT_EQ(nlohmann::json::parse(jsonl[1])["gpus"][0]["util_percent"], 85);
}

TEST(MonitorCli, BadInputOneLineNonZero) {
  const std::vector<stoker::testing::ExpectedError> cases = {
      {"monitor --interval 0 --duration 1", 2, "interval must be >= 0.05 s (got 0)"},
      {"monitor --interval -1 --duration 1", 2, "interval must be >= 0.05 s (got -1)"},
      {"monitor --duration 1 --log /nonexistent-dir/x.csv", 2, "cannot write log file /nonexistent-dir/x.csv"},
      {"monitor --pid 999999999", 2, "process 999999999 is not running"},
      {"monitor -- /no/such/command-xyz", 127, "cannot run '/no/such/command-xyz'"},
      {"monitor --bogus", 2, "--bogus"},
      {"monitor --duration 1 -- true", 2, "--duration cannot be combined with a command"},
      {"monitor --duration 0", 2, "--duration must be > 0 seconds (got 0); leave it out to run until Ctrl-C"},
      {"monitor --", 2, "'--' must be followed by a command to run"},
      {"monitor --no-gpu --", 2, "'--' must be followed by a command to run"},
  };
  expect_one_line_errors(kStoker + " ", cases);
}

TEST(MonitorCli, WatchesARunningPidUntilItExits) {
  const auto r = run_command("sleep 0.6 & " + kStoker + " monitor --no-gpu --quiet --interval 0.1 --pid $!");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stoker monitor: "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace stoker
