// `stoker bench loader` end to end: generated JPEGs, determinism across worker counts, bad
// files, and one-line errors with the right exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "stoker/data/encode.h"
#include "stoker/data/split.h"
#include "stoker_program.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

using stoker::testing::expect_one_line_errors;
using stoker::testing::run_command;
using stoker::testing::TempDir;

using testing::kStoker;

// A small synthetic dataset shared by the tests of this file.
class BenchLoaderCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const auto r = run_command(kStoker + " bench generate --synthetic 48 --cache-dir " + data());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string data() { return dir_->str() + "/synthetic"; }

  static nlohmann::json run_json(const std::string& args) {
    const auto r = run_command(kStoker + " bench loader --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }

  static TempDir* dir_;
};
TempDir* BenchLoaderCli::dir_ = nullptr;

TEST_F(BenchLoaderCli, GeneratesReusesAndReportsEveryField) {
  const auto again = run_command(kStoker + " bench generate --synthetic 48 --cache-dir " + data());
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find("reusing 48"), std::string::npos) << again.out;

  const auto j = run_json("--data " + data() + " --workers 2 --batch-size 16 --epochs 1");
  EXPECT_EQ(j["images"], 48);
  EXPECT_EQ(j["workers"], 2);
  EXPECT_GT(j["images_per_sec"].get<double>(), 0);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 0);
  EXPECT_EQ(j["bad_samples"].size(), 0u);
  EXPECT_EQ(j["checksum"].get<std::string>().size(), 16u);
  for (const char* stage : {"read", "decode", "transform", "wait_free_buffer", "consumer_wait"}) {
    EXPECT_TRUE(j["stages"].contains(stage)) << stage;
  }
  EXPECT_GT(j["stages"]["decode"].get<double>(), 0);
}

TEST_F(BenchLoaderCli, ChecksumIsTheSameForAnyWorkerCountAndChangesWithSeed) {
  const std::string base = "--data " + data() + " --batch-size 8 --epochs 2 ";
  const auto one = run_json(base + "--workers 1");
  const auto three = run_json(base + "--workers 3 --prefetch 2");
  const auto other_seed = run_json(base + "--workers 2 --seed 9");
  EXPECT_EQ(one["checksum"], three["checksum"]);
  // --prefetch is the table's prefetch_factor, per worker as in stoker train: 3 x 2 buffers.
  EXPECT_EQ(three["prefetch_factor"], 2);
  EXPECT_EQ(three["prefetch"], 6);
  EXPECT_NE(one["checksum"], other_seed["checksum"]);
}

// Batches made ahead across an epoch's end are the batches made after it; each epoch's wait
// for its first batch is reported.
TEST_F(BenchLoaderCli, RunAheadChangesNoBatchAndEachEpochReportsItsFirstBatchWait) {
  const std::string base = "--data " + data() + " --batch-size 8 --epochs 3 --workers 2 ";
  const auto ahead = run_json(base);
  const auto plain = run_json(base + "--no-run-ahead --step-ms 1");
  EXPECT_EQ(ahead["checksum"], plain["checksum"]);
  EXPECT_EQ(ahead["run_ahead"], true);
  EXPECT_EQ(plain["run_ahead"], false);
  ASSERT_EQ(ahead["epoch_first_batch_ms"].size(), 3u);
  for (const auto& ms : ahead["epoch_first_batch_ms"]) EXPECT_GE(ms.get<double>(), 0);
}

TEST_F(BenchLoaderCli, HumanReportHasTheSections) {
  const auto r = run_command(kStoker + " bench loader --data " + data() + " --workers 1 --epochs 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"images ", "pipeline ", "result ", "stages ", "bad ", "checksum "}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << "missing '" << line << "' in\n" << r.out;
  }
}

TEST_F(BenchLoaderCli, BadFilesAreReplacedAndListedWithReasons) {
  TempDir dir;
  const auto root = dir.path() / "set";
  std::filesystem::copy(data(), root, std::filesystem::copy_options::recursive);
  const auto good = root / "class_00" / "img_000000.jpg";
  std::ifstream in(good, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  bytes.resize(bytes.size() / 2);
  dir.write("set/class_01/truncated.jpg", bytes);
  dir.write("set/class_01/empty.jpg", {});
  dir.write_text("set/class_02/text.jpg", "this is not an image\n");
  // Content decides, not the extension: a PNG named .jpg is a good sample (as in Pillow).
  data::Image tiny;
  tiny.reshape(40, 30, 3);
  for (int i = 0; i < 40 * 30 * 3; ++i) tiny.data()[i] = static_cast<uint8_t>(i * 7);
  dir.write("set/class_03/png_content.jpg", data::encode_png(tiny));

  const auto j = run_json("--data " + root.string() + " --workers 2 --batch-size 8 --epochs 1 --max-bad 0.2");
  EXPECT_EQ(j["images"], 52);
  ASSERT_EQ(j["bad_count"], 3);
  std::map<std::string, std::string> reasons;
  for (const auto& b : j["bad_samples"]) {
    reasons[std::filesystem::path(b["path"].get<std::string>()).filename()] = b["reason"];
  }
  EXPECT_NE(reasons["truncated.jpg"].find("JPEG"), std::string::npos) << reasons["truncated.jpg"];
  EXPECT_NE(reasons["empty.jpg"].find("empty"), std::string::npos) << reasons["empty.jpg"];
  EXPECT_NE(reasons["text.jpg"].find("not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF"), std::string::npos)
      << reasons["text.jpg"];

  // The same bad files over the default 1 % threshold fail the run, naming one of them.
  const auto over = run_command(kStoker + " bench loader --data " + root.string() + " --epochs 1");
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_NE(over.err.find("max_bad_fraction"), std::string::npos) << over.err;

  const auto strict = run_command(kStoker + " bench loader --on-error fail --data " + root.string());
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("bad sample " + root.string()), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("on_error=fail"), std::string::npos) << strict.err;
}

TEST_F(BenchLoaderCli, OversizedImagesBecomeBadSamples) {
  const auto j = run_json("--data " + data() + " --workers 1 --epochs 1 --max-pixels 1000 --max-bad 1");
  EXPECT_EQ(j["bad_count"], 48);
  EXPECT_NE(j["bad_samples"][0]["reason"].get<std::string>().find("max_pixels"), std::string::npos)
      << j["bad_samples"][0]["reason"];
}

// Clip folders: --frames-per-clip reads K frames per sample, counts clips and frames, and
// gives the same batches for any worker count.
TEST(BenchLoaderClips, FramesPerClipReadsClipFolders) {
  TempDir dir;
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < 4; ++k) {
      data::Image image;
      image.reshape(48, 40, 3);
      for (size_t p = 0; p < static_cast<size_t>(48 * 40 * 3); ++p)
        image.data()[p] = static_cast<uint8_t>(p * 7 + i * 31 + k * 5);
      dir.write("clips/c" + std::to_string(i % 2) + "/v" + std::to_string(i) + "/" + std::to_string(k) + ".jpg",
                data::encode_jpeg(image));
    }
  }
  const std::string common =
      kStoker +
      " bench loader --json --epochs 2 --no-run-ahead --batch-size 4 --frames-per-clip 3 --frame-step 1 "
      "--transforms 'RandomResizedCrop(24), RandomHorizontalFlip()' --data " +
      dir.str() + "/clips";
  const auto one = run_command(common + " --workers 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto j = nlohmann::json::parse(one.out);
  EXPECT_EQ(j["frames_per_clip"], 3);
  EXPECT_EQ(j["images"], 12) << "6 clips a epoch";
  EXPECT_NEAR(j["frames_per_sec"].get<double>(), 3 * j["images_per_sec"].get<double>(), 1e-6);
  EXPECT_EQ(j["jpeg_samples"], 36) << "3 frames decoded per clip";
  const auto three = run_command(common + " --workers 3");
  ASSERT_EQ(three.exit_code, 0) << three.err;
  EXPECT_EQ(nlohmann::json::parse(three.out)["checksum"], j["checksum"]);
  const auto human =
      run_command(kStoker + " bench loader --epochs 1 --frames-per-clip 2 --transforms 'Resize((8, 8))' --data " +
                  dir.str() + "/clips");
  EXPECT_NE(human.out.find("clips/s · "), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("frames/s"), std::string::npos) << human.out;
}

TEST(BenchLoaderCliErrors, OneLineAndTheRightExitCode) {
  const std::vector<stoker::testing::ExpectedError> cases = {
      {"bench loader --synthetic 4 --batch-size 0", 2, "--batch-size must be between 1 and 65536 (got 0)"},
      {"bench loader --data /nonexistent/dir", 1, "dataset path /nonexistent/dir does not exist"},
      {"bench loader", 2, "no dataset"},
      {"bench loader --synthetic 4 --workers -1", 2, "--workers must be between 1 and 1024 (got -1)"},
      {"bench loader --synthetic 4 --bogus", 2, "--bogus"},
      {"bench loader --synthetic 4 --transforms 'RandomCutout(0.5)'", 2, "unknown transform 'RandomCutout'"},
      {"bench loader --synthetic 4 --on-error ignore", 2, "--on-error must be"},
      {"bench loader --synthetic 4 --seconds -1", 2, "--seconds must be >= 0"},
      {"bench loader --synthetic 4 --cache-decoded-gb -1", 2, "--cache-decoded-gb must be >= 0 (got -1)"},
      {"bench loader --synthetic 4 --split val", 2,
       "(an image folder): it holds one split, train; give the validation data's own path"},
      {"bench loader --synthetic 4 --split t10k", 2, "give the test data's own path"},
      {"bench loader --synthetic 4 --split garbage", 2, "unknown split 'garbage': stoker reads train, val and test"},
      // The loader's table's ranges, each named by the flag the table gives it.
      {"bench loader --synthetic 4 --workers 0", 2, "--workers must be between 1 and 1024 (got 0)"},
      {"bench loader --synthetic 4 --prefetch-factor 65", 2, "--prefetch-factor must be between 1 and 64 (got 65)"},
      {"bench loader --synthetic 4 --max-bad 2", 2, "--max-bad-fraction must be in [0, 1] (got 2)"},
      {"bench loader --synthetic 4 --on-error raise", 2, "--on-error must be one of substitute, fail (got 'raise')"},
      {"frobnicate", 2, "frobnicate"},
      {"bench loader --synthetic 4 --frames-per-clip 2", 1, "lies in a class folder, outside any clip folder"},
      {"bench loader --synthetic 4 --frames-per-clip 2 --frame-step 0", 2, "frame_step must be in [1, 1024]"},
      {"bench loader --synthetic 4 --frames-per-clip -1", 2, "frames_per_clip must be in [0, 1024]"},
  };
  TempDir cache;
  // The rows about the data find its images made: no "generating" progress line comes first.
  ASSERT_EQ(run_command("STOKER_CACHE=" + cache.str() + " " + kStoker + " bench generate --synthetic 4").exit_code, 0);
  expect_one_line_errors("STOKER_CACHE=" + cache.str() + " " + kStoker + " ", cases);
  // --split's help is the declaration's.
  const auto help = run_command(kStoker + " bench loader --help");
  EXPECT_NE(help.out.find(data::split_help_text()), std::string::npos) << help.out;
}

// A flag's mistake is said before --synthetic spends time making images for a run that
// would not start.
TEST(BenchLoaderCliErrors, BadFlagsAreRefusedBeforeAnyImageIsMade) {
  TempDir cache;
  for (const std::string args :
       {"--transforms 'RandomCutout(0.5)'", "--seconds -1", "--epochs -1", "--step-ms -1", "--batch-size 0"}) {
    const auto r = run_command("STOKER_CACHE=" + cache.str() + " " + kStoker + " bench loader --synthetic 4 " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_TRUE(std::filesystem::is_empty(cache.path())) << args << ": images were made before the flag was refused";
  }
}

}  // namespace
}  // namespace stoker
