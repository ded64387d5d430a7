// `stoker report` end to end: the page of a real `stoker train` run folder and of a real
// `stoker monitor` log, the line both print at the end that makes it, and each bad input as
// one line: parts of a run missing or cut off (a note, and the rest drawn), nothing to draw
// (an error), an output path that is not a regular file or a new name.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "stoker_program.h"
#include "support/level_datasets.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::TempDir;
using testing::kStoker;

int64_t lines_in(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// One short run on generated images, shared by the tests: three epochs with validation.
class ReportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!STOKER_HAS_TORCH) return;
    dir_ = new TempDir;
    const std::string train = stoker::testing::write_level_classes(*dir_, "train", 160, 3);
    const std::string val = stoker::testing::write_level_classes(*dir_, "val", 64, 4);
    train_ = new stoker::testing::CommandResult(run_command(
        kStoker + " train --data " + train + " --val-data " + val +
        " --epochs 3 --model mlp --workers 1 --batch-size 32 --lr 3e-3 --no-progress"
        " --transforms 'Resize(8), CenterCrop(8), Grayscale, Normalize(mean=(0.5,), std=(0.5,))' --output-dir " +
        dir_->str() + "/runs"));
    run_ = stoker::testing::run_dir_of(dir_->str() + "/runs");
  }
  static void TearDownTestSuite() {
    delete train_;
    delete dir_;
  }
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
    ASSERT_EQ(train_->exit_code, 0) << train_->err << train_->out;
  }
  // A copy of the run folder to damage.
  static std::string copy_of_run(const TempDir& into) {
    const std::string copy = into.str() + "/run";
    fs::copy(run_, copy, fs::copy_options::recursive);
    return copy;
  }

  static TempDir* dir_;
  static stoker::testing::CommandResult* train_;
  static std::string run_;
};

TempDir* ReportCli::dir_ = nullptr;
stoker::testing::CommandResult* ReportCli::train_ = nullptr;
std::string ReportCli::run_;

TEST_F(ReportCli, TrainPrintsTheLineThatMakesTheReportAndThePageHasEveryPlot) {
  const std::string line = "report: stoker report " + run_ + "\n";
  ASSERT_NE(train_->out.find(line), std::string::npos) << train_->out;
  EXPECT_TRUE(train_->out.ends_with(line)) << "the last line: " << train_->out;
  const auto r = run_command(kStoker + " report " + run_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("report    " + run_ + "/report.html (", 0), 0u) << r.out;
  const std::string page = read_text(run_ + "/report.html");
  for (const char* id : {"id=\"loss\"", "id=\"accuracy\"", "id=\"lr\"", "id=\"samples\"", "id=\"split\"",
                         "id=\"timeline\"", "id=\"stages\"", "id=\"recs\"", "id=\"config\""}) {
    EXPECT_NE(page.find(id), std::string::npos) << id;
  }
  // Each line plot and the timeline drawn (loss, accuracy, learning rate, timeline), bars with
  // their verdicts, the loader's stages measured, no part left out.
  size_t polylines = 0;
  for (size_t at = page.find("<polyline"); at != std::string::npos; at = page.find("<polyline", at + 1)) ++polylines;
  EXPECT_GE(polylines, 2u + 2u + 1u + 2u);
  EXPECT_NE(page.find("-bound</b>"), std::string::npos);
  EXPECT_NE(page.find("class=\"stagebar\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"notes\""), std::string::npos);
  EXPECT_NE(page.find("batch_size</th><td>32"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);

  TempDir out;
  const auto named = run_command(kStoker + " report " + run_ + " -o " + out.str() + "/r.html");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(read_text(out.str() + "/r.html"), page);
}

TEST_F(ReportCli, APartMissingOrCutOffIsOneNoteAndTheRestIsDrawn) {
  TempDir dir;
  const std::string run = copy_of_run(dir);
  // metrics.csv's last row cut mid-way, as a run killed mid-write leaves it.
  std::string metrics = read_text(run + "/metrics.csv");
  metrics.resize(metrics.size() - 20);
  std::ofstream(run + "/metrics.csv", std::ios::trunc) << metrics;
  auto r = run_command(kStoker + " report " + run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("note: " + run + "/metrics.csv: its last line (line 4) is cut off mid-row", 0), 0u) << r.err;
  EXPECT_EQ(lines_in(r.err), 1) << r.err;
  EXPECT_NE(read_text(run + "/report.html").find("is cut off mid-row"), std::string::npos);

  fs::remove(run + "/metrics.csv");
  r = run_command(kStoker + " report " + run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "note: " + run + "/metrics.csv is missing (a row is added as each epoch ends): no per-epoch curves\n");
  const std::string page = read_text(run + "/report.html");
  EXPECT_NE(page.find("<polyline"), std::string::npos) << "the learning rate and the timeline from tb/";

  std::ofstream(run + "/summary.json", std::ios::trunc) << "{\"epochs\": [";
  r = run_command(kStoker + " report " + run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("summary.json is not complete JSON"), std::string::npos) << r.err;
  EXPECT_EQ(lines_in(r.err), 2) << r.err;
}

TEST_F(ReportCli, NothingToDrawIsOneErrorLine) {
  TempDir dir;
  const std::string run = copy_of_run(dir);
  fs::remove_all(run + "/tb");
  fs::remove(run + "/summary.json");
  std::ofstream(run + "/metrics.csv", std::ios::trunc) << "epoch,seconds,samples\n";
  expect_one_line_error(run_command(kStoker + " report " + run), 1,
                        run + " holds nothing to draw yet: no complete metrics.csv row",
                        "a run before its first epoch");
}

// A hand-made run folder: metrics.csv's three epochs, and `summary` as summary.json.
std::string write_run(const TempDir& dir, const std::string& summary) {
  dir.write_text("run/metrics.csv",
                 "epoch,seconds,samples,train_loss,val_loss,samples_per_sec,wait_s,copy_s,compute_s\n"
                 "1,1,100,0.9,1.0,100,0.1,0.1,0.8\n2,1,100,0.7,0.8,110,0.1,0.1,0.8\n3,1,100,0.5,0.6,120,0.2,0.1,0.7\n");
  dir.write_text("run/summary.json", summary);
  return dir.str() + "/run";
}

// Each part of summary.json whose value has the wrong type is left out with a note, and the
// rest is drawn: such a file once ended the report with a raw "[json.exception.type_error.302]".
TEST(ReportRunFolderCli, AValueOfTheWrongTypeLeavesItsPartOutWithANote) {
  const std::string epoch =
      R"({"epoch": 1, "wait_s": 0.1, "copy_s": 0.1, "compute_s": 0.8, "verdict": "compute-bound")";
  struct Case {
    std::string summary;
    std::string note;  // a part of the note line
    std::string kept;  // a part of the page still drawn
  };
  const std::vector<Case> cases = {
      {R"({"model": "mlp", "epochs": [{"epoch": 1, "wait_s": 0.1, "copy_s": 0.1, "compute_s": 0.8, "verdict": 5}]})",
       "summary.json: epochs[0].verdict is not text (5): left out", "<dd>mlp</dd>"},
      {R"({"model": "mlp", "epochs": [5, )" + epoch + "}]}", "summary.json: epochs[0] is not an object (5): left out",
       "compute-bound"},
      {R"({"model": "mlp", "best": {"epoch": 2, "metric": [1], "value": 0.5}, "epochs": [)" + epoch + "}]}",
       "summary.json: best.metric is not text ([1]): left out", "compute-bound"},
      {R"({"model": "mlp", "best": "x", "epochs": [)" + epoch + "}]}",
       "summary.json: best is not an object (\"x\"): left out", "compute-bound"},
      {R"({"model": 7, "epochs": [)" + epoch + "}]}", "summary.json: model is not text (7): left out", "compute-bound"},
      {R"({"model": "mlp", "epochs": {"a": 1}})", "summary.json: epochs is not a list ({\"a\":1}): left out",
       "<dd>mlp</dd>"},
      {R"({"model": "mlp", "epochs": [)" + epoch +
           R"(, "loader_seconds": {"read": "x", "decode": 2, "transform": 1}}]})",
       "summary.json: epochs[0].loader_seconds.read is not a number (\"x\"): left out", "2.0 s</td>"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string run = write_run(dir, c.summary);
    const auto r = run_command(kStoker + " report " + run);
    ASSERT_EQ(r.exit_code, 0) << c.summary << "\n" << r.err;
    EXPECT_NE(r.err.find("note: " + run + "/" + c.note), std::string::npos) << c.summary << "\n" << r.err;
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    const std::string page = read_text(run + "/report.html");
    EXPECT_NE(page.find("id=\"loss\""), std::string::npos) << c.summary;
    EXPECT_NE(page.find("<polyline"), std::string::npos) << c.summary;
    EXPECT_NE(page.find(c.kept), std::string::npos) << c.summary;
    EXPECT_EQ(page.find("nan %"), std::string::npos) << c.summary;
  }
}

// A run of 300,000 epochs once made a page of 217 MB: a bar per epoch in each bar plot, and a
// line per change of verdict. Every plot is reduced to its width in pixels.
TEST(ReportRunFolderCli, AVeryLongRunMakesASmallPage) {
  TempDir dir;
  constexpr int kEpochs = 300000;
  std::string metrics =
      "epoch,seconds,samples,train_loss,val_loss,train_top1,val_top1,samples_per_sec,wait_s,copy_s,"
      "compute_s\n";
  std::string summary = R"({"model": "mlp", "epochs": [)";
  for (int e = 1; e <= kEpochs; ++e) {
    const double loss = 1.0 / e;
    metrics += fmt::format("{},1,100,{:.6g},{:.6g},0.5,0.5,{},0.1,0.1,0.8\n", e, loss, loss * 1.1, 100 + e % 7);
    summary += fmt::format(R"({}{{"epoch": {}, "wait_s": 0.{}, "copy_s": 0.1, "compute_s": 0.8, "verdict": "{}"}})",
                           e == 1 ? "" : ",", e, e % 2 + 1, e % 2 == 0 ? "input-bound" : "compute-bound");
  }
  dir.write_text("run/metrics.csv", metrics);
  dir.write_text("run/summary.json", summary + "]}");
  const auto r = run_command(kStoker + " report " + dir.str() + "/run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto bytes = fs::file_size(dir.str() + "/run/report.html");
  EXPECT_LT(bytes, 2u << 20) << "the page of " << kEpochs << " epochs";
  const std::string page = read_text(dir.str() + "/run/report.html");
  EXPECT_NE(page.find("more changes of verdict"), std::string::npos);
  EXPECT_NE(page.find("epochs 1–"), std::string::npos) << "a bar stands for several epochs";
}

// Runs `stoker monitor` for 0.6 s with `log_flag FILE` (dir/m.EXTENSION), checks that it ends with
// the report line, draws the log alone and checks the page's timeline; returns the page.
std::string monitor_log_drawn(const TempDir& dir, const std::string& log_flag, const std::string& extension) {
  const std::string log = dir.str() + "/m." + extension;
  const auto m =
      run_command(kStoker + " monitor --no-gpu --quiet --interval 0.1 --duration 0.6 " + log_flag + " " + log);
  EXPECT_EQ(m.exit_code, 0) << m.err;
  EXPECT_TRUE(m.out.ends_with("report: stoker report " + log + "\n")) << m.out;
  const auto r = run_command(kStoker + " report " + log);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string page = read_text(dir.str() + "/m.html");
  EXPECT_NE(page.find("id=\"timeline\""), std::string::npos);
  EXPECT_NE(page.find("<polyline"), std::string::npos);
  return page;
}

TEST(ReportMonitorCli, MonitorPrintsTheLineAndItsLogDrawsAlone) {
  TempDir dir;
  const std::string log = dir.str() + "/m.csv";
  const std::string page = monitor_log_drawn(dir, "--log", "csv");
  EXPECT_EQ(page.find("id=\"loss\""), std::string::npos) << "a monitor log has no training curves";

  // Cut mid-row: a note, and the rest drawn.
  std::string text = read_text(log);
  text.resize(text.size() - 7);
  std::ofstream(dir.str() + "/cut.csv") << text;
  const auto cut = run_command(kStoker + " report " + dir.str() + "/cut.csv -o " + dir.str() + "/cut.html");
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_NE(cut.err.find("is cut off mid-row"), std::string::npos) << cut.err;
  EXPECT_EQ(lines_in(cut.err), 1) << cut.err;
  EXPECT_TRUE(fs::exists(dir.str() + "/cut.html"));
}

TEST(ReportMonitorCli, AJsonLinesLogDrawsAsItsCsvWould) {
  TempDir dir;
  monitor_log_drawn(dir, "--jsonl", "jsonl");
}

TEST(ReportMonitorCli, BadInputOneLineNonZero) {
  TempDir dir;
  const std::string empty = dir.write_text("empty.csv", "");
  const std::string header = dir.write_text("header.csv", "timestamp,seconds,cpu_percent,mem_used_bytes\n");
  const std::string log = dir.write_text("ok.csv", "timestamp,seconds,cpu_percent\nt,0,10\nt,1,20\n");
  fs::create_directories(dir.path() / "plain");
  fs::create_symlink(dir.str() + "/elsewhere.html", dir.str() + "/link.html");
  ASSERT_EQ(::mkfifo((dir.str() + "/fifo.html").c_str(), 0600), 0);
  const std::vector<stoker::testing::ExpectedError> cases = {
      {empty, 1, empty + " is empty: no header row and no rows"},
      {header, 1, header + " has a header but no complete sample row: nothing to draw"},
      {dir.str() + "/plain", 1,
       dir.str() + "/plain is not a run folder: it holds none of metrics.csv, summary.json, tb/"},
      {dir.str() + "/none", 2, dir.str() + "/none does not exist; give a run folder"},
      {"", 2, "stoker report needs a run folder"},
      {log + " -o /dev/null", 2,
       "-o /dev/null is a character device; stoker writes only to a new name or over a "
       "regular file"},
      {log + " -o " + dir.str() + "/link.html", 2, "is a symbolic link"},
      {log + " -o " + dir.str() + "/fifo.html", 2, "is a FIFO"},
      {log + " -o " + dir.str() + "/plain", 2, "is a folder"},
      {log + " -o " + dir.str() + "/no-folder/r.html", 2, "the folder " + dir.str() + "/no-folder does not exist"},
  };
  stoker::testing::expect_one_line_errors(kStoker + " report ", cases);
  EXPECT_FALSE(fs::exists(dir.str() + "/elsewhere.html"));
}

}  // namespace
}  // namespace stoker
