// Reading what a run leaves for the report: CSV files cut off mid-row, event files read back,
// the low-utilisation stretches, a run folder with parts missing, and the page's contents.
#include "stoker/report/run_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "stoker/core/error.h"
#include "stoker/monitor/sinks.h"
#include "stoker/report/csv_table.h"
#include "stoker/report/event_file.h"
#include "stoker/report/event_reader.h"
#include "stoker/report/html_report.h"
#include "stoker/report/loop_records.h"
#include "support/error_text.h"
#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker::report {
namespace {

using testing::TempDir;

constexpr const char* kMonitorHeader =
    "timestamp,seconds,cpu_percent,mem_used_bytes,mem_available_bytes,mem_total_bytes,gpu0_util_percent,gpu0_"
    "throttle\n";

TEST(CsvTableTest, QuotedCellsHoldCommasAndEmptyCellsAreNaN) {
  const CsvTable t = parse_csv_table("a,b,c\n1,,\"x, \"\"y\"\"\"\n2.5,3,z\n", "t.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][2], "x, \"y\"");
  EXPECT_TRUE(std::isnan(t.numbers("b")[0]));
  EXPECT_EQ(t.numbers("a")[1], 2.5);
  EXPECT_TRUE(std::isnan(t.numbers("missing")[0]));
  EXPECT_TRUE(std::isnan(t.numbers("c")[1]));  // text is not a number
  EXPECT_TRUE(t.notes.empty());
}

TEST(CsvTableTest, InfinitiesAndNumbersPastDoublesRangeAreNotFigures) {
  const CsvTable t = parse_csv_table("a\ninf\nnan\n1e999\n-2\n", "t.csv");
  const std::vector<double> a = t.numbers("a");
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(a[i])) << i;
  EXPECT_EQ(a[3], -2);
}

TEST(CsvTableTest, ALastLineCutMidRowIsLeftOutWithANote) {
  const CsvTable t = parse_csv_table("a,b,c\n1,2,3\n4,5", "m.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "m.csv: its last line (line 3) is cut off mid-row (2 of 3 cells): left out");
}

TEST(CsvTableTest, RowsOfTheWrongWidthInsideAreCountedOnce) {
  const CsvTable t = parse_csv_table("a,b\r\n1,2\r\n3\r\n4,5,6\r\n7,8\r\n", "w.csv");
  EXPECT_EQ(t.rows.size(), 2u);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "w.csv: 2 rows with other than the header's 2 cells left out (first: line 3, 1 cells)");
}

TEST(CsvTableTest, AnEmptyFileIsOneError) {
  EXPECT_THROW(parse_csv_table("", "e.csv"), DataError);
  EXPECT_EQ(testing::error_text([] { parse_csv_table("\n\n", "e.csv"); }),
            "e.csv is empty: no header row and no rows; give a CSV that stoker wrote (stoker monitor --log FILE.csv, "
            "or a run folder's metrics.csv)");
}

TEST(EventReaderTest, ReadsBackWhatEventFileWroteAndStopsAtACutOffRecord) {
  TempDir dir;
  std::string path;
  {
    EventFile events(dir.str() + "/tb");
    path = events.path();
    ASSERT_TRUE(events.write(10, {{"train/lr", 0.5}, {"train/loss", 2.0}}, 100.0).ok());
    ASSERT_TRUE(events.write(20, {{"train/lr", 0.25}}, 101.0).ok());
  }
  EventScalars tb = read_event_scalars(dir.str() + "/tb");
  EXPECT_EQ(tb.files, 1);
  EXPECT_TRUE(tb.notes.empty());
  ASSERT_EQ(tb.tags["train/lr"].size(), 2u);
  EXPECT_EQ(tb.tags["train/lr"][1].step, 20);
  EXPECT_EQ(tb.tags["train/lr"][1].value, 0.25);
  EXPECT_EQ(tb.tags["train/lr"][1].wall_time, 101.0);
  EXPECT_EQ(tb.tags["train/loss"][0].value, 2.0);
  // The last record cut in half: the ones before it still read.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 9);
  tb = read_event_scalars(dir.str() + "/tb");
  EXPECT_EQ(tb.tags["train/lr"].size(), 1u);
  ASSERT_EQ(tb.notes.size(), 1u);
  EXPECT_NE(tb.notes[0].find("record 3 is cut off: read up to it"), std::string::npos) << tb.notes[0];
  EXPECT_TRUE(read_event_scalars(dir.str() + "/no such folder").tags.empty());
}

TEST(LowStretchesTest, OnlyStretchesLongEnoughAndEndingWhereTheUtilisationCameBack) {
  const std::vector<double> t = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<double> u = {90, 10, 10, 10, 90, 20, 90, 10, 10, 10, 10};
  const auto spans = low_stretches(t, u, 50, 3);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].begin, 1);
  EXPECT_EQ(spans[0].end, 4);
  EXPECT_EQ(spans[1].begin, 7);
  EXPECT_EQ(spans[1].end, 10);  // to the last sample
}

TEST(RunReportTest, AMonitorLogWithAGpuShadesItsIdleStretch) {
  TempDir dir;
  std::string csv = kMonitorHeader;
  for (int i = 0; i < 60; ++i) {
    csv += fmt::format("2026-11-27T10:00:{:02d}.000Z,{},40,1000,3000,4000,{},\"none\"\n", i, i,
                       i >= 20 && i < 40 ? 5 : 95);
  }
  const std::string path = dir.write_text("gpu.csv", csv + "2026-11-27T10:01:00.000Z,60,4");
  const RunReport r = load_report(path);
  EXPECT_TRUE(r.monitor_log_only);
  ASSERT_EQ(r.timeline.size(), 3u);
  EXPECT_EQ(r.timeline[1].y[0], 25);  // RAM: 1000 of 4000 bytes
  EXPECT_EQ(r.timeline[2].name, "GPU 0 util");
  EXPECT_EQ(r.low_basis, "GPU utilisation");
  ASSERT_EQ(r.low.size(), 1u);
  EXPECT_EQ(r.low[0].begin, 20);
  EXPECT_EQ(r.low[0].end, 40);
  ASSERT_EQ(r.notes.size(), 1u);  // the cut-off last line
  const std::string page = render_html(r);
  EXPECT_NE(page.find("<meta name=\"viewport\""), std::string::npos);
  EXPECT_NE(page.find("class=\"low\""), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("http"), std::string::npos);  // nothing fetched: no URL at all
}

// A script's watched loops, recorded beside its monitor log (stoker.watch under stoker.monitor):
// the report of the log draws the unnamed loop's split and samples/s, and a named loop's split
// on its own; the loops file given alone is refused, naming the log to give.
TEST(RunReportTest, AMonitorLogDrawsTheStepTimeSplitOfTheLoopsWatchedBesideIt) {
  TempDir dir;
  std::string csv = kMonitorHeader;
  for (int i = 0; i < 5; ++i)
    csv += fmt::format("2026-11-27T10:00:{:02d}.000Z,{},40,1000,3000,4000,90,\"none\"\n", i, i);
  const std::string log = dir.write_text("run.csv", csv);
  {
    LoopsCsv loops(loops_csv_path(log));
    EXPECT_EQ(loops.path(), (dir.path() / "run.loops.csv").string());
    LoopEpoch e;
    e.steps = 20;
    e.samples = 160;
    e.wait_s = 3, e.copy_s = 0, e.compute_s = 1;
    e.wait_share = 0.75, e.compute_share = 0.25;
    e.verdict = "input-bound (high)";
    ASSERT_TRUE(loops.write(e).ok());
    LoopEpoch val = e;
    val.loop = "val, held out";  // a comma: quoted
    val.wait_s = 1, val.compute_s = 3;
    val.verdict = "";
    ASSERT_TRUE(loops.write(val).ok());
    e.epoch = 1;
    e.wait_s = 1, e.compute_s = 1;
    e.verdict = "balanced";
    ASSERT_TRUE(loops.write(e).ok());
  }
  const RunReport r = load_report(log);
  EXPECT_TRUE(r.monitor_log_only);
  ASSERT_EQ(r.split.size(), 2u);
  EXPECT_EQ(r.split[0].epoch, 0);
  EXPECT_EQ(r.split[0].wait_s, 3);
  EXPECT_EQ(r.split[0].verdict, "input-bound (high)");
  EXPECT_EQ(r.split[1].epoch, 1);
  EXPECT_EQ(r.split[1].verdict, "balanced");
  ASSERT_EQ(r.samples_per_sec.size(), 1u);
  EXPECT_EQ(r.samples_per_sec[0].y, (std::vector<double>{40, 80}));  // 160 samples in 4 s, then 2 s
  ASSERT_EQ(r.other_loops.size(), 1u);
  EXPECT_EQ(r.other_loops[0].loop, "val, held out");
  ASSERT_EQ(r.other_loops[0].epochs.size(), 1u);
  EXPECT_EQ(r.other_loops[0].epochs[0].compute_s, 3);
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
  const std::string page = render_html(r);
  EXPECT_NE(page.find("id=\"split\""), std::string::npos);
  EXPECT_NE(page.find("Step time by epoch, with its verdict: val, held out"), std::string::npos);
  EXPECT_NE(page.find("input-bound (high)"), std::string::npos);
  EXPECT_NE(page.find("Samples/s by epoch"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(stoker::testing::error_text<DataError>([&] { load_report((dir.path() / "run.loops.csv").string()); })
                .find("is the watched loops' file stoker.monitor writes beside its log, not the log: give the "
                      "monitor log itself"),
            std::string::npos);
}

// A generator watched anew each epoch starts each pass at epoch 0: the passes are drawn in order.
TEST(RunReportTest, ALoopWhoseEpochsDoNotRiseHasItsPassesNumberedInOrder) {
  TempDir dir;
  const std::string log =
      dir.write_text("run.csv", std::string(kMonitorHeader) + "2026-11-27T10:00:00.000Z,0,40,1000,3000,4000,90,\"\"\n");
  {
    LoopsCsv loops(loops_csv_path(log));
    LoopEpoch e;
    e.steps = e.samples = 10;
    for (double wait : {3.0, 2.0, 1.0}) {
      e.wait_s = wait, e.compute_s = 1;
      ASSERT_TRUE(loops.write(e).ok());
    }
  }
  const RunReport r = load_report(log);
  ASSERT_EQ(r.split.size(), 3u);
  EXPECT_EQ(r.split[1].epoch, 1);
  EXPECT_EQ(r.split[2].epoch, 2);
  EXPECT_EQ(r.split[2].wait_s, 1);
  EXPECT_EQ(r.samples_per_sec[0].x, (std::vector<double>{0, 1, 2}));
  EXPECT_TRUE(r.notes.empty());
}

TEST(RunReportTest, AMonitorLogWithoutLoopsHasNoSplitAndADamagedLoopsFileIsANote) {
  TempDir dir;
  const std::string log =
      dir.write_text("run.csv", std::string(kMonitorHeader) + "2026-11-27T10:00:00.000Z,0,40,1000,3000,4000,90,\"\"\n");
  EXPECT_TRUE(load_report(log).split.empty());
  dir.write_text("run.loops.csv", "loop,epoch\n,0\n");
  const RunReport r = load_report(log);
  EXPECT_TRUE(r.split.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("run.loops.csv has no rank column"), std::string::npos) << r.notes[0];
  EXPECT_EQ(render_html(r).find("id=\"split\""), std::string::npos);
}

// The monitor's JSON lines, as its JsonlLog writes them, read as the table its CsvLog writes for
// the same samples: every CSV column there by name with the same figures, and the same report.
TEST(RunReportTest, AJsonLinesMonitorLogReadsAsItsCsvTwin) {
  TempDir dir;
  const std::string csv = dir.str() + "/run.csv", jsonl = dir.str() + "/run.jsonl";
  {
    monitor::CsvLog csv_log(csv, 2);
    monitor::JsonlLog jsonl_log(jsonl, {{0, "Fake", "GPU-0", true}, {1, "Fake", "GPU-1", false}}, "2 GPUs");
    for (int i = 0; i < 30; ++i) {
      monitor::Sample s;
      s.seconds = 0.5 * i;
      s.unix_ns = 1'795'000'000'000'000'000 + int64_t{500'000'000} * i;
      s.host.cpu_percent.set(10 + i, "/proc/stat");
      s.host.memory_used_bytes.set(1e9 * (1 + i % 3), "/proc/meminfo");
      s.host.memory_total_bytes.set(8e9, "/proc/meminfo");
      s.host.core_percent = {10.0f + static_cast<float>(i), 20.0f};
      for (int g = 0; g < 2; ++g) {
        monitor::GpuSample gpu;
        gpu.index = g;
        gpu.util_gpu_percent.set(g == 0 ? 90 - i : 3.25, "nvml");
        if (i > 0) gpu.sm_activity_percent.set(40, "nvml-gpm");
        gpu.throttle_reasons.set(g == 0 ? 0x4 : 0, "nvml");
        s.gpus.push_back(gpu);
      }
      csv_log.write(s);
      jsonl_log.write(s);
    }
  }
  const CsvTable from_csv = read_csv_table(csv, "monitor log");
  const std::string text = testing::read_text(jsonl);
  ASSERT_TRUE(is_json_lines(text));
  const CsvTable from_jsonl = parse_jsonl_table(text, jsonl);
  EXPECT_TRUE(from_jsonl.notes.empty());
  ASSERT_EQ(from_jsonl.rows.size(), from_csv.rows.size());
  for (size_t c = 0; c < from_csv.columns.size(); ++c) {
    const std::string& name = from_csv.columns[c];
    const int at = from_jsonl.column(name);
    ASSERT_GE(at, 0) << name;
    for (size_t r = 0; r < from_csv.rows.size(); ++r) {
      const std::string &want = from_csv.rows[r][c], &got = from_jsonl.rows[r][static_cast<size_t>(at)];
      if (want == got) continue;
      EXPECT_EQ(from_csv.numbers(name)[r], from_jsonl.numbers(name)[r]) << name << " row " << r;  // 1.500 and 1.5
    }
  }
  const RunReport a = load_report(csv), b = load_report(jsonl);
  ASSERT_EQ(b.timeline.size(), 4u);  // CPU, RAM, GPU 0 util, GPU 1 util
  ASSERT_EQ(a.timeline.size(), b.timeline.size());
  for (size_t i = 0; i < a.timeline.size(); ++i) {
    EXPECT_EQ(a.timeline[i].name, b.timeline[i].name);
    EXPECT_EQ(a.timeline[i].y, b.timeline[i].y) << a.timeline[i].name;
  }
  EXPECT_EQ(a.facts, b.facts);
  EXPECT_EQ(a.low.size(), b.low.size());
  EXPECT_TRUE(b.notes.empty());
}

TEST(RunReportTest, AJsonLinesLogCutOffOrOfAnotherKindIsANoteOrOneError) {
  TempDir dir;
  const std::string meta = "{\"type\":\"meta\",\"fields\":[]}\n";
  const std::string sample = "{\"type\":\"sample\",\"seconds\":0.5,\"cpu_percent\":12,\"gpus\":[]}\n";
  const RunReport cut =
      load_report(dir.write_text("cut.jsonl", meta + sample + "not json\n" + sample + "{\"type\":\"sam"));
  EXPECT_EQ(cut.timeline.front().y, (std::vector<double>{12, 12}));
  ASSERT_EQ(cut.notes.size(), 2u);
  EXPECT_EQ(cut.notes[0], dir.str() + "/cut.jsonl: 1 line that is not a JSON object left out (first: line 3)");
  EXPECT_EQ(cut.notes[1], dir.str() + "/cut.jsonl: its last line (line 5) is cut off mid-sample: left out");
  EXPECT_EQ(testing::error_text([&] { load_report(dir.write_text("meta.jsonl", meta)); }),
            dir.str() +
                "/meta.jsonl has its meta line but no complete sample line: nothing to draw; wait for the monitor's "
                "first samples (one per --interval), then run stoker report again");
  EXPECT_EQ(testing::error_text([&] { load_report(dir.write_text("other.jsonl", sample)); }),
            dir.str() +
                "/other.jsonl is not a stoker monitor log: its first line is not the {\"type\":\"meta\"} line the "
                "monitor's JSON lines begin with (docs/MONITOR_FORMATS.md); give the log of stoker monitor --log or "
                "--jsonl, or of stoker.monitor(log=...), or a run folder");
  EXPECT_EQ(testing::error_text([&] { load_report(dir.write_text("other.txt", "a b c\n1 2 3\n")); }),
            dir.str() +
                "/other.txt is not a stoker monitor log: its header has no seconds and cpu_percent columns "
                "(docs/MONITOR_FORMATS.md); give the CSV or JSON lines of stoker monitor --log or --jsonl, or of "
                "stoker.monitor(log=...), or a run folder");
}

// The ranks of one script given one log= each write their own; rank 0's report names the others.
TEST(RunReportTest, EachRankHasItsLogAndRankZerosReportNamesTheOthers) {
  EXPECT_EQ(rank_log_path("runs/run.csv", 0), "runs/run.csv");
  EXPECT_EQ(rank_log_path("runs/run.csv", 1), "runs/run.rank1.csv");
  EXPECT_EQ(rank_log_path("run.jsonl", 12), "run.rank12.jsonl");
  EXPECT_EQ(rank_log_path("runs/log", 2), "runs/log.rank2");
  EXPECT_EQ(loops_csv_path(rank_log_path("run.csv", 1)), "run.rank1.loops.csv");
  TempDir dir;
  const std::string row = "t,0,10,1,1,2,50,\nt,1,20,1,1,2,60,\n";
  const std::string log = dir.write_text("run.csv", std::string(kMonitorHeader) + row);
  for (const auto& [name, fact] : load_report(log).facts) EXPECT_NE(name, "other ranks' logs");
  dir.write_text("run.rank1.csv", std::string(kMonitorHeader) + row);
  dir.write_text("run.rank2.csv", std::string(kMonitorHeader) + row);
  const RunReport r = load_report(log);
  ASSERT_FALSE(r.facts.empty());
  EXPECT_EQ(r.facts.back(),
            (std::pair<std::string, std::string>{"other ranks' logs",
                                                 "run.rank1.csv, run.rank2.csv (stoker report each for its page)"}));
  for (const auto& [name, fact] : load_report(dir.str() + "/run.rank1.csv").facts) EXPECT_NE(name, "other ranks' logs");
}

TEST(RunReportTest, EmptyAndHeaderOnlyMonitorLogsAreOneErrorEach) {
  TempDir dir;
  EXPECT_EQ(testing::error_text([&] { load_report(dir.write_text("empty.csv", "")); }),
            dir.str() +
                "/empty.csv is empty: no header row and no rows; give a CSV that stoker wrote (stoker monitor "
                "--log FILE.csv, or a run folder's metrics.csv)");
  EXPECT_NE(testing::error_text([&] {
              load_report(dir.write_text("header.csv", kMonitorHeader));
            }).find("has a header but no complete sample row: nothing to draw"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] {
              load_report(dir.write_text("other.csv", "a,b\n1,2\n"));
            }).find("is not a stoker monitor log"),
            std::string::npos);
}

TEST(RunReportTest, AFolderThatIsNotARunAndOneWithNothingYet) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "plain");
  EXPECT_NE(testing::error_text([&] { load_report(dir.str() + "/plain"); }).find("is not a run folder"),
            std::string::npos);
  dir.write_text("started/metrics.csv", "epoch,seconds,train_loss\n");
  EXPECT_NE(testing::error_text([&] { load_report(dir.str() + "/started"); }).find("holds nothing to draw yet"),
            std::string::npos);
  EXPECT_NE(testing::error_text([&] { load_report(dir.str() + "/missing"); }).find("does not exist"),
            std::string::npos);
}

TEST(RunReportTest, ARunFolderWithoutSummaryOrTbStillDrawsItsEpochs) {
  TempDir dir;
  dir.write_text("run/metrics.csv",
                 "epoch,seconds,samples_per_sec,train_loss,val_loss,val_top1,wait_s,copy_s,compute_s,train_top1\n"
                 "1,10,500,1.5,1.2,0.6,2,1,7,0.55\n"
                 "2,10,520,1.1,1.0,0.7,1,1,8,0.66\n"
                 "3,10");
  const RunReport r = load_run_folder(dir.str() + "/run");
  ASSERT_EQ(r.loss.size(), 2u);
  EXPECT_EQ(r.loss[0].y.size(), 2u);
  ASSERT_EQ(r.accuracy.size(), 2u);
  EXPECT_NEAR(r.accuracy[1].y[1], 70, 1e-9);
  ASSERT_EQ(r.split.size(), 2u);
  EXPECT_EQ(r.split[0].wait_s, 2);
  EXPECT_TRUE(r.split[0].verdict.empty());
  EXPECT_TRUE(r.learning_rate.empty());
  // The cut row, summary.json, tb/'s learning rate and config.yaml: one note each.
  EXPECT_EQ(r.notes.size(), 4u);
  const std::string page = render_html(r);
  EXPECT_NE(page.find("Left out"), std::string::npos);
  EXPECT_NE(page.find("<polyline"), std::string::npos);
}

}  // namespace
}  // namespace stoker::report
