// stoker/report/run_report.h — what `stoker report` draws, gathered from a run folder or a
// monitor log into plain values (html_report.h turns them into a page).
//
//   const report::RunReport r = report::load_run_folder("runs/2026-11-27_11-53-32");
//   for (const std::string& note : r.notes) ...   // what was missing or damaged
//
// From a monitor log (CSV, or JSON lines read as its CSV twin: csv_table.h): its timeline, and
// the step-time split, samples/s and verdict of each pass of the loops a Python script watched
// while it ran (the loops CSV beside it, run.loops.csv for run.csv or run.jsonl:
// docs/MONITOR_FORMATS.md); a damaged loops CSV is a note.
//
// From a run folder (what stoker train leaves): metrics.csv (the per-epoch curves, the
// samples/s, the step-time split), summary.json (each epoch's verdict and loader stage clocks,
// the run's facts), tb/ (the learning rate; the monitor's CPU, RAM and GPU figures when no
// monitor CSV is there), a monitor CSV beside them (any *.csv whose header is stoker
// monitor's), config.yaml and events.log (the recommendations). Each missing or damaged part
// becomes one sentence in `notes`, and the rest is still gathered.
//
// Errors. DataError with one sentence (what was wrong, the path, what is expected, what to
// try) where nothing can be drawn: a folder that is not a run (none of metrics.csv,
// summary.json, tb/), a run folder with nothing drawable in it yet, an empty monitor log or
// one with no complete row; UsageError for a path that is neither a folder nor a regular file.
// Thread safety: plain values and functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stoker/report/csv_table.h"

namespace stoker::report {

// One line of a plot: x and y of the same length (NaN: not measured there).
struct Curve {
  std::string name;
  std::vector<double> x, y;
};

// One epoch's step time, summed over its steps, and the verdict its step-time line printed.
struct EpochSplit {
  int64_t epoch = 0;
  double wait_s = 0, copy_s = 0, compute_s = 0;
  std::string verdict;  // "input-bound (high)", "compute-bound", ...; "" when not recorded
};

// Where the loader's workers spent their time over the run, in seconds summed over workers.
struct StageSeconds {
  double read = 0, decode = 0, transform = 0, idle = 0;  // idle: every buffer was full
};

// A watched loop's passes, from the loops CSV beside a monitor log (stoker/report/loop_records.h).
struct LoopSplit {
  std::string loop;  // its name= ("val"); "" for a loop without one
  std::vector<EpochSplit> epochs;
};

// A stretch of time (seconds from the log's start) with the utilisation low.
struct Span {
  double begin = 0, end = 0;
};

// Whether `x` can be an epoch's number (finite, whole-number range of a run): others are left out.
inline bool plausible_epoch(double x) { return x >= 0 && x <= 1e9; }

// The utilisation stretches are shaded where it stays below this for at least this long.
inline constexpr double kLowUtilisationPercent = 50;
inline constexpr double kLowUtilisationSeconds = 10;

struct RunReport {
  std::string source;                                      // the run folder or monitor log given
  std::string title;                                       // "run 2026-11-27_11-53-32", "monitor log monitor.csv"
  bool monitor_log_only = false;                           // a monitor CSV given alone: the timeline is all there is
  std::vector<std::pair<std::string, std::string>> facts;  // ("model", "mnist_cnn"), ...

  std::vector<Curve> loss;             // x: epoch
  std::vector<Curve> accuracy;         // x: epoch; y: %
  std::vector<Curve> learning_rate;    // x: optimizer step
  std::vector<Curve> samples_per_sec;  // x: epoch
  std::vector<EpochSplit> split;       // a monitor log's: its first unnamed watched loop's (else first loop's)
  std::vector<LoopSplit> other_loops;  // a monitor log's other watched loops, each drawn on its own
  bool has_stages = false;
  StageSeconds stages;

  std::vector<Curve> timeline;  // x: seconds from the start; y: %
  std::string low_basis;        // the curve the low stretches follow ("GPU util", "CPU"); "" = none
  std::vector<Span> low;

  std::string config;                        // config.yaml's text
  std::vector<std::string> recommendations;  // events.log's warnings and "try:" lines
  std::vector<std::string> notes;            // what was missing or damaged, one sentence each
};

// Stretches where `percent` stays below `below` for at least `min_seconds` (t ascending).
std::vector<Span> low_stretches(const std::vector<double>& t, const std::vector<double>& percent, double below,
                                double min_seconds);

// The timeline of a monitor CSV (stoker monitor --log): CPU %, RAM % and each GPU's
// utilisation, with the low stretches of the GPUs' mean (the CPU's without a GPU).
void add_monitor_timeline(const CsvTable& log, RunReport* report);

// What `stoker report PATH` draws: a run folder, or a monitor log (CSV or JSON lines) on its own.
RunReport load_run_folder(const std::string& folder);
RunReport load_monitor_log(const std::string& csv_path);
RunReport load_report(const std::string& path);

// What load_report(path) reads, for the check that an output is none of it
// (stoker/core/output_clash.h): a monitor log given, its loops file and the other ranks' logs
// beside it (rank_log_path), or a run folder's metrics.csv, summary.json, config.yaml,
// events.log, monitor CSVs and tb/ (a folder: all below it).
std::vector<std::string> report_inputs(const std::string& path);

}  // namespace stoker::report
