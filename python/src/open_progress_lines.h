// open_source() for stoker.DataLoader, showing on sys.stderr what a long listing or index has
// done: a line once it has run `first_line_after` seconds, then one every 10 seconds, each
// with the files found and about how long the rest takes (data::open_progress_text).
//
// The GIL is released while the source opens, and taken only to write a line.
// Thread safety: call with the GIL held; the lines come from a thread of the call's own.
#pragma once

#include <memory>
#include <string>

#include "stoker/data/open_progress.h"
#include "stoker/data/source.h"

namespace stoker::python {

// Seconds between progress lines after the first.
inline constexpr double kOpenLineEverySeconds = 10;

std::unique_ptr<data::Source> open_showing_progress(const std::string& path, const std::string& split, bool clips,
                                                    double first_line_after);

}  // namespace stoker::python
