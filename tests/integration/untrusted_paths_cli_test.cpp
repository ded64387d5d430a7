// Paths that are not what they seem, given to the stoker program: FIFOs, devices, symlinks and
// symlink loops. Each once hung, grew without bound or replaced a system file. Every command
// here runs under `timeout`, so a hang fails the test (exit 124) instead of stopping the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stoker/data/encode.h"
#include "stoker_program.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using testing::expect_one_line_error;
using testing::kStoker;
using testing::run_command;
using testing::TempDir;

constexpr const char* kTimeout = "timeout 60 ";

// root/a/ and root/b/ with one JPEG each.
std::string two_image_folder(const TempDir& dir) {
  for (const char* name : {"root/a/1.jpg", "root/b/2.jpg"})
    dir.write(name, data::encode_jpeg(testing::make_photo_like(40, 30)));
  return dir.str() + "/root";
}

nlohmann::json bench_json(const std::string& data, const std::string& extra = "") {
  const auto r = run_command(kTimeout + kStoker + " bench loader --json --epochs 1 --workers 2 --batch-size 2 --data " +
                             data + extra);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// A FIFO named like an image once blocked a worker in open(), and stoker then ignored SIGINT.
TEST(UntrustedPathsCli, AFifoNamedLikeAnImageIsABadSampleNotAHang) {
  TempDir dir;
  const std::string root = two_image_folder(dir);
  ASSERT_EQ(::mkfifo((root + "/a/pipe.jpg").c_str(), 0600), 0);
  const nlohmann::json j = bench_json(root, " --max-bad 0.5");
  EXPECT_EQ(j["images"], 3);
  ASSERT_EQ(j["bad_count"], 1);
  EXPECT_EQ(j["bad_samples"][0]["reason"], "is a FIFO, not a regular file");
}

// One symlink back to the class folder turned 2 images into 82; two of them never ended.
TEST(UntrustedPathsCli, SymlinkLoopsInAnImageFolderAreReadOnce) {
  TempDir dir;
  const std::string root = two_image_folder(dir);
  fs::create_directory_symlink(root + "/a", root + "/a/loop");
  fs::create_directory_symlink(root, root + "/b/up");
  fs::create_directory_symlink(root + "/b", root + "/a/to_b");
  const nlohmann::json j = bench_json(root);
  EXPECT_EQ(j["images"], 2);
  const auto r = run_command(kTimeout + kStoker + " bench loader --epochs 1 --data " + root);
  EXPECT_NE(r.out.find("3 symlinks to folders already read skipped"), std::string::npos) << r.out;
}

TEST(UntrustedPathsCli, AProcFolderOfDescriptorsEndsWithOneLine) {
  const auto r = run_command(kTimeout + kStoker + " bench loader --epochs 1 --data /proc/self/fd");
  EXPECT_NE(r.exit_code, 124) << "hung";
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

TEST(UntrustedPathsCli, ConfigsThatAreNotFilesAreOneLine) {
  TempDir dir;
  const std::string fifo = dir.str() + "/config.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_one_line_error(run_command(kTimeout + kStoker + " train --config " + fifo), 2,
                        "config file " + fifo + " is a FIFO; stoker reads only regular files", "--config FIFO");
  expect_one_line_error(run_command(kTimeout + kStoker + " train --config /dev/zero"), 2,
                        "config file /dev/zero is a character device", "--config /dev/zero");
  const std::string big = dir.write_text("big.yaml", std::string(2 << 20, '#'));
  expect_one_line_error(run_command(kTimeout + kStoker + " train --config " + big), 2,
                        "more than the 1048576 a config file may have", "a 2 MiB config");
}

TEST(UntrustedPathsCli, AResumeOfAFifoIsOneLine) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  TempDir dir;
  const std::string fifo = dir.str() + "/checkpoint.pt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = run_command(kTimeout + kStoker + " train --no-progress --resume " + fifo);
  expect_one_line_error(r, 2, "checkpoint " + fifo + " is a FIFO; stoker reads only regular files", "--resume FIFO");
}

// Run as root against /dev/full, a rename once replaced the device node with a CSV file.
TEST(UntrustedPathsCli, LogsAreNeverWrittenOverADeviceAFifoOrASymlink) {
  TempDir dir;
  const std::string fifo = dir.str() + "/log.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string target = dir.write_text("target.csv", "keep me");
  const std::string link = dir.str() + "/link.csv";
  fs::create_symlink(target, link);
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{"/dev/full", "a character device"},
                                   {fifo, "a FIFO"},
                                   {link, "a symbolic link"}}) {
    const auto r = run_command(kTimeout + kStoker + " monitor --no-gpu --duration 0.2 --log " + path);
    expect_one_line_error(r, 2, "log file " + path + " is " + kind, "--log " + path);
  }
  EXPECT_EQ(testing::read_text(target), "keep me");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(UntrustedPathsCli, OutputFoldersThatAreNotFoldersAreOneLine) {
  TempDir dir;
  const std::string root = two_image_folder(dir);
  const std::string file = dir.write_text("file", "x");
  expect_one_line_error(run_command(kTimeout + kStoker + " prepare --data " + root + " --out /dev/null"), 2,
                        "--out /dev/null is a character device, not a folder", "prepare --out /dev/null");
  if (!STOKER_HAS_TORCH) return;
  expect_one_line_error(
      run_command(kTimeout + kStoker + " train --no-progress --max-steps 1 --data " + root + " --output-dir " + file),
      2, "--output-dir " + file + " is a regular file, not a folder", "--output-dir FILE");
}

}  // namespace
}  // namespace stoker
