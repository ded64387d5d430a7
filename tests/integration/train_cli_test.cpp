// `stoker train` end to end on Debian's Fashion-MNIST: a short run's run directory, a
// SIGINT that saves a checkpoint, and one-line errors with the right exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::run_command;
using stoker::testing::TempDir;

const std::string kStoker = STOKER_BINARY;
const char* kFashion = "/usr/share/datasets/fashion-mnist";

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
    if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  }
  static std::string run_dir(const std::string& output_dir) {
    for (const auto& entry : fs::directory_iterator(output_dir)) return entry.path().string();
    return "";
  }
};

TEST_F(TrainCli, ShortRunWritesTheRunDirectory) {
  TempDir dir;
  const auto r = run_command(kStoker + " train --max-steps 15 --batch_size 32 --no-progress --output-dir " + dir.str());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Batch size: 32 (requested: 32)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("val acc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step time: compute"), std::string::npos) << r.out;
  const std::string run = run_dir(dir.str());
  for (const char* file : {"checkpoint.pt", "metrics.csv", "config.yaml", "summary.json"}) {
    EXPECT_TRUE(fs::exists(run + "/" + file)) << file;
  }
  std::ifstream summary_file(run + "/summary.json");
  const auto summary = nlohmann::json::parse(summary_file);
  EXPECT_EQ(summary["global_step"], 15);
  EXPECT_EQ(summary["batch_size"], 32);
  std::ifstream config(run + "/config.yaml");
  std::string text((std::istreambuf_iterator<char>(config)), {});
  EXPECT_NE(text.find("batch_size: 32"), std::string::npos) << text;
}

TEST_F(TrainCli, SigintSavesACheckpointAndResumeContinues) {
  TempDir dir;
  const auto r = run_command("timeout --preserve-status -s INT 4 " + kStoker + " train --no-progress --output-dir " + dir.str());
  ASSERT_EQ(r.exit_code, 130) << r.err << r.out;
  EXPECT_NE(r.out.find("stopped by SIGINT"), std::string::npos) << r.out;
  const std::string run = run_dir(dir.str());
  ASSERT_TRUE(fs::exists(run + "/checkpoint.pt"));
  EXPECT_FALSE(fs::exists(run + "/checkpoint.pt.tmp"));
  const auto resumed = run_command(kStoker + " train --no-progress --max-steps 1 --resume " + run);
  // max_steps 1 is already behind the checkpoint: the resumed run takes one step and stops.
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resume   epoch 1, batch "), std::string::npos) << resumed.out;
}

TEST_F(TrainCli, BadInputOneLineNonZero) {
  TempDir dir;
  dir.write_text("bad.pt", "not a checkpoint");
  dir.write_text("c.yaml", "epochs: 1\nnum_worker: 2\n");
  const std::vector<stoker::testing::ExpectedError> cases = {
      {"--batch-size 0", 2, "batch_size must be >= 1 (got 0)"},
      {"--data /nonexistent/data", 1, "/nonexistent/data does not exist"},
      {"--resume " + dir.str() + "/bad.pt", 1, "is corrupt or not a stoker checkpoint"},
      {"--resume " + dir.str() + "/missing.pt", 1, "does not exist"},
      {"--model resnet7", 2, "resnet7"},
      {"--config " + dir.str() + "/c.yaml", 2, "c.yaml:2: unknown key 'num_worker'"},
      {"--amp fp16 --device cpu", 2, "amp fp16 needs a CUDA device"},
      {"--bogus", 2, "--bogus"},
  };
  for (const auto& c : cases) {
    const auto r = run_command(kStoker + " train --no-progress --output-dir " + dir.str() + "/runs " + c.args);
    expect_one_line_error(r, c.exit_code, c.expected, c.args);
  }
}

}  // namespace
}  // namespace stoker
