// No command writes over what it reads: an output option naming one of the command's inputs,
// however it is spelled (./x, absolute, through a symlink, a hard link), or a path inside the
// data it reads, is one line and exit 2, and the input is left as it was. `stoker report
// gpu.csv -o gpu.csv` once replaced the monitor log with the page, and `stoker scan -o`
// a training image with the list.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "stoker/data/encode.h"
#include "stoker_program.h"
#include "support/level_datasets.h"
#include "support/numpy_files.h"
#include "support/run_command.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::TempDir;
using testing::kStoker;

constexpr const char* kMonitorLog = "timestamp,seconds,cpu_percent\nt,0,10\nt,1,20\n";

// `command` (run in `folder`) is refused with exit 2 and one line holding `expected`, and each
// of `kept` still holds its text.
void expect_refused(const std::string& folder, const std::string& command, const std::string& expected,
                    const std::vector<std::pair<std::string, std::string>>& kept) {
  expect_one_line_error(run_command("cd " + folder + " && " + kStoker + " " + command), 2, expected, command);
  for (const auto& [path, text] : kept) EXPECT_EQ(read_text(path), text) << path << " after " << command;
}

TEST(InputsKeptCli, ReportRefusesToWriteItsMonitorLogHoweverItIsNamed) {
  TempDir dir;
  const std::string d = dir.str();
  const std::string log = dir.write_text("gpu.csv", kMonitorLog);
  ASSERT_EQ(::link(log.c_str(), (d + "/hard.csv").c_str()), 0);
  fs::create_symlink(log, d + "/link.csv");
  fs::create_directory_symlink(d, d + "/via");
  const std::vector<std::pair<std::string, std::string>> kept = {{log, kMonitorLog}};
  const std::string same =
      "-o gpu.csv is the input gpu.csv (the same file): writing it would destroy what this "
      "command reads; give -o another path";
  expect_refused(d, "report gpu.csv -o gpu.csv", same, kept);
  expect_refused(d, "report gpu.csv -o ./gpu.csv", "-o ./gpu.csv is the input gpu.csv (the same file)", kept);
  expect_refused(d, "report ./gpu.csv -o " + log, "-o " + log + " is the input ./gpu.csv", kept);
  expect_refused(d, "report gpu.csv -o hard.csv", "-o hard.csv is the input gpu.csv", kept);
  expect_refused(d, "report link.csv -o gpu.csv", "-o gpu.csv is the input link.csv", kept);
  expect_refused(d, "report gpu.csv -o via/gpu.csv", "-o via/gpu.csv is the input gpu.csv", kept);
  // The output a symlink: refused as one, before anything is compared.
  expect_refused(d, "report gpu.csv -o link.csv", "-o link.csv is a symbolic link", kept);
  // The default output (the log's name with .html) of a log named .html, and the temporary
  // file beside -o.
  const std::string html = dir.write_text("log.html", kMonitorLog);
  expect_refused(d, "report log.html", "-o log.html is the input log.html", {{html, kMonitorLog}});
  const std::string tmp = dir.write_text("page.tmp", kMonitorLog);
  expect_refused(d, "report page.tmp -o page", "-o's temporary file page.tmp is the input page.tmp",
                 {{tmp, kMonitorLog}});
  // The other ranks' logs beside it (and their loops files), which the report names.
  const std::string rank1 = dir.write_text("gpu.rank1.csv", kMonitorLog);
  const std::string loops1 = dir.write_text("gpu.rank1.loops.csv", "pass\n");
  expect_refused(d, "report gpu.csv -o gpu.rank1.csv",
                 "-o gpu.rank1.csv is another rank's monitor log (or its loops file) gpu.rank1.csv (the same file)",
                 {{rank1, kMonitorLog}});
  expect_refused(d, "report gpu.csv -o gpu.rank1.loops.csv", "is another rank's monitor log", {{loops1, "pass\n"}});
  // Another name passes.
  const auto ok = run_command("cd " + d + " && " + kStoker + " report gpu.csv -o gpu.html");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(read_text(log), kMonitorLog);
}

TEST(InputsKeptCli, ReportRefusesToWriteTheFilesOfItsRunFolder) {
  TempDir dir;
  const std::string d = dir.str();
  const std::string metrics_text = "epoch,seconds,samples,train_loss\n1,1,10,0.5\n2,1,10,0.4\n";
  const std::string metrics = dir.write_text("run/metrics.csv", metrics_text);
  const std::string summary = dir.write_text("run/summary.json", "{}");
  const std::string config = dir.write_text("run/config.yaml", "epochs: 2\n");
  const std::string monitor = dir.write_text("run/gpu.csv", kMonitorLog);
  const std::string event = dir.write_text("run/tb/events.out.tfevents.1", "");
  const std::vector<std::pair<std::string, std::string>> kept = {
      {metrics, metrics_text}, {summary, "{}"}, {config, "epochs: 2\n"}, {monitor, kMonitorLog}};
  expect_refused(d, "report run -o run/metrics.csv", "-o run/metrics.csv is the run folder's run/metrics.csv", kept);
  expect_refused(d, "report run/ -o ./run/summary.json", "is the run folder's run/summary.json", kept);
  expect_refused(d, "report run/metrics.csv -o " + summary, "is the run folder's run/summary.json", kept);
  expect_refused(d, "report run/summary.json -o run/metrics.csv", "is the run folder's run/metrics.csv", kept);
  expect_refused(d, "report run/summary.json -o run/summary.json", "is the input run/summary.json", kept);
  expect_refused(d, "report run -o run/config.yaml", "is the run folder's run/config.yaml", kept);
  expect_refused(d, "report run -o run/gpu.csv", "is the run folder's run/gpu.csv", kept);
  expect_refused(d, "report run -o run/tb/page.html", "-o run/tb/page.html lies inside the run folder's run/tb", kept);
  EXPECT_EQ(read_text(event), "");
  const auto ok = run_command("cd " + d + " && " + kStoker + " report run");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(fs::exists(d + "/run/report.html"));
}

TEST(InputsKeptCli, ScanRefusesAListInsideTheDataOrOverADataFile) {
  TempDir dir;
  const std::string d = dir.str();
  const std::vector<uint8_t> jpeg = data::encode_jpeg(testing::make_photo_like(40, 30));
  const std::string image = dir.write("data/a/00000.jpg", jpeg);
  dir.write("data/b/00001.jpg", jpeg);
  fs::create_directory_symlink(d + "/data/a", d + "/a-link");
  const std::string original = read_text(image);
  const std::vector<std::pair<std::string, std::string>> kept = {{image, original}};
  const std::string inside =
      "-o data/a/00000.jpg lies inside --data data: writing there would change what this "
      "command reads; give -o a path outside it";
  expect_refused(d, "scan --data data -o data/a/00000.jpg", inside, kept);
  expect_refused(d, "scan --data ./data/ -o " + image, "lies inside --data ./data/", kept);
  expect_refused(d, "scan --data " + d + "/data -o data/bad.txt", "-o data/bad.txt lies inside --data", kept);
  expect_refused(d, "scan --data data -o a-link/00000.jpg", "-o a-link/00000.jpg lies inside --data data", kept);
  expect_refused(d, "scan --data data -o data", "-o data is a folder", kept);
  EXPECT_FALSE(fs::exists(d + "/data/bad.txt"));

  // Data that is one file: the list must not be it.
  dir.write("x.npy", testing::npy_bytes("<f4", {2, 2}, testing::raw_bytes(std::vector<float>{0, 1, 2, 3})));
  dir.write("y.npy", testing::npy_bytes("<i8", {2}, testing::raw_bytes(std::vector<int64_t>{0, 1})));
  const std::string x = read_text(d + "/x.npy");
  expect_refused(d, "scan --data x.npy -o ./x.npy", "-o ./x.npy is --data x.npy (the same file)", {{d + "/x.npy", x}});
  // Nor the targets the data's .npy pairs with.
  const std::string y = read_text(d + "/y.npy");
  expect_refused(d, "scan --data x.npy -o y.npy", "-o y.npy is --data's targets y.npy (the same file)",
                 {{d + "/y.npy", y}});
  const auto ok = run_command("cd " + d + " && " + kStoker + " scan --data data -o bad.txt");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(InputsKeptCli, PrepareRefusesAnOutputInsideTheData) {
  TempDir dir;
  const std::string d = dir.str();
  const std::string image = dir.write("data/a/00000.jpg", data::encode_jpeg(testing::make_photo_like(40, 30)));
  fs::create_directory_symlink(d + "/data", d + "/data-link");
  const std::string original = read_text(image);
  expect_refused(d, "prepare --data data --out data/a/copy", "--out data/a/copy lies inside --data data",
                 {{image, original}});
  expect_refused(d, "prepare --data data --out data-link/copy", "--out data-link/copy lies inside --data data",
                 {{image, original}});
  expect_refused(d, "prepare --data ./data --out data-link", "--out data-link is --data ./data (the same folder)",
                 {{image, original}});
  EXPECT_FALSE(fs::exists(d + "/data/a/copy"));
}

TEST(InputsKeptCli, EvaluateRefusesPredictionsOverTheWeightsOrInsideTheData) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  TempDir dir;
  const std::string d = dir.str();
  const std::string weights = dir.write_text("model.safetensors", "weights");
  const std::string data = testing::write_level_classes(dir, "data", 8, 1);
  const std::vector<std::pair<std::string, std::string>> kept = {{weights, "weights"}};
  expect_refused(d, "evaluate model.safetensors --data data --predictions ./model.safetensors",
                 "--predictions ./model.safetensors is the weights model.safetensors (the same file)", kept);
  expect_refused(d, "evaluate model.safetensors --data data --predictions data/p.csv",
                 "--predictions data/p.csv lies inside --data data", kept);
  EXPECT_FALSE(fs::exists(d + "/data/p.csv"));
}

TEST(InputsKeptCli, TrainRefusesARunFolderInsideItsData) {
  if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  TempDir dir;
  const std::string d = dir.str();
  testing::write_level_classes(dir, "data", 16, 1);
  expect_refused(d,
                 "train --data data --model mlp --epochs 1 --workers 1 --no-progress --transforms 'Resize(8), "
                 "CenterCrop(8), Grayscale' --output-dir data/bright/runs",
                 "--output-dir data/bright/runs lies inside --data data", {});
  EXPECT_FALSE(fs::exists(d + "/data/bright/runs"));
}

}  // namespace
}  // namespace stoker
