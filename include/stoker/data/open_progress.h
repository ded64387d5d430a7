// stoker/data/open_progress.h — what opening a source has done so far: the files an image
// folder's listing has found and its class folders listed, the shards of a pattern indexed.
// Listing ImageNet's 1,281,167 files, or indexing its 1,282 shards, takes seconds on a local
// disk and can take minutes on a network file system: a front end that runs open_source() on
// one thread shows these counts from another.
//
// When a front end shows a line is one rule, OpenProgress::line_due(): once the open has run
// kLineAfterSeconds past its checks (the path or pattern names files that exist, the split is
// offered, the file is of a kind stoker reads), whatever it has counted, then in a log one
// every ProgressLine::kLogEverySeconds. A slow open says what it does within 2 seconds, even
// one that counts nothing (a CSV file list or IDX files on a slow disk); a path that fails its
// checks is its error's one line, however long the checks took on a loaded machine.
//
// Ownership: the front end owns the OpenProgress; an OpenProgressScope makes the open_source()
// calls of its thread (and the threads they start) report to it while the scope lives.
// Thread safety: the members are atomics, written by the opening threads and read by any.
// The command-line front ends (stoker scan, bench loader, check, train, evaluate, doctor) open
// their data with open_source_showing_progress; the Python package writes the same lines to
// sys.stderr (python/src/open_progress_lines.h); both by open_with_progress_line.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "stoker/core/progress_line.h"
#include "stoker/data/source.h"

namespace stoker::data {

struct OpenProgress {
  std::atomic<uint64_t> files{0};          // image files listed, or samples of the shards indexed
  std::atomic<uint64_t> parts_done{0};     // class folders listed, or files of a pattern opened
  std::atomic<uint64_t> parts{0};          // of this many (0 until known)
  std::atomic<bool> shards{false};         // the parts are the files of a pattern, not class folders
  std::atomic<bool> fit_rows{false};       // the parts are the rows Standardize's fit has summed
  std::atomic<uint64_t> fit_sample_of{0};  // the fit reads a sample of this many rows; 0: all

  // Called by open_source() once the path has passed its checks: what follows is the listing
  // or index itself. The first call counts.
  void mark_checked();
  bool checked() const { return checked_ns_ != 0; }
  // Seconds since mark_checked(); 0 before.
  double seconds() const;
  // True once a front end shows a line: seconds() >= kLineAfterSeconds past the checks.
  bool line_due() const { return checked() && seconds() >= kLineAfterSeconds; }
  static constexpr double kLineAfterSeconds = 1;

 private:
  std::atomic<int64_t> checked_ns_{0};  // now_ns() at mark_checked()
};

// Reports the open_source() calls made on this thread to `progress` until it is destroyed
// (scopes nest: the inner one reports while it lives).
class OpenProgressScope {
 public:
  explicit OpenProgressScope(OpenProgress* progress);
  ~OpenProgressScope();
  OpenProgressScope(const OpenProgressScope&) = delete;
  OpenProgressScope& operator=(const OpenProgressScope&) = delete;

 private:
  OpenProgress* before_;
};

// The progress this thread's open_source() calls report to; nullptr outside a scope.
OpenProgress* current_open_progress();

// What opening `path` has done after `seconds`, as the front ends show it: "opening train/, 1 s"
// while nothing is counted, "listing train/: 412,000 files in 322 of 1,000 class folders, 4 s;
// about 9 s left", "indexing P: 300 of 1,282 files (300,000 samples), 12 s; about 40 s left".
// The second form takes progress.seconds().
std::string open_progress_text(const std::string& path, uint64_t files, uint64_t parts_done, uint64_t parts,
                               bool shards, double seconds);
std::string open_progress_text(const std::string& path, const OpenProgress& progress);
// What fitting Standardize over `path` has done: "fitting Standardize over P: 40,000 of 125,000
// rows, 6 s; about 12 s left" (progress.fit_rows: fit_standardize reports to the scope's progress),
// and over a sample of `sample_of` rows (not 0): "fitting Standardize over P: 40,000 of 131,072
// rows sampled of 12,000,000 (Standardize(fit_rows=None) fits all), 6 s; about 12 s left".
std::string fit_progress_text(const std::string& path, uint64_t rows_done, uint64_t rows, double seconds,
                              uint64_t sample_of = 0);

// Runs `work` (its open_source() calls and Standardize fits reporting to an OpenProgress of its
// own) on a thread of its own while the calling thread looks at the progress every 20 ms and,
// once line_due(), passes `line` the line's text (open_progress_text(path, ...)); `line`
// decides when to write it. Returns once `work` has ended, at once, and throws what `work`
// throws, on the calling thread. The one loop behind the command line's lines and the Python
// package's: the opens below, and the making of a Loader that fits Standardize.
// Thread safety: `line` is called on the calling thread only; a writer that takes a lock
// (Python's GIL) must not be held by the caller if `work` takes it too.
void run_with_progress_line(const std::string& path, const std::function<void()>& work, ProgressLine& line);

// `open` by run_with_progress_line: the source it opens.
std::unique_ptr<Source> open_with_progress_line(const std::string& path,
                                                const std::function<std::unique_ptr<Source>()>& open,
                                                ProgressLine& line);

// open_source(path, split) (open_clip_source with `clips`) by open_with_progress_line, its
// lines on stderr as a ProgressLine (stoker/core/progress_line.h: on a terminal one line
// redrawn, in a log a line and then one every 10 s), erased before it returns.
// Thread safety: call from the thread that writes the program's stderr.
std::unique_ptr<Source> open_source_showing_progress(const std::string& path, const std::string& split,
                                                     bool clips = false);
std::unique_ptr<Source> open_source_showing_progress(const std::string& path, Split split);

}  // namespace stoker::data
