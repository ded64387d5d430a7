// stoker/report/csv_table.h — the CSV files stoker writes (a run's metrics.csv, stoker
// monitor's --log), and the monitor's JSON-lines log as the table its CSV would be, read back
// whole for a report.
//
//   const report::CsvTable metrics = report::read_csv_table("runs/x/metrics.csv", "metrics.csv");
//   const std::vector<double> loss = metrics.numbers("train_loss");
//
// Format. One header row of names, then one row per line; cells split on commas, and a cell in
// double quotes may hold commas ("" inside it is one quote: the monitor's throttle reasons).
// A file still being written may end in a row cut off mid-way: a row whose cells do not match
// the header's count is left out, and `notes` says which and why (so a report draws what is
// there and says what it left out).
//
// Errors. DataError naming the file when it holds no header (an empty file); the refusals of
// stoker/core/user_files.h (a FIFO, a device, a folder, a missing file) when reading.
// Thread safety: plain values and functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker::report {

struct CsvTable {
  std::string path;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each with exactly columns.size() cells
  std::vector<std::string> notes;              // what was left out, one sentence each

  // Index of the column `name`, or -1.
  int column(const std::string& name) const;
  // Column `name`, one number per row: NaN for an empty or non-numeric cell, all NaN for a
  // missing column.
  std::vector<double> numbers(const std::string& name) const;
  // Whether column `name` holds at least one number.
  bool has_numbers(const std::string& name) const;
};

// Parses `text`, the contents of the file at `path` (named in notes and errors).
CsvTable parse_csv_table(const std::string& text, const std::string& path);

// Whether `text` is JSON lines (its first non-blank character is '{'), not CSV.
bool is_json_lines(const std::string& text);

// A JSON-lines monitor log (stoker monitor --jsonl, stoker.monitor(log="run.jsonl"):
// docs/MONITOR_FORMATS.md) as the table of its CSV twin: one row per sample line, one column
// per field by the name the line gives it, a GPU's named monitor::gpu_column(index, field), so
// that the CSV's readers read it; a null is an empty cell, a list (core_percent) is left out.
// A line that is not JSON is left out with a note, as a CSV's short row is.
// Errors: DataError naming the file when its first line is not the monitor's {"type":"meta"}.
CsvTable parse_jsonl_table(const std::string& text, const std::string& path);

// Reads the regular file at `path` (at most `max_bytes`) and parses it; `what` names it in
// errors ("metrics.csv", "the monitor log").
CsvTable read_csv_table(const std::string& path, const std::string& what, uint64_t max_bytes = uint64_t{1} << 30);

}  // namespace stoker::report
