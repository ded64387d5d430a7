// stoker/report/loop_records.h — the per-epoch records of the loops a Python script watches
// (stoker.watch under stoker.monitor(log=...)): one row per pass in a CSV beside the monitor's
// log (run.csv or run.jsonl -> run.loops.csv), which `stoker report run.csv` draws as it draws
// a run folder's step-time split (docs/MONITOR_FORMATS.md, "Watched loops").
//
//   report::LoopsCsv loops(report::loops_csv_path("run.csv"));   // run.loops.csv, header written
//   loops.write(row);                                              // one row, straight to the file
//
// Errors. The constructor throws UsageError naming the path when it cannot be written (as the
// monitor's log). A row that cannot be written returns a failure Status saying what and why;
// the caller says so once and its loop goes on.
// Ownership: the object owns its file. Thread safety: write() may be called from any thread;
// rows are serialised and each goes to the file whole. Several processes (ranks) each give
// their own monitor log, so each writes its own loops file.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "stoker/core/error.h"
#include "stoker/core/mutex.h"

namespace stoker::report {

// The CSV's columns, in order, for the writer and the report (docs/MONITOR_FORMATS.md lists them).
inline constexpr std::array<const char*, 13> kLoopColumns = {
    "loop",      "rank",       "epoch",      "steps",         "samples",         "wait_s", "copy_s",
    "compute_s", "wait_share", "copy_share", "compute_share", "samples_per_sec", "verdict"};

// One pass of one watched loop.
struct LoopEpoch {
  std::string loop;   // watch's name= ("val"); "" for a loop without one
  int rank = 0;       // the torch.distributed rank; 0 without a group
  int64_t epoch = 0;  // the pass's number as the loop's report prints it, from 0
  int64_t steps = 0, samples = 0;
  double wait_s = 0, copy_s = 0, compute_s = 0;              // every step of the pass, warm-up included
  double wait_share = 0, copy_share = 0, compute_share = 0;  // of the steps judged: the printed shares
  std::string verdict;  // "input-bound (high)", ...; "" for a pass too short to judge
  // samples / (wait_s + copy_s + compute_s); 0 for no time.
  double samples_per_sec() const;
};

// The loops CSV beside a monitor log: its name less .csv or .jsonl, then ".loops.csv".
std::string loops_csv_path(const std::string& monitor_log);

// The log that rank `rank` of several writes when each is given `monitor_log`: rank 0 keeps
// the name, rank r > 0 puts ".rank<r>" before its extension (run.csv -> run.rank1.csv, whose
// loops file is run.rank1.loops.csv), so that the ranks of one script do not overwrite each
// other. stoker.monitor(log=...) writes it; the report of rank 0's log names the others.
std::string rank_log_path(const std::string& monitor_log, int rank);

class LoopsCsv {
 public:
  // Creates (or empties) the file at `path` and writes the header row.
  explicit LoopsCsv(const std::string& path);
  ~LoopsCsv();
  LoopsCsv(const LoopsCsv&) = delete;
  LoopsCsv& operator=(const LoopsCsv&) = delete;

  Status write(const LoopEpoch& row) STOKER_EXCLUDES(mutex_);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Mutex mutex_;
  int fd_ STOKER_GUARDED_BY(mutex_) = -1;
};

}  // namespace stoker::report
