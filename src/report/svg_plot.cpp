#include "svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "stoker/report/downsample.h"

namespace stoker::report {

namespace {

// Margins of the drawing area: the y axis's labels on the left, the x axis's below.
constexpr double kLeft = 62, kRight = 14, kTop = 12, kBottom = 40;
constexpr double kVerdictBand = 24;  // above the bars, where each run of one verdict is named
constexpr int kFontSize = 13;

struct PlotAxis {
  double lo = 0, hi = 1, step = 1;
};

// "Nice" bounds and tick step (1, 2, 2.5 or 5 times a power of ten) covering [lo, hi].
PlotAxis nice_plot_axis(double lo, double hi, bool integers) {
  lo = std::max(lo, -1e300);  // so that hi - lo stays finite
  hi = std::min(hi, 1e300);
  if (!(hi > lo)) {
    const double pad = std::max(std::abs(lo) * 0.1, integers ? 1.0 : 1e-9);
    lo -= pad;
    hi += pad;
  }
  const double rough = (hi - lo) / 5;
  const double power = std::pow(10, std::floor(std::log10(rough)));
  double step = power * 10;
  for (const double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * power >= rough) {
      step = m * power;
      break;
    }
  }
  if (integers) step = std::max(1.0, std::round(step));
  PlotAxis axis{std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, step};
  if (!(axis.hi > axis.lo)) axis = {lo, hi, hi - lo};  // a step lost in lo's own precision
  return axis;
}

// The ticks of `axis`: lo, lo + step, ... up to hi, at most 40.
std::vector<double> axis_ticks(const PlotAxis& axis) {
  std::vector<double> ticks;
  for (int i = 0; i <= 40; ++i) {
    const double v = axis.lo + i * axis.step;
    if (v > axis.hi + axis.step * 1e-6) break;
    ticks.push_back(v);
  }
  return ticks;
}

// A tick's label: as many decimals as the step needs; thousands as "12k".
std::string tick_text(double v, double step) {
  if (std::abs(v) < step * 1e-6) return "0";
  if (std::abs(v) >= 10000 && step >= 1000) return fmt::format("{:g}k", v / 1000);
  if (step < 1e-3) return fmt::format("{:.2g}", v);
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)) +
                                       (std::abs(step / std::pow(10, std::floor(std::log10(step))) - 2.5) < 1e-9));
  return fmt::format("{:.{}f}", v, std::min(decimals, 6));
}

struct Frame {
  double left, top, width, height;
  PlotAxis x, y;
  double px(double v) const { return left + (v - x.lo) / (x.hi - x.lo) * width; }
  double py(double v) const { return top + height - (v - y.lo) / (y.hi - y.lo) * height; }
};

// The grid, both axes' ticks and labels.
std::string axes_svg(const Frame& f, const std::string& x_label, const std::string& y_label, bool x_ticks = true) {
  std::string s;
  for (const double v : axis_ticks(f.y)) {
    const double y = f.py(v);
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" class="grid"/>)", f.left, y,
                     f.left + f.width, y);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", f.left - 6, y + 4,
                     tick_text(v, f.y.step));
  }
  if (x_ticks) {
    for (const double v : axis_ticks(f.x)) {
      const double x = f.px(v);
      s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" class="tick"/>)", x, f.top + f.height,
                       x, f.top + f.height + 4);
      s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x, f.top + f.height + 18,
                       tick_text(v, f.x.step));
    }
  }
  s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" class="axis"/>)", f.left,
                   f.top + f.height, f.left + f.width);
  s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" class="label">{}</text>)", f.left + f.width / 2,
                   f.top + f.height + 35, html_escape(x_label));
  s += fmt::format(
      R"~(<text transform="translate(14 {:.1f}) rotate(-90)" text-anchor="middle" class="label ylabel">{}</text>)~",
      f.top + f.height / 2, html_escape(y_label));
  return s;
}

std::string svg_open(int width, double height, const std::string& label) {
  return fmt::format(R"(<svg viewBox="0 0 {} {:.0f}" role="img" aria-label="{}" font-size="{}">)", width, height,
                     html_escape(label), kFontSize);
}

}  // namespace

const char* curve_colour(size_t index) {
  static const char* const kColours[] = {"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#db2777", "#0891b2", "#854d0e"};
  return kColours[index % (sizeof kColours / sizeof kColours[0])];
}

const char* verdict_colour(const std::string& verdict) {
  if (verdict.rfind("input", 0) == 0) return "#dc2626";
  if (verdict.rfind("transfer", 0) == 0) return "#d97706";
  if (verdict.rfind("throttled", 0) == 0) return "#7c3aed";
  if (verdict.rfind("host", 0) == 0) return "#0891b2";
  if (verdict.rfind("compute", 0) == 0) return "#15803d";
  return "#6b7280";
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string line_plot_svg(const LinePlot& plot) {
  const size_t buckets = static_cast<size_t>(plot.width - kLeft - kRight);
  std::vector<std::vector<Point>> drawn;
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  bool integer_x = true;
  for (const Curve& c : plot.curves) {
    std::vector<double> x = c.x;
    for (double& v : x) v /= plot.x_divisor;
    drawn.push_back(downsample_min_max(x, c.y, buckets));
    for (const Point& p : drawn.back()) {
      x_lo = std::min(x_lo, p.x);
      x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y);
      y_hi = std::max(y_hi, p.y);
      integer_x = integer_x && p.x == std::round(p.x);
    }
  }
  if (std::isinf(x_lo)) return "";
  if (plot.y_from_zero) y_lo = std::min(0.0, y_lo);
  if (plot.y_max > 0) y_hi = std::max(plot.y_max, y_hi);
  Frame f{kLeft,
          kTop,
          plot.width - kLeft - kRight,
          kPlotHeight - kTop - kBottom,
          nice_plot_axis(x_lo, x_hi, integer_x),
          nice_plot_axis(y_lo, y_hi, false)};
  if (plot.y_max > 0 && y_hi <= plot.y_max) f.y.hi = plot.y_max;
  if (integer_x && x_hi > x_lo) {  // epochs: the axis ends at the data, not a tick beyond
    f.x.lo = std::min(f.x.lo, x_lo);
    f.x.hi = x_hi;
  }
  std::string s = svg_open(plot.width, kPlotHeight, plot.y_label + " by " + plot.x_label);
  // The shaded stretches first, under everything; ones closer than a pixel are drawn as one.
  const double pixel = (f.x.hi - f.x.lo) / f.width;
  for (size_t i = 0; i < plot.shaded.size();) {
    const double begin = plot.shaded[i].begin / plot.x_divisor;
    double end = plot.shaded[i].end / plot.x_divisor;
    while (++i < plot.shaded.size() && plot.shaded[i].begin / plot.x_divisor - end < pixel) {
      end = plot.shaded[i].end / plot.x_divisor;
    }
    const double x0 = f.px(begin), x1 = std::max(f.px(end), x0 + 1);
    s += fmt::format(
        R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" class="low"><title>{}</title></rect>)", x0, f.top,
        x1 - x0, f.height, html_escape(plot.shaded_title));
  }
  s += axes_svg(f, plot.x_label, plot.y_label);
  for (size_t i = 0; i < drawn.size(); ++i) {
    std::string points;
    for (const Point& p : drawn[i]) points += fmt::format("{:.1f},{:.1f} ", f.px(p.x), f.py(p.y));
    if (!points.empty()) points.pop_back();
    s += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-linejoin="round"/>)",
                     points, curve_colour(i));
    if (drawn[i].size() <= 60) {  // few points (epochs): each marked, so a single one shows
      for (const Point& p : drawn[i]) {
        s +=
            fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"><title>{}: {:g} at {:g}</title></circle>)",
                        f.px(p.x), f.py(p.y), curve_colour(i), html_escape(plot.curves[i].name), p.y, p.x);
      }
    }
  }
  return s + "</svg>";
}

namespace {

// The bars as drawn: at most one per pixel column (bar_groups), each the mean of the epochs
// it stands for, with the most frequent of their verdicts.
struct DrawnBars {
  std::vector<int64_t> first, last;         // the epochs each bar stands for
  std::vector<std::vector<double>> values;  // per segment, per bar
  std::vector<std::string> verdicts;        // per bar, or empty
};

DrawnBars drawn_bars(const BarPlot& plot, size_t columns) {
  DrawnBars d;
  d.values.resize(plot.segments.size());
  for (const BarGroup& g : bar_groups(plot.epochs.size(), columns)) {
    d.first.push_back(plot.epochs[g.begin]);
    d.last.push_back(plot.epochs[g.end - 1]);
    for (size_t k = 0; k < plot.segments.size(); ++k) {
      double sum = 0;
      size_t n = 0;
      for (size_t b = g.begin; b < g.end; ++b) {
        const double v = plot.segments[k].values[b];
        if (std::isnan(v)) continue;
        sum += v;
        ++n;
      }
      d.values[k].push_back(n > 0 ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN());
    }
    if (plot.verdicts.empty()) continue;
    // The most frequent verdict of the group (the first of the ties): runs of one verdict
    // are long, so counting the changes is enough.
    std::vector<std::pair<std::string, size_t>> counts;
    for (size_t b = g.begin; b < g.end; ++b) {
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == plot.verdicts[b]; });
      if (it == counts.end()) {
        counts.emplace_back(plot.verdicts[b], 1);
      } else {
        ++it->second;
      }
      if (counts.size() > 16) break;  // a verdict that changes every epoch: the first ones tell
    }
    d.verdicts.push_back(std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
                           return a.second < b.second;
                         })->first);
  }
  return d;
}

std::string epochs_text(int64_t first, int64_t last) {
  return first == last ? fmt::format("epoch {}", first) : fmt::format("epochs {}–{}", first, last);
}

}  // namespace

std::string bar_plot_svg(const BarPlot& plot) {
  if (plot.epochs.empty()) return "";
  const bool band = !plot.verdicts.empty();
  const double top = kTop + (band ? kVerdictBand + 6 : 0);
  const double height = kPlotHeight + (band ? kVerdictBand + 6 : 0);
  const double width = plot.width - kLeft - kRight;
  const DrawnBars d = drawn_bars(plot, static_cast<size_t>(std::max(1.0, width)));
  const size_t bars = d.first.size();
  const bool grouped = bars < plot.epochs.size();
  double tallest = 0;
  for (size_t b = 0; b < bars; ++b) {
    double sum = 0;
    for (const auto& values : d.values) sum += std::isnan(values[b]) ? 0 : values[b];
    tallest = std::max(tallest, sum);
  }
  Frame f{kLeft,     top,
          width,     height - top - kBottom,
          {0, 1, 1}, nice_plot_axis(0, plot.y_max > 0 ? plot.y_max : std::max(tallest, 1e-9), false)};
  if (plot.y_max > 0) f.y = {0, plot.y_max, plot.y_max / 4};
  const double slot = f.width / static_cast<double>(bars);
  const double gap = slot > 5 ? slot * 0.18 : 0;
  std::string s = svg_open(plot.width, height, plot.y_label + " by epoch");
  s += axes_svg(f, "epoch", plot.y_label, false);
  // The epochs' numbers under the bars: about ten of them, at round epochs.
  const auto label = [&](size_t b, int64_t epoch) {
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                     f.left + slot * (static_cast<double>(b) + 0.5), f.top + f.height + 18, epoch);
  };
  if (!grouped) {
    const int64_t every =
        std::max<int64_t>(1, static_cast<int64_t>(nice_plot_axis(0, static_cast<double>(bars), true).step));
    for (size_t b = 0; b < bars; ++b) {
      if (bars <= 12 || d.first[b] % every == 0 || b == 0) label(b, d.first[b]);
    }
  } else {
    // Each bar stands for several epochs: the round epoch inside it, where there is one.
    const double span = static_cast<double>(d.last.back() - d.first.front());
    const auto every = std::max<int64_t>(1, static_cast<int64_t>(nice_plot_axis(0, std::max(span, 1.0), true).step));
    for (size_t b = 0; b < bars; ++b) {
      const int64_t round = d.last[b] >= 0 ? d.last[b] / every * every : 0;
      if (round >= d.first[b] && round <= d.last[b]) label(b, round);
    }
  }
  for (size_t b = 0; b < bars; ++b) {
    double base = 0;
    std::string tip = epochs_text(d.first[b], d.last[b]) + (d.first[b] == d.last[b] ? "" : " (mean)");
    for (size_t k = 0; k < plot.segments.size(); ++k)
      tip += fmt::format(" · {} {:.3g}", plot.segments[k].name, d.values[k][b]);
    if (band) tip += " · " + d.verdicts[b];
    s += "<g><title>" + html_escape(tip) + "</title>";
    for (size_t k = 0; k < plot.segments.size(); ++k) {
      const double v = std::isnan(d.values[k][b]) ? 0 : d.values[k][b];
      const double y0 = f.py(base), y1 = f.py(base + v);
      s += fmt::format(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"/>)",
                       f.left + slot * static_cast<double>(b) + gap / 2, y1, slot - gap, std::max(0.0, y0 - y1),
                       plot.segments[k].colour);
      base += v;
    }
    s += "</g>";
  }
  if (band) {
    // One labelled box over each run of bars with the same verdict.
    for (size_t b = 0; b < bars;) {
      size_t e = b;
      while (e + 1 < bars && d.verdicts[e + 1] == d.verdicts[b]) ++e;
      const double x0 = f.left + slot * static_cast<double>(b) + 1, x1 = f.left + slot * static_cast<double>(e + 1) - 1;
      const std::string& verdict = d.verdicts[b].empty() ? std::string("not recorded") : d.verdicts[b];
      s += fmt::format(
          R"(<g><title>{}: {}</title><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" rx="3" fill="{}"/>)",
          epochs_text(d.first[b], d.last[e]), html_escape(verdict), x0, kTop, std::max(1.0, x1 - x0), kVerdictBand,
          verdict_colour(verdict));
      // About 7.2 units a character at this size: the name where it fits, else nothing.
      if (x1 - x0 > 7.2 * static_cast<double>(verdict.size()) + 8) {
        s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" class="verdict">{}</text>)", (x0 + x1) / 2,
                         kTop + kVerdictBand / 2 + 4.5, html_escape(verdict));
      }
      s += "</g>";
      b = e + 1;
    }
  }
  return s + "</svg>";
}

}  // namespace stoker::report
