// The report's plots as inline SVG, drawn here rather than by a script in the page: the page
// needs nothing but the browser, and opens the same offline, printed or on a phone. Each plot
// scales to its box's width (a viewBox, no fixed size). Long series are downsampled to the
// plot's width in pixels (stoker/report/downsample.h). Pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "stoker/report/run_report.h"

namespace stoker::report {

// The drawing area of a plot, in the SVG's own units (about pixels at full width): a plot in
// a card of the two-column grid; one across the page is drawn kWidePlotWidth wide as well, so
// that its text keeps its size on a wide screen (the page shows one or the other).
inline constexpr int kPlotWidth = 640;
inline constexpr int kWidePlotWidth = 1240;
inline constexpr int kPlotHeight = 250;

// The colour of the index-th curve of a plot.
const char* curve_colour(size_t index);

// Text for HTML and SVG: & < > " ' escaped.
std::string html_escape(const std::string& text);

struct LinePlot {
  std::vector<Curve> curves;
  std::string x_label, y_label;
  bool y_from_zero = false;
  double y_max = 0;          // > 0: the y axis ends here (percentages: 100)
  double x_divisor = 1;      // x values are divided by this for the axis (seconds -> minutes)
  std::vector<Span> shaded;  // in x's own units (before x_divisor)
  std::string shaded_title;  // the tooltip of each shaded stretch
  int width = kPlotWidth;
};
std::string line_plot_svg(const LinePlot& plot);

// One stacked bar per epoch; segments bottom-up.
struct BarSegment {
  std::string name;
  const char* colour;
  std::vector<double> values;  // one per bar
};
struct BarPlot {
  std::vector<int64_t> epochs;
  std::vector<BarSegment> segments;
  std::string y_label;
  double y_max = 0;                   // > 0: fixed (shares: 100); else the tallest bar
  std::vector<std::string> verdicts;  // one per bar, or empty: a band above the bars, labelled
  int width = kPlotWidth;
};
std::string bar_plot_svg(const BarPlot& plot);

// The colour of a verdict ("input-bound (high)" -> the input-bound colour).
const char* verdict_colour(const std::string& verdict);

}  // namespace stoker::report
