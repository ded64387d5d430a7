// stoker/monitor/sinks.h — where samples go: a live status line, CSV and JSON-lines logs.
//
// CSV and JSONL share one table of fields (name, unit, source), documented in
// docs/MONITOR_FORMATS.md; columns are stable: new ones are only ever appended. Per-GPU
// fields repeat as gpu<N>_<field> for every GPU. Unavailable figures are empty CSV cells and
// JSON nulls. Timestamps: ISO 8601 UTC with milliseconds, plus seconds since start.
// Logs are flushed after every row, so `tail -f` works and a crash loses at most one sample.
//
// Thread safety: each sink is used from the sampler thread only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "stoker/monitor/sample.h"

namespace stoker::monitor {

// "GPU0 85% SM 71% TC 40% | VRAM 12.3/24.0 GB | 312 W 71°C | CPU 45% | RAM 18.4/64.0 GB |
// disk r 410 MB/s". Only figures that are available appear.
std::string format_status_line(const Sample& sample);

// Writes the status line to `out`: redrawn in place on a terminal, one line per sample
// otherwise (logs, pipes).
class StatusLine {
 public:
  explicit StatusLine(std::FILE* out);
  void write(const Sample& sample);
  // Ends the in-place line (newline) so later output starts on a fresh line.
  void finish();

 private:
  std::FILE* out_;
  bool terminal_;
  bool dirty_ = false;
};

// "2026-11-21T20:14:03.125Z"
std::string iso8601_utc(int64_t unix_ns);

// The CSV's column for GPU `gpu`'s field `field` ("gpu0_util_percent"); JSON lines nest it as
// the field of the gpus[] entry whose index is `gpu`.
std::string gpu_column(int gpu, const std::string& field);

class CsvLog {
 public:
  // Opens (truncates) `path`. Throws UsageError naming the path when it cannot be written.
  CsvLog(const std::string& path, int gpu_count);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;
  void write(const Sample& sample);
  // The header row for `gpu_count` GPUs (for docs and tests).
  static std::vector<std::string> columns(int gpu_count);

 private:
  std::FILE* file_;
  int gpu_count_;
  std::string path_;
  std::string row_;
};

class JsonlLog {
 public:
  // Opens (truncates) `path`; the first line is {"type":"meta", ...} with the field list,
  // units, sources and the GPUs; then one {"type":"sample", ...} per line.
  JsonlLog(const std::string& path, const std::vector<GpuInfo>& gpus, const std::string& gpu_status);
  ~JsonlLog();
  JsonlLog(const JsonlLog&) = delete;
  JsonlLog& operator=(const JsonlLog&) = delete;
  void write(const Sample& sample);

 private:
  std::FILE* file_;
  std::string path_;
};

}  // namespace stoker::monitor
