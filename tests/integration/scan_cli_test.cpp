// `stoker scan` end to end: every damaged file of a dataset named once with its reason,
// whatever a training crop would have decoded of it (a JPEG cut to 95 % included), the list
// written as CSV, exit 1 when any is bad and 0 when none is, feature arrays, and one-line
// errors for bad arguments.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stoker/data/encode.h"
#include "stoker/data/split.h"
#include "stoker_program.h"
#include "support/numpy_files.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker {
namespace {

using stoker::testing::expect_one_line_errors;
using stoker::testing::make_photo_like;
using stoker::testing::npy_bytes;
using stoker::testing::raw_bytes;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::TempDir;
using stoker::testing::without_open_progress_lines;

using testing::kStoker;

// root/{cat,dog}/ with 8 good JPEGs and PNGs; with `damaged`, three bad files too.
std::string write_folder(const TempDir& dir, bool damaged) {
  std::vector<uint8_t> jpeg;
  for (int i = 0; i < 8; ++i) {
    const std::string cls = i % 2 == 0 ? "cat" : "dog";
    const auto image = make_photo_like(160 + 8 * i, 120, 3, static_cast<uint32_t>(i));
    jpeg = data::encode_jpeg(image, {.quality = 85, .progressive = i == 3});
    dir.write("data/" + cls + "/img" + std::to_string(i) + (i == 5 ? ".png" : ".jpg"),
              i == 5 ? data::encode_png(image) : jpeg);
  }
  if (damaged) {
    dir.write("data/cat/cut.jpg", {jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(jpeg.size() * 95 / 100)});
    dir.write_text("data/dog/notes.jpg", "not an image");
    dir.write("data/dog/empty.png", {});
  }
  return dir.str() + "/data";
}

TEST(ScanCli, EveryDamagedFileIsNamedOnceWithItsReason) {
  TempDir dir;
  const std::string data = write_folder(dir, true);
  const auto r = run_command(kStoker + " scan --data " + data + " --workers 2 -o " + dir.str() + "/bad.txt");
  ASSERT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("scanning image folder " + data + ": 11 images in 2 classes"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("scanned   11 of 11 samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad       3: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("truncated JPEG 1"), std::string::npos) << r.out;  // counts per kind of reason
  EXPECT_NE(r.out.find("not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(data + "/cat/cut.jpg: truncated JPEG"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(data + "/dog/notes.jpg: not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF (looks like text)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(data + "/dog/empty.png: "), std::string::npos) << r.out;
  // One name per line, a tab, the reason: what stoker train --exclude-list reads.
  const std::string list = read_text(dir.str() + "/bad.txt");
  EXPECT_EQ(list.rfind("# stoker scan: 3 bad of 11 samples checked", 0), 0u) << list;
  EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), 4) << list;
  EXPECT_NE(list.find("\ncat/cut.jpg\ttruncated JPEG"), std::string::npos) << list;  // relative to --data

  const auto json = run_command(kStoker + " scan --data " + data + " --json");
  ASSERT_EQ(json.exit_code, 1) << json.err;
  const auto report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["samples"], 11);
  EXPECT_EQ(report["checked"], 11);
  EXPECT_EQ(report["bad_count"], 3);
  EXPECT_EQ(report["reasons"]["truncated JPEG"], 1) << report["reasons"];
  ASSERT_EQ(report["bad"].size(), 3u);
  for (const auto& bad : report["bad"]) EXPECT_EQ(bad["name"].get<std::string>().rfind(data, 0), 0u) << bad;
}

TEST(ScanCli, TrainingLeavesOutWhatTheScanListed) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  TempDir dir;
  const std::string data = write_folder(dir, true);
  ASSERT_EQ(run_command(kStoker + " scan --data " + data + " -o " + dir.str() + "/bad.txt").exit_code, 1);
  dir.write_text("extra.txt", data + "/cat/cut.jpg\n\n# a note\n" + data + "/not/in/it.jpg\tgone\n");
  std::filesystem::create_directories(data + "/cow");  // an empty class folder: said, not silently a class
  const std::string train = kStoker + " train --data " + data +
                            " --model resnet18 --transforms 'RandomResizedCrop(32), Normalize' --batch-size 4 "
                            "--max-steps 2 --workers 1 --no-progress --output-dir " +
                            dir.str() + "/runs --exclude-list ";
  const auto r = run_command(train + dir.str() + "/bad.txt");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("warning  1 of 3 classes has no training sample ('cow'): the model still gives each an "
                       "output; remove empty class folders, or check the labels"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("data     image folder " + data + ": 11 images in 3 classes → 3 listed in " + dir.str() +
                       "/bad.txt left out"),
            std::string::npos)
      << r.out;
  // A list from elsewhere: one of its names is here; the other two bad files stay substituted.
  const auto other = run_command(train + dir.str() + "/extra.txt --max-bad-fraction 0.5");
  ASSERT_EQ(other.exit_code, 0) << other.err << other.out;
  EXPECT_NE(other.out.find("→ 1 listed in"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("1 name in --exclude-list " + dir.str() + "/extra.txt is not in the data"),
            std::string::npos)
      << other.out;
  const auto missing = run_command(train + dir.str() + "/nowhere.txt");
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("--exclude-list"), std::string::npos) << missing.err;
}

// The list names samples relative to the data's folder, escaped: it leaves the same samples
// out however --data is spelled, a name with a tab or a leading '#' included.
TEST(ScanCli, AListMatchesTheDataHoweverItIsSpelled) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  TempDir dir;
  write_folder(dir, true);
  dir.write_text("data/dog/tab\tin name.jpg", "not an image");
  dir.write_text("data/#misc/empty.png", "");
  dir.write("data/#misc/good.jpg", stoker::data::encode_jpeg(make_photo_like(40, 30)));
  const std::string in_dir = "cd " + dir.str() + " && ";
  ASSERT_EQ(run_command(in_dir + kStoker + " scan --data data -o bad.txt").exit_code, 1);
  const std::string list = read_text(dir.str() + "/bad.txt");
  EXPECT_NE(list.find("\ndog/tab\\tin name.jpg\t"), std::string::npos) << list;
  EXPECT_NE(list.find("\n\\#misc/empty.png\t"), std::string::npos) << list;
  for (const std::string& data : std::vector<std::string>{"data", "./data/", dir.str() + "/data"}) {
    const auto r = run_command(in_dir + kStoker + " train --data " + data +
                               " --model mlp --transforms 'Resize(8), CenterCrop(8), Grayscale' --batch-size 4 "
                               "--max-steps 1 --workers 1 --no-progress --output-dir runs --exclude-list bad.txt");
    ASSERT_EQ(r.exit_code, 0) << data << "\n" << r.err << r.out;
    EXPECT_NE(r.out.find(": 14 images in 3 classes → 5 listed in bad.txt left out"), std::string::npos) << data << "\n"
                                                                                                        << r.out;
    EXPECT_EQ(r.out.find("not in the data"), std::string::npos) << data << "\n" << r.out;
  }
}

TEST(ScanCli, ACleanDatasetExitsZero) {
  TempDir dir;
  const auto r = run_command(kStoker + " scan --data " + write_folder(dir, false));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("scanned   8 of 8 samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad       none"), std::string::npos) << r.out;
}

TEST(ScanCli, FeatureArraysAreCheckedWhenOpenedAndScannedRowByRow) {
  TempDir dir;
  dir.write("x.npy", npy_bytes("<f4", {4, 3}, raw_bytes(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})));
  dir.write("y.npy", npy_bytes("<i8", {4}, raw_bytes(std::vector<int64_t>{0, 1, 0, 1})));
  const auto r = run_command(kStoker + " scan --data " + dir.str() + "/x.npy");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("scanned   4 of 4 samples"), std::string::npos) << r.out;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  dir.write("x.npy", npy_bytes("<f4", {4, 3}, raw_bytes(std::vector<float>{0, 1, 2, 3, 4, nan, 6, 7, 8, 9, 10, 11})));
  const auto bad = run_command(kStoker + " scan --data " + dir.str() + "/x.npy");
  EXPECT_EQ(bad.exit_code, 1) << bad.err << bad.out;
  EXPECT_EQ(without_open_progress_lines(bad.err),
            "error: arrays " + dir.str() +
                "/x.npy + y.npy: a feature of sample 1 (column 2) is nan; fill or "
                "drop missing values first\n");
}

// A class folder that cannot be listed once made "8 images in 2 classes" of 12 in 3, and
// stoker train advised removing empty class folders. Root lists every folder, so as root the
// commands run as the unprivileged user 65534 (setpriv).
TEST(ScanCli, AFolderThatCannotBeListedIsAnErrorNamingIt) {
  TempDir dir;
  const std::string data = write_folder(dir, false);
  dir.write("data/bird/img.jpg", stoker::data::encode_jpeg(make_photo_like(40, 30)));
  for (const std::string& folder : {dir.str(), data, data + "/cat", data + "/dog"})
    ASSERT_EQ(::chmod(folder.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((data + "/bird").c_str(), 0), 0);
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  const std::string expected = "cannot list the folder " + data +
                               "/bird of the dataset: Permission denied; check its permissions (its images would "
                               "otherwise be missing from the data)";
  stoker::testing::expect_one_line_error(run_command(as_user + kStoker + " scan --data " + data), 1, expected,
                                         "scan of an unreadable class folder");
  stoker::testing::expect_one_line_error(run_command(as_user + kStoker + " scan --json --data " + data), 1, expected,
                                         "scan --json of an unreadable class folder");
  if (STOKER_HAS_TORCH) {
    stoker::testing::expect_one_line_error(run_command(as_user + kStoker + " train --data " + data +
                                                       " --model mlp --epochs 1 --output-dir " + dir.str() + "/runs"),
                                           1, expected, "train on an unreadable class folder");
  }
  ASSERT_EQ(::chmod((data + "/bird").c_str(), 0755), 0);
}

TEST(ScanCli, BadArgumentsGiveOneLine) {
  TempDir dir;
  const std::string data = write_folder(dir, false);
  dir.write_text("a_dir/keep.txt", "x");
  expect_one_line_errors(kStoker + " scan", {
                                                {"", 2, "stoker scan needs --data PATH"},
                                                {" --data " + dir.str() + "/missing", 1, "/missing does not exist"},
                                                {" --data " + data + " --workers -1", 2,
                                                 "--workers must be >= 0 (got -1; 0 = one per core)"},
                                                {" --data " + data + " -o " + dir.str() + "/a_dir", 2, "-o"},
                                                {" --data " + data + " -o /dev/null", 2, "-o"},
                                                {" --data " + data + " --split val", 2,
                                                 "no split 'val' in " + data +
                                                     " (an image folder): it holds one split, train; give the "
                                                     "validation data's own path"},
                                                {" --data " + data + " --split garbage", 2,
                                                 "unknown split 'garbage': stoker reads train, val and test (t10k)"},
                                            });
  // --split's help is the declaration's.
  const auto help = run_command(kStoker + " scan --help");
  EXPECT_NE(help.out.find(data::split_help_text()), std::string::npos) << help.out;
}

}  // namespace
}  // namespace stoker
