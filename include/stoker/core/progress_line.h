// stoker/core/progress_line.h — progress of long work on stderr, the same way for every
// command: on a terminal one line redrawn in place (at most 10 times a second); in a log or a
// pipe a line once the work has run half a second, then one every 10 seconds, so that a silent
// wait is never longer than that.
//
// A ProgressLine made with a writer passes it the lines a log would get (without their line
// break): the Python package's go to sys.stderr that way.
//
// Ownership: the caller owns it; destroyed, it erases its redrawn line.
// Thread safety: one thread calls a ProgressLine (the one that waits on the work); the writer
// is called on that thread.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "stoker/core/clock.h"

namespace stoker {

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out = stderr);
  explicit ProgressLine(std::function<void(const std::string&)> write);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }

  // Writes `text()` if a line is due; `text` is called only then.
  void update(const std::function<std::string()>& text);
  // Erases the redrawn line (a terminal only), before the command prints its results.
  void clear();
  // Seconds since the ProgressLine was made.
  double seconds() const;

  static constexpr double kLogEverySeconds = 10;   // lines in a log or a pipe
  static constexpr double kFirstLogSeconds = 0.5;  // the first of them

 private:
  std::FILE* out_;                                 // nullptr with a writer
  std::function<void(const std::string&)> write_;  // empty without one
  bool live_;
  bool drawn_ = false;
  Stopwatch clock_;
  double next_ = 0;  // seconds: when the next line is due
};

}  // namespace stoker
