// `stoker train --nproc-per-node 2` end to end on Debian's Fashion-MNIST: one run folder
// written by rank 0, one header, the group's figures; a bad input is one line however many
// processes hit it; SIGTERM stops every process at one step and the run resumes with its
// process count (another count is refused); a run stopped and resumed ends with the weights of
// one that was not, bit for bit; a process killed from outside stops the group at once with a
// line saying so.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stoker_program.h"
#include "support/hang_guard.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::expect_one_line_errors;
using stoker::testing::kHangGuard;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::run_dir_of;
using stoker::testing::summary_of;
using stoker::testing::TempDir;
using stoker::testing::without_open_progress_lines;

using testing::kFashion;
using testing::kStoker;

std::string start_in_background(const std::string& args, const std::string& output_dir) {
  return stoker::testing::start_training_in_background(kStoker + " train " + args, output_dir);
}

// The tensors of a safetensors file: its header without the metadata, then the data bytes.
std::string tensors_of(const std::string& path) {
  stoker::testing::SafetensorsFile file = stoker::testing::read_safetensors(path);
  file.header.erase("__metadata__");
  return file.header.dump() + file.data;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

class TrainParallelCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
    if (!STOKER_HAVE_GLOO) GTEST_SKIP() << "built without Gloo's headers (data-parallel training left out)";
    if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  }
};

TEST_F(TrainParallelCli, TwoProcessesTrainOneRun) {
  TempDir dir;
  const auto r = run_command(kStoker +
                             " train --nproc-per-node 2 --max-steps 30 --batch-size 32 --val-split 0.01 --no-progress "
                             "--output-dir " +
                             dir.str());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(count_of(r.out, "stoker 0.1 · run dir"), 1u) << r.out;  // rank 0 alone prints
  EXPECT_NE(r.out.find("parallel 2 processes (2 on this machine) · each trains on 1/2 of every epoch"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Batch size: 32 per process, 64 per step over 2 processes (requested: 32)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" · all-reduce wait "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("val acc"), std::string::npos) << r.out;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 1);
  const nlohmann::json summary = summary_of(dir.str());
  EXPECT_EQ(summary["global_step"], 30);
  // 30 steps of 32 in each of 2 processes.
  const std::string metrics = read_text(run_dir_of(dir.str()) + "/metrics.csv");
  EXPECT_NE(metrics.find("\n1,"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find(",1920,"), std::string::npos) << metrics;
  EXPECT_NE(read_text(run_dir_of(dir.str()) + "/config.yaml").find("nproc_per_node: 2"), std::string::npos);
  EXPECT_TRUE(fs::exists(run_dir_of(dir.str()) + "/model.safetensors"));
}

// A build without Gloo (against pip's PyTorch, which ships no Gloo headers) refuses the
// launch itself, once, instead of starting processes that each fail.
TEST(TrainParallelCliWithoutGloo, TheLauncherRefusesInOneLine) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  if (STOKER_HAVE_GLOO) GTEST_SKIP() << "this build has Gloo (a build with -DSTOKER_WITH_GLOO=OFF runs this)";
  TempDir dir;
  expect_one_line_error(run_command(kStoker + " train --nproc-per-node 2 --no-progress --output-dir " + dir.str()), 2,
                        "data-parallel training (--nproc-per-node, WORLD_SIZE > 1) needs Gloo",
                        "--nproc-per-node without Gloo");
}

TEST_F(TrainParallelCli, BadInputIsOneLineFromOneProcess) {
  TempDir dir;
  expect_one_line_errors(kStoker + " train --no-progress --output-dir " + dir.str() + "/runs ",
                         {{"--nproc-per-node 0", 2, "nproc_per_node must be between 1 and 1024 (got 0)"},
                          {"--nproc-per-node 1024", 2, "--nproc-per-node 1024 would start 1024 training processes on "},
                          {"--nproc 2 --data /nonexistent/data", 1, "/nonexistent/data does not exist"},
                          {"--nproc 2 --model resnet18", 2, "model resnet18 needs images of at least 32x32"}});
}

// train.csv and val.csv in `dir`: one small feature table (two features, two classes) twice.
void write_feature_tables(const TempDir& dir) {
  std::string table = "a,b,label\n";
  for (int i = 0; i < 256; ++i)
    table += std::to_string(i % 7) + "," + std::to_string(i % 5) + "," + std::to_string(i % 2) + "\n";
  dir.write_text("train.csv", table);
  dir.write_text("val.csv", table);
}

// Early stopping is decided by rank 0, which validates; every process must stop with it.
// A learning rate too small to move a weight keeps validation at epoch 1's accuracy.
TEST_F(TrainParallelCli, EarlyStoppingStopsEveryProcess) {
  TempDir dir;
  write_feature_tables(dir);
  const auto r =
      run_command("timeout 300 " + kStoker +
                  " train --nproc-per-node 2 --model mlp --workers 1 --lr 1e-12 "
                  "--epochs 8 --patience 1 --no-progress --data " +
                  dir.str() + "/train.csv --val-data " + dir.str() + "/val.csv --output-dir " + dir.str() + "/runs");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(count_of(r.out, "early stop after epoch 2: val acc has not improved for 1 epoch"), 1u) << r.out;
  EXPECT_EQ(summary_of(dir.str() + "/runs")["epochs"].size(), 2u) << r.out;
}

// The plateau schedule is rank 0's call too (it validates); the others hear it after each
// epoch, before early stopping's word, so both decisions reach every process in one order
// (a process out of step would wait for the other's next message until the group's timeout).
TEST_F(TrainParallelCli, ThePlateauScheduleLowersTheRateInEveryProcess) {
  TempDir dir;
  write_feature_tables(dir);
  const auto r =
      run_command("timeout 300 " + kStoker +
                  " train --nproc-per-node 2 --model mlp --workers 1 --lr 0.01 "
                  "--epochs 4 --patience 3 --schedule plateau --plateau-patience 0 --plateau-threshold-mode "
                  "abs --plateau-threshold 1000 --no-progress --data " +
                  dir.str() + "/train.csv --val-data " + dir.str() + "/val.csv --output-dir " + dir.str() + "/runs");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(count_of(r.out, " · lr 0.01 → 0.001 ("), 1u) << r.out;
  EXPECT_EQ(count_of(r.out, " · lr 0.001 → 0.0001 ("), 1u) << r.out;
  EXPECT_EQ(count_of(r.out, " · lr 0.0001 → 1e-05 ("), 1u) << r.out;
}

TEST_F(TrainParallelCli, SigtermStopsEveryProcessAndTheRunResumes) {
  TempDir dir;
  const auto r = run_command(
      start_in_background("--nproc-per-node 2 --no-progress --batch-size 32 --epochs 1 --val-split 0.01", dir.str()) +
      "kill -TERM $pid; wait $pid");
  ASSERT_EQ(r.exit_code, 143) << r.err << r.out;
  EXPECT_EQ(count_of(r.out, "stopped by SIGTERM"), 1u) << r.out;
  EXPECT_EQ(without_open_progress_lines(r.err), "");  // a slow open's "opening ..., 1 s" is no error
  const std::string run = run_dir_of(dir.str());
  ASSERT_TRUE(fs::exists(run + "/checkpoint.pt"));

  const auto other = run_command(kStoker + " train --no-progress --nproc-per-node 1 --resume " + run);
  expect_one_line_error(other, 2,
                        "was made by 2 training processes, and this run has 1; resume with --nproc-per-node 2",
                        "resumed by one process");
  // The run's own config.yaml brings back nproc_per_node 2.
  const auto resumed = run_command(kStoker + " train --no-progress --max-steps " +
                                   std::to_string(stoker::testing::checkpoint_step(run) + 1) + " --resume " + run);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("resume   epoch 1, batch "), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("64 per step over 2 processes"), std::string::npos) << resumed.out;
}

// Validation on 1 % of the training images, not the 10,000 test images, and batches of 16: the
// weights compared depend on neither, and both took most of each of the three runs.
TEST_F(TrainParallelCli, InterruptedAndResumedEqualsUninterrupted) {
  TempDir whole, parts;
  const std::string args = " train --nproc 2 --no-progress --epochs 1 --batch-size 16 --seed 3 --val-split 0.01 ";
  const auto a = run_command(kStoker + args + "--max-steps 40 --output-dir " + whole.str());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto b = run_command(kStoker + args + "--max-steps 20 --output-dir " + parts.str());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string first = tensors_of(run_dir_of(parts.str()) + "/model.safetensors");
  const auto c = run_command(kStoker + " train --no-progress --max-steps 40 --resume " + run_dir_of(parts.str()));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::string uninterrupted = tensors_of(run_dir_of(whole.str()) + "/model.safetensors");
  ASSERT_FALSE(uninterrupted.empty());
  EXPECT_NE(first, uninterrupted);  // 20 steps are not 40
  // Bit for bit: the loader, the optimiser, both processes' dropout and the averages repeat.
  EXPECT_TRUE(tensors_of(run_dir_of(parts.str()) + "/model.safetensors") == uninterrupted);
}

TEST_F(TrainParallelCli, AKilledProcessStopsTheGroupAtOnce) {
  TempDir dir;
  // Rank 1 is the launcher's child whose environment says RANK=1. The launcher's wait is timed
  // from the kill: left alone, the other process would wait for its peer in the next collective.
  const auto r = run_command(start_in_background("--nproc 2 --no-progress --batch-size 32 --epochs 2", dir.str()) +
                             "killed=$(date +%s); "
                             "for c in $(cat /proc/$pid/task/$pid/children); do "
                             "if tr '\\0' '\\n' < /proc/$c/environ | grep -qx RANK=1; then kill -KILL $c; fi; done; "
                             "wait $pid; rc=$?; echo $(($(date +%s) - killed)) > " +
                             dir.str() + "/stopped_after; exit $rc");
  EXPECT_EQ(r.exit_code, 137) << r.err << r.out;
  EXPECT_EQ(without_open_progress_lines(r.err),
            "error: training process 1 of 2 was killed by signal 9 (Killed); stopped the other\n");
  EXPECT_LT(std::stol(read_text(dir.str() + "/stopped_after")), kHangGuard.count());
}

}  // namespace
}  // namespace stoker
