// stoker/report/html_report.h — a run's report as one self-contained HTML page.
//
//   const std::string page = report::render_html(report::load_report("runs/x"));
//
// The page needs nothing but a browser: no network fetch, no script, the styles inline, each
// plot an inline SVG drawn here (long series downsampled to the plot's width with their
// extremes kept, stoker/report/downsample.h). Its width follows the window, from a phone's up.
// What it shows, each where the report holds it: loss and accuracy (train, validation) by
// epoch; the learning rate by step; samples/s by epoch; the step time's split by epoch with
// each epoch's verdict; the CPU, RAM and GPU timeline with the low-utilisation stretches
// shaded; the loader's stage shares; the recommendations; the configuration; and what was
// missing or damaged (RunReport::notes).
// Errors: none. Thread safety: a pure function.
#pragma once

#include <string>

#include "stoker/report/run_report.h"

namespace stoker::report {

std::string render_html(const RunReport& report);

}  // namespace stoker::report
