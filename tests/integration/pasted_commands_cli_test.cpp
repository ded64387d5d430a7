// The command lines stoker prints for the user to paste ("report: stoker report RUN") run as
// printed, whatever the paths in them hold: `stoker train --output-dir '/x;touch PWNED;y'`
// once printed `report: stoker report /x;touch PWNED;y/...`, which ran `touch PWNED` when
// pasted, and a path with a space named two arguments.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "stoker_program.h"
#include "support/level_datasets.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::TempDir;
using testing::kStoker;

// A folder name that runs three commands and expands two variables if a shell reads it bare.
const std::string kHostileName = "o;touch PWNED1;y $(touch PWNED2) `touch PWNED3` it's \"q\" & $HOME\\ *";

// The rest of the line of `out` that begins with `prefix` ("" when none does).
std::string line_after(const std::string& out, const std::string& prefix) {
  size_t at = out.rfind("\n" + prefix);
  at = at == std::string::npos ? (out.rfind(prefix, 0) == 0 ? 0 : std::string::npos) : at + 1;
  if (at == std::string::npos) return "";
  const size_t begin = at + prefix.size();
  return out.substr(begin, out.find('\n', begin) - begin);
}

// Runs `command` (a printed line, "stoker ..." with this build's program for `stoker`) with
// bash in `folder`, as a paste into a terminal would.
stoker::testing::CommandResult paste(const TempDir& folder, const std::string& command) {
  const std::string script = folder.write_text("pasted.sh", kStoker + command.substr(std::string("stoker").size()));
  return run_command("cd " + folder.str() + " && bash " + script);
}

void expect_nothing_injected(const TempDir& dir) {
  for (const char* marker : {"PWNED1", "PWNED2", "PWNED3"}) EXPECT_FALSE(fs::exists(dir.path() / marker)) << marker;
}

TEST(PastedCommandsCli, TrainsReportLineRunsAsPrintedWhateverItsOutputFolderHolds) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  TempDir dir;
  stoker::testing::write_level_classes(dir, "data", 64, 1);
  // output_dir in the YAML config, single-quoted there ('' is one ').
  std::string yaml_name;
  for (const char c : kHostileName) yaml_name += c == '\'' ? std::string("''") : std::string(1, c);
  dir.write_text("config.yaml", "output_dir: '" + yaml_name + "'\n");
  const auto train = run_command(
      "cd " + dir.str() + " && " + kStoker +
      " train --config config.yaml --data data --epochs 1 --model mlp --workers 1 --batch-size 32 --no-progress"
      " --transforms 'Resize(8), CenterCrop(8), Grayscale, Normalize(mean=(0.5,), std=(0.5,))'");
  ASSERT_EQ(train.exit_code, 0) << train.err << train.out;
  const std::string run = stoker::testing::run_dir_of(dir.str() + "/" + kHostileName);
  ASSERT_FALSE(run.empty());

  const std::string report = line_after(train.out, "report: ");
  ASSERT_EQ(report.rfind("stoker report '", 0), 0u) << train.out;
  const auto pasted = paste(dir, report);
  EXPECT_EQ(pasted.exit_code, 0) << report << "\n" << pasted.err;
  EXPECT_TRUE(fs::exists(run + "/report.html")) << report;
  expect_nothing_injected(dir);

  // The TensorBoard line's folder reads back as the output folder.
  const std::string logdir = line_after(train.out, "TensorBoard: tensorboard --logdir ");
  ASSERT_FALSE(logdir.empty()) << train.out;
  const auto printed = run_command("cd " + dir.str() + " && printf '%s' " + logdir);
  EXPECT_EQ(printed.out, kHostileName);
  expect_nothing_injected(dir);
}

TEST(PastedCommandsCli, MonitorsReportLineRunsAsPrinted) {
  TempDir dir;
  ASSERT_EQ(::setenv("STOKER_TEST_LOG", (kHostileName + ".csv").c_str(), 1), 0);
  const auto m = run_command("cd " + dir.str() + " && " + kStoker +
                             " monitor --no-gpu --quiet --interval 0.1 --duration 0.5 --log \"$STOKER_TEST_LOG\"");
  ::unsetenv("STOKER_TEST_LOG");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const std::string report = line_after(m.out, "report: ");
  ASSERT_EQ(report.rfind("stoker report '", 0), 0u) << m.out;
  const auto pasted = paste(dir, report);
  EXPECT_EQ(pasted.exit_code, 0) << report << "\n" << pasted.err;
  EXPECT_NE(read_text(dir.str() + "/" + kHostileName + ".html").find("<svg"), std::string::npos);
  expect_nothing_injected(dir);
}

TEST(PastedCommandsCli, ScansNextLineNamesTheListAsOneWord) {
  TempDir dir;
  stoker::testing::write_level_classes(dir, "data", 8, 1);
  dir.write_text("data/dark/broken.png", "not a PNG");
  const std::string list = kHostileName + ".txt";
  ASSERT_EQ(::setenv("STOKER_TEST_LIST", list.c_str(), 1), 0);
  const auto scan = run_command("cd " + dir.str() + " && " + kStoker + " scan --data data -o \"$STOKER_TEST_LIST\"");
  ::unsetenv("STOKER_TEST_LIST");
  ASSERT_EQ(scan.exit_code, 1) << scan.err << scan.out;
  const std::string next = line_after(scan.out, "next      stoker train --exclude-list ");
  const std::string word = next.substr(0, next.find(" leaves them out"));
  ASSERT_EQ(word.rfind('\'', 0), 0u) << scan.out;
  EXPECT_EQ(run_command("cd " + dir.str() + " && printf '%s' " + word).out, list);
  expect_nothing_injected(dir);
}

TEST(PastedCommandsCli, PlainPathsArePrintedAsTheyAre) {
  TempDir dir;
  const auto m = run_command("cd " + dir.str() + " && mkdir logs-1 && " + kStoker +
                             " monitor --no-gpu --quiet --interval 0.1 --duration 0.3 --log logs-1/gpu.csv");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_TRUE(m.out.ends_with("report: stoker report logs-1/gpu.csv\n")) << m.out;
}

}  // namespace
}  // namespace stoker
