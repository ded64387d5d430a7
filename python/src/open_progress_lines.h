// open_source() for stoker.DataLoader, showing on sys.stderr what a long open does, by the
// front ends' one rule (data::OpenProgress::line_due): a line once the open has run a second
// past its checks, then one every ProgressLine::kLogEverySeconds, each with the files found
// and about how long the rest takes (data::open_progress_text).
//
// The GIL is released while the source opens (on a thread of its own, by
// data::open_with_progress_line), and taken only to write a line.
// Thread safety: call with the GIL held; the lines come from the calling thread.
#pragma once

#include <memory>
#include <string>

#include "stoker/data/source.h"

namespace stoker::python {

// Writes `line` and a line break on sys.stderr, taking the GIL; a closed or replaced stderr
// loses the line without an error. The writer of the package's ProgressLines.
void write_stderr_line(const std::string& line);

std::unique_ptr<data::Source> open_showing_progress(const std::string& path, const std::string& split, bool clips);

}  // namespace stoker::python
