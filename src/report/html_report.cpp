#include "stoker/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stoker/core/numbers.h"
#include "svg_plot.h"

namespace stoker::report {

namespace {

constexpr const char* kPageStyle = R"(
:root{color-scheme:light;--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb}
*{box-sizing:border-box}
body{margin:0;background:#f3f4f6;color:var(--ink);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1320px;margin:0 auto;padding:14px}
h1{font-size:1.35rem;margin:.2rem 0}h2{font-size:1.02rem;margin:0 0 .4rem}
.sub{color:var(--muted);margin:0 0 .6rem;word-break:break-all}
.facts{display:flex;flex-wrap:wrap;gap:6px 18px;margin:0;padding:0}
.facts div{display:flex;gap:6px}.facts dt{color:var(--muted)}.facts dd{margin:0;font-weight:600}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,460px),1fr));gap:14px;margin-top:14px}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 14px;min-width:0}
.wide{grid-column:1/-1}
.notes{background:#fffbeb;border-color:#fcd34d}
.notes ul,.recs ul{margin:.2rem 0;padding-left:1.2rem}
svg{display:block;width:100%;height:auto;overflow:visible}
svg text{fill:#374151}svg .label{fill:var(--muted)}svg text.verdict{fill:#fff;font-weight:600}
svg .grid{stroke:var(--line)}svg .axis{stroke:#9ca3af}svg .tick{stroke:#9ca3af}
svg .low{fill:#f87171;fill-opacity:.3}
.narrow{display:none}@media (max-width:900px){.broad{display:none}.narrow{display:block}}
@media (max-width:600px){svg{font-size:17px}svg text.verdict{font-size:13px}svg .ylabel{display:none}}
.keys{display:flex;flex-wrap:wrap;gap:4px 14px;margin:.1rem 0 .3rem;font-size:.9rem}
.keys i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.caption{color:var(--muted);font-size:.88rem;margin:.35rem 0 0}
.empty{color:var(--muted);font-style:italic}
.stagebar{display:flex;height:30px;border-radius:4px;overflow:hidden;margin:.4rem 0}
.stagebar span{color:#fff;font-size:.85rem;font-weight:600;display:flex;align-items:center;justify-content:center;overflow:hidden;white-space:nowrap}
table{border-collapse:collapse;font-size:.92rem}td,th{padding:2px 12px 2px 0;text-align:left}td.n{text-align:right}
pre{background:#f9fafb;border:1px solid var(--line);border-radius:6px;padding:8px;overflow:auto;max-height:420px;font-size:.85rem}
summary{cursor:pointer;color:#2563eb}
)";

struct Key {
  std::string name;
  std::string colour;
};

std::string keys_html(const std::vector<Key>& keys) {
  std::string s = "<div class=\"keys\">";
  for (const Key& k : keys)
    s += fmt::format(R"(<span><i style="background:{}"></i>{}</span>)", k.colour, html_escape(k.name));
  return s + "</div>";
}

std::string curve_keys(const std::vector<Curve>& curves) {
  std::vector<Key> keys;
  for (size_t i = 0; i < curves.size(); ++i) keys.push_back({curves[i].name, curve_colour(i)});
  return keys_html(keys);
}

std::string card(const std::string& title, const std::string& body, bool wide = false, const std::string& id = "") {
  return fmt::format(R"(<section class="card{}"{}><h2>{}</h2>{}</section>)", wide ? " wide" : "",
                     id.empty() ? "" : " id=\"" + id + "\"", html_escape(title), body);
}

// A plot across the page: drawn wide for a wide screen and narrow for a phone, one shown.
template <typename Plot>
std::string wide_and_narrow(Plot plot, std::string (*draw)(const Plot&)) {
  plot.width = kWidePlotWidth;
  std::string s = "<div class=\"broad\">" + draw(plot) + "</div>";
  plot.width = kPlotWidth;
  return s + "<div class=\"narrow\">" + draw(plot) + "</div>";
}

std::string empty_text(const std::string& why) { return "<p class=\"empty\">" + html_escape(why) + "</p>"; }

std::string curves_card(const std::string& title, const std::vector<Curve>& curves, LinePlot plot,
                        const std::string& id, const std::string& why_empty) {
  if (curves.empty()) return card(title, empty_text(why_empty), false, id);
  plot.curves = curves;
  return card(title, curve_keys(curves) + line_plot_svg(plot), false, id);
}

// The time unit of a timeline `span` seconds long: its divisor and name.
std::pair<double, const char*> time_unit(double span) {
  if (span > 3 * 3600) return {3600, "h"};
  if (span > 300) return {60, "min"};
  return {1, "s"};
}

std::string duration_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 3 * 3600) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

std::string timeline_card(const RunReport& r) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Curve& c : r.timeline) {
    for (const double x : c.x) {
      if (std::isnan(x)) continue;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  const auto [divisor, unit] = time_unit(hi - lo);
  LinePlot plot;
  plot.curves = r.timeline;
  plot.x_label = fmt::format("time since start ({})", unit);
  plot.y_label = "%";
  plot.y_from_zero = true;
  plot.y_max = 100;
  plot.x_divisor = divisor;
  plot.shaded = r.low;
  plot.shaded_title = fmt::format("{} below {:g} %", r.low_basis, kLowUtilisationPercent);
  std::string caption;
  if (!r.low_basis.empty()) {
    double low_seconds = 0;
    for (const Span& s : r.low) low_seconds += s.end - s.begin;
    caption = r.low.empty()
                  ? fmt::format("{} stayed at {:g} % or more, apart from dips shorter than {:g} s: nothing shaded.",
                                r.low_basis, kLowUtilisationPercent, kLowUtilisationSeconds)
                  : fmt::format(
                        "Shaded: {} below {:g} % for {:g} s or more — {} stretch{}, {} in all ({:.0f} % of the "
                        "time).",
                        r.low_basis, kLowUtilisationPercent, kLowUtilisationSeconds, r.low.size(),
                        r.low.size() == 1 ? "" : "es", duration_text(low_seconds),
                        hi > lo ? 100 * low_seconds / (hi - lo) : 0.0);
  }
  std::vector<Key> keys;
  for (size_t i = 0; i < r.timeline.size(); ++i) keys.push_back({r.timeline[i].name + " %", curve_colour(i)});
  if (!r.low.empty()) keys.push_back({"low " + r.low_basis, "rgba(248,113,113,.45)"});
  return card(
      "GPU, CPU and RAM",
      keys_html(keys) + wide_and_narrow(plot, line_plot_svg) + "<p class=\"caption\">" + html_escape(caption) + "</p>",
      true, "timeline");
}

// The verdict runs listed in words under the step-time bars; more are counted.
constexpr size_t kListedVerdictRuns = 30;

// The split of `split`'s epochs; `loop` names a watched loop other than the first ("" = none),
// `id` is the card's.
std::string split_card(const std::vector<EpochSplit>& split, const std::string& loop = "",
                       const std::string& id = "split") {
  if (split.empty()) return card("Step time by epoch", empty_text("Not recorded: no epoch has ended."), true, id);
  BarPlot plot;
  plot.y_label = "% of step time";
  plot.y_max = 100;
  BarSegment wait{"waiting for data", "#ef4444", {}}, copy{"copy", "#f59e0b", {}}, compute{"compute", "#3b82f6", {}};
  bool verdicts = false;
  for (const EpochSplit& e : split) {
    const double total = e.wait_s + e.copy_s + e.compute_s;
    const double share = total > 0 ? 100 / total : 0;
    plot.epochs.push_back(e.epoch);
    wait.values.push_back(e.wait_s * share);
    copy.values.push_back(e.copy_s * share);
    compute.values.push_back(e.compute_s * share);
    plot.verdicts.push_back(e.verdict);
    verdicts = verdicts || !e.verdict.empty();
  }
  if (!verdicts) plot.verdicts.clear();
  plot.segments = {wait, copy, compute};
  // The verdicts in words too, one line per run of epochs with the same one.
  std::string runs;
  size_t listed = 0, unlisted = 0;
  for (size_t b = 0; verdicts && b < split.size();) {
    size_t e = b;
    while (e + 1 < split.size() && split[e + 1].verdict == split[b].verdict) ++e;
    if (++listed > kListedVerdictRuns) {
      ++unlisted;
      b = e + 1;
      continue;
    }
    runs += fmt::format(
        "<li>{}: <b style=\"color:{}\">{}</b></li>",
        b == e ? fmt::format("epoch {}", split[b].epoch) : fmt::format("epochs {}–{}", split[b].epoch, split[e].epoch),
        verdict_colour(split[b].verdict), html_escape(split[b].verdict.empty() ? "not recorded" : split[b].verdict));
    b = e + 1;
  }
  if (unlisted > 0)
    runs += fmt::format("<li>… and {} more changes of verdict (the band above shows them)</li>", unlisted);
  const std::string keys =
      keys_html({{"waiting for data", "#ef4444"}, {"copy to the device", "#f59e0b"}, {"compute", "#3b82f6"}});
  return card(
      loop.empty() ? "Step time by epoch, with its verdict" : "Step time by epoch, with its verdict: " + loop,
      keys + wide_and_narrow(plot, bar_plot_svg) +
          (verdicts ? "<ul class=\"caption\">" + runs + "</ul>" : empty_text("No verdicts recorded: the bars alone.")),
      true, id);
}

std::string samples_card(const RunReport& r) {
  if (r.samples_per_sec.empty()) return card("Samples/s by epoch", empty_text("Not recorded: no epoch has ended."));
  const Curve& c = r.samples_per_sec.front();
  BarPlot plot;
  plot.y_label = "samples/s";
  BarSegment seg{"samples/s", "#2563eb", {}};
  for (size_t i = 0; i < c.x.size(); ++i) {
    if (!plausible_epoch(c.x[i])) continue;
    plot.epochs.push_back(static_cast<int64_t>(c.x[i]));
    seg.values.push_back(c.y[i]);
  }
  plot.segments = {seg};
  return card("Samples/s by epoch", bar_plot_svg(plot), false, "samples");
}

std::string stages_card(const RunReport& r) {
  const StageSeconds& s = r.stages;
  const double busy = s.read + s.decode + s.transform;
  if (!r.has_stages || !(busy > 0) || !std::isfinite(busy)) {
    return card("Loader stages",
                empty_text("Not recorded: summary.json holds no loader_seconds (a run still going, a run of another "
                           "loader, or of a stoker from before they were recorded)."),
                false, "stages");
  }
  const std::vector<std::tuple<const char*, double, const char*>> stages = {
      {"read", s.read, "#0891b2"}, {"decode", s.decode, "#9333ea"}, {"transform", s.transform, "#ea580c"}};
  std::string bar = "<div class=\"stagebar\">", rows;
  for (const auto& [name, seconds, colour] : stages) {
    const double share = 100 * seconds / busy;
    bar += fmt::format(R"(<span style="width:{:.2f}%;background:{}" title="{} {:.1f} %">{}</span>)", share, colour,
                       name, share, share >= 12 ? fmt::format("{} {:.0f} %", name, share) : "");
    rows += fmt::format(R"(<tr><td><i style="display:inline-block;width:10px;height:10px;background:{}"></i> {}</td>)"
                        R"(<td class="n">{:.1f} s</td><td class="n">{:.1f} %</td></tr>)",
                        colour, name, seconds, share);
  }
  bar += "</div>";
  std::string caption = "The loader workers' busy time, summed over workers and epochs.";
  if (s.idle > 0) {
    caption += fmt::format(
        " Workers also waited {:.1f} s with every buffer full: the loader was ahead of the model "
        "then.",
        s.idle);
  }
  return card("Loader stages", bar + "<table>" + rows + "</table><p class=\"caption\">" + html_escape(caption) + "</p>",
              false, "stages");
}

std::string recommendations_card(const RunReport& r) {
  if (r.recommendations.empty()) {
    return card("Recommendations", empty_text("None: no warning and no change to try in events.log."), false, "recs");
  }
  std::string items;
  for (const std::string& line : r.recommendations) items += "<li>" + html_escape(line) + "</li>";
  return card("Recommendations", "<div class=\"recs\"><ul>" + items + "</ul></div>", false, "recs");
}

// config.yaml's top-level "key: value" for `key`, or "".
std::string config_value(const std::string& config, const std::string& key) {
  const std::string prefix = key + ": ";
  for (size_t at = 0; at < config.size();) {
    size_t end = config.find('\n', at);
    if (end == std::string::npos) end = config.size();
    if (config.compare(at, prefix.size(), prefix) == 0)
      return config.substr(at + prefix.size(), end - at - prefix.size());
    at = end + 1;
  }
  return "";
}

std::string config_card(const RunReport& r) {
  if (r.config.empty())
    return card("Configuration", empty_text("Not recorded: config.yaml is missing."), false, "config");
  std::string rows;
  for (const char* key : {"data", "model", "epochs", "batch_size", "lr", "optimizer", "schedule", "workers",
                          "num_workers", "amp", "prefetch_factor"}) {
    const std::string value = config_value(r.config, key);
    if (!value.empty()) rows += "<tr><th>" + std::string(key) + "</th><td>" + html_escape(value) + "</td></tr>";
  }
  const int64_t lines = std::count(r.config.begin(), r.config.end(), '\n');
  return card("Configuration",
              "<table>" + rows + "</table>" +
                  fmt::format("<details><summary>config.yaml ({} lines)</summary><pre>{}</pre></details>", lines,
                              html_escape(r.config)),
              false, "config");
}

}  // namespace

std::string render_html(const RunReport& r) {
  std::string body;
  body += "<header><h1>stoker report · " + html_escape(r.title) + "</h1>";
  body += "<p class=\"sub\">" + html_escape(r.source) + "</p><dl class=\"facts\">";
  for (const auto& [name, value] : r.facts) {
    body += "<div><dt>" + html_escape(name) + "</dt><dd>" + html_escape(value) + "</dd></div>";
  }
  body += "</dl></header><div class=\"grid\">";
  if (!r.notes.empty()) {
    std::string items;
    for (const std::string& note : r.notes) items += "<li>" + html_escape(note) + "</li>";
    body += fmt::format(R"(<section class="card wide notes" id="notes"><h2>Left out</h2><ul>{}</ul></section>)", items);
  }
  const bool monitor_only = r.monitor_log_only;
  if (!monitor_only) {
    LinePlot by_epoch;
    by_epoch.x_label = "epoch";
    by_epoch.y_label = "loss";
    body += curves_card("Loss", r.loss, by_epoch, "loss", "Not recorded: no epoch has ended.");
    by_epoch.y_label = "accuracy (%)";
    body += curves_card("Accuracy", r.accuracy, by_epoch, "accuracy",
                        "Not recorded: no classification accuracy in metrics.csv (a regression run has its MAE).");
    LinePlot lr;
    lr.x_label = "optimizer step";
    lr.y_label = "learning rate";
    lr.y_from_zero = true;
    body += curves_card("Learning rate", r.learning_rate, lr, "lr", "Not recorded: tb/ holds no train/lr.");
    body += samples_card(r);
    body += split_card(r.split);
  } else if (!r.split.empty()) {  // the loops a script watched beside its monitor log
    body += samples_card(r);
    body += split_card(r.split);
    for (size_t i = 0; i < r.other_loops.size(); ++i) {
      body += split_card(r.other_loops[i].epochs, r.other_loops[i].loop, fmt::format("split-{}", i + 1));
    }
  }
  if (!r.timeline.empty()) {
    body += timeline_card(r);
  } else if (!monitor_only) {
    body +=
        card("GPU, CPU and RAM",
             empty_text("Not recorded: no monitor CSV in the folder and no monitor scalars in tb/."), true, "timeline");
  }
  if (!monitor_only) {
    body += stages_card(r);
    body += recommendations_card(r);
    body += config_card(r);
  }
  body += "</div>";
  return fmt::format(R"(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="stoker report">
<title>stoker report · {}</title>
<style>{}</style></head>
<body><main>
{}
</main></body></html>
)",
                     html_escape(r.title), kPageStyle, body);
}

}  // namespace stoker::report
