// The commands say what a long open of their data does (OpenProgress's rule: a line once the
// open has run 1 s past its checks, whatever it has counted): each folder's listing is made
// slow (tests/slow_listing, as a network file system's round trips make it). A path that fails
// its checks is its error's one line, however long they took.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "stoker/data/encode.h"
#include "stoker_program.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker {
namespace {

using stoker::testing::run_command;
using stoker::testing::run_dir_of;
using stoker::testing::TempDir;
using testing::kStoker;

constexpr int kClasses = 6;

class OpenProgressCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<uint8_t> jpeg = data::encode_jpeg(stoker::testing::make_photo_like(24, 20, 3, 1));
    for (int i = 0; i < 4 * kClasses; ++i) dir_.write(fmt::format("data/class_{}/{:02}.jpg", i % kClasses, i), jpeg);
    data_ = std::filesystem::canonical(dir_.str() + "/data").string();
  }
  // `args` run with each folder under `under` listed `ms` late: by default the data's root and
  // class folders, 2.1 s, of which the first second passes before the first line. `slow`: more
  // of tests/slow_listing's settings.
  testing::CommandResult run_listing_slowly(const std::string& args, int ms = 300, std::string under = "",
                                            const std::string& slow = "") const {
    return run_command(fmt::format("LD_PRELOAD={} SLOW_LISTING_UNDER={} SLOW_LISTING_MS={} {} OMP_NUM_THREADS=1 {} {}",
                                   testing::slow_listing_path(), under.empty() ? data_ : under, ms, slow, kStoker,
                                   args));
  }
  // The line a log shows 0.5 s into the listing (its counts depend on the folders listed by then).
  void expect_listing_line(const testing::CommandResult& r) const {
    EXPECT_NE(r.err.find("listing " + data_), std::string::npos) << r.err;
  }
  TempDir dir_;
  std::string data_;
  const std::string chain_ = " --model mlp --workers 1 --batch-size 4 --transforms 'Resize(16), CenterCrop(16)'";
};

TEST_F(OpenProgressCli, TrainEvaluateDoctorAndCheckSayHowFarTheirListingIs) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  const std::string out = dir_.str() + "/runs";
  const auto trained = run_listing_slowly("train --data " + data_ + chain_ +
                                          " --max-steps 1 --val-split 0 --no-progress --output-dir " + out);
  ASSERT_EQ(trained.exit_code, 0) << trained.err << trained.out;
  expect_listing_line(trained);

  const auto evaluated = run_listing_slowly("evaluate " + run_dir_of(out) +
                                            "/model.safetensors --batch-size 4 --workers 1 --data " + data_);
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.err << evaluated.out;
  expect_listing_line(evaluated);

  const auto doctored = run_listing_slowly("doctor --seconds 0.2 --data " + data_ + chain_);
  ASSERT_EQ(doctored.exit_code, 0) << doctored.err << doctored.out;
  expect_listing_line(doctored);

  const auto checked = run_listing_slowly("check --seconds 0.2 --data " + data_);  // which reads the files first
  ASSERT_EQ(checked.exit_code, 0) << checked.err << checked.out;
  expect_listing_line(checked);
}

// A root whose listing takes 2.5 s counts nothing until it ends: a line says what the open
// does within 2 s all the same (its seconds count from the checks, in a log the first line).
TEST_F(OpenProgressCli, ASlowOpenThatCountsNothingSaysSoWithinTwoSeconds) {
  const auto r = run_listing_slowly("scan --workers 1 --data " + data_, 2500, "", "SLOW_LISTING_DEPTH=0");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("opening " + data_ + ", 1 s\n"), std::string::npos) << r.err;
}

// Checks that fail are the error's one line however long they take (each look at a path under
// the data 0.7 s, as on a loaded machine or a slow server): no line before the error.
TEST_F(OpenProgressCli, ABadPathIsOneLineHoweverSlowItsChecks) {
  const std::string missing = data_ + "/missing";
  const auto r = run_listing_slowly("scan --data " + missing, 0, "", "SLOW_STAT_MS=700");
  testing::expect_one_line_error(r, 1, "dataset path " + missing + " does not exist", "a slowly checked bad path");
}

}  // namespace
}  // namespace stoker
