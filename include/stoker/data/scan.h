// stoker/data/scan.h — every sample of a dataset read and checked once, before a long run
// finds its damaged files one random crop at a time.
//
// scan_source() reads each sample with Source::read and checks all of it: an image is
// decoded whole at full resolution (no crop window, no DCT scaling: every byte of its data is
// decoded, and the end marker must be there). What the loader would substitute is what this
// lists, with the same reasons. (Feature and target arrays are checked when their source is
// opened: a NaN there is open_source's one-line error, before any scan.)
//
// Bounded: each sample is read once; `workers` threads of its own; memory is one sample per
// thread plus the list of bad ones (the first kMaxListedBad kept, all counted). Stoppable:
// `wait` returning true ends it after the samples in hand.
// Errors: a sample that cannot be read or decoded is a result, not an error; only a source
// that throws (e.g. an I/O error it treats as fatal) propagates, as stoker::Error.
// Thread safety: reads `source` only (Source::read is safe to call from any thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stoker/data/decode.h"
#include "stoker/data/source.h"

namespace stoker::data {

inline constexpr size_t kMaxListedBad = 100'000;

struct ScanProgress {
  int64_t done = 0;  // samples checked
  int64_t total = 0;
  int64_t bad = 0;
  double seconds = 0;  // since the scan started
};

struct ScanOptions {
  int workers = 1;
  int64_t max_pixels = DecodeOptions{}.max_pixels;
  // Called from the calling thread about every `progress_seconds` while the workers run.
  std::function<void(const ScanProgress&)> progress;
  double progress_seconds = 0.5;
  // Called from the calling thread between reports: waits up to `seconds`; true stops the scan
  // (the command waits for SIGINT/SIGTERM here). Empty: sleeps.
  std::function<bool(double seconds)> wait;
};

struct ScanReport {
  struct Bad {
    uint64_t index = 0;
    std::string name;    // Source::name(index): the file (and member or row)
    std::string reason;  // "truncated JPEG (no end-of-image marker in its 41230 bytes)", ...
  };
  int64_t samples = 0;  // in the source
  int64_t checked = 0;  // fewer than samples when stopped
  int64_t bad_count = 0;
  std::vector<Bad> bad;  // in index order, at most kMaxListedBad
  int64_t bytes = 0;     // read from the source
  double seconds = 0;
  bool stopped = false;
};

ScanReport scan_source(const Source& source, const ScanOptions& options);

}  // namespace stoker::data
