// stoker/report/event_reader.h — the scalars of TensorBoard event files read back (what
// EventFile, stoker/report/event_file.h, writes), for a report of a run's tb/ folder.
//
//   const report::EventScalars tb = report::read_event_scalars("runs/x/tb");
//   for (const report::ScalarPoint& p : tb.tags.at("train/lr")) ...
//
// Each record's length and payload CRCs are checked; a file stops at its first record that is
// cut off or damaged (a run killed mid-write leaves one), and `notes` says so. Events other
// than scalars (file_version, other summaries) are skipped. The files of a folder are read in
// name order, so a resumed run's second file follows its first.
// Errors: none thrown for a file's contents; a file that cannot be read is a note too.
// Thread safety: plain values and functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::report {

struct ScalarPoint {
  int64_t step = 0;
  double wall_time = 0;  // Unix seconds
  double value = 0;
};

struct EventScalars {
  std::map<std::string, std::vector<ScalarPoint>> tags;  // in the order they were written
  std::vector<std::string> notes;                        // damage and what was left out
  int files = 0;                                         // event files read
};

// The records of one file's bytes (`path` names it in notes), added to `out`.
void parse_event_records(std::string_view bytes, const std::string& path, EventScalars* out);

// Every file of `folder` whose name holds "tfevents"; none (or no folder): no tags.
EventScalars read_event_scalars(const std::string& folder);

}  // namespace stoker::report
