#include "stoker/report/run_report.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>

#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/numbers.h"
#include "stoker/core/user_files.h"
#include "stoker/monitor/sinks.h"
#include "stoker/report/event_reader.h"
#include "stoker/report/loop_records.h"

namespace stoker::report {

namespace {

namespace fs = std::filesystem;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr uint64_t kMaxSmallFile = uint64_t{64} << 20;  // summary.json, config.yaml, events.log

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (double& v : values) v *= factor;
  return values;
}

bool any_number(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double v) { return !std::isnan(v); });
}

// Adds the curve `name` of column `column` (times `factor`) where the column holds a number.
void add_metrics_curve(const CsvTable& metrics, const std::vector<double>& epochs, const char* column, const char* name,
                       double factor, std::vector<Curve>* out) {
  std::vector<double> y = scaled(metrics.numbers(column), factor);
  if (any_number(y)) out->push_back({name, epochs, std::move(y)});
}

// The header of stoker monitor's CSV log begins so (docs/MONITOR_FORMATS.md).
bool is_monitor_header(const std::string& first_line) { return first_line.rfind("timestamp,seconds,", 0) == 0; }

std::string first_line_of(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return "";
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// A monitor CSV in the run folder (stoker monitor --log runs/x/monitor.csv -- stoker train ...).
std::string monitor_log_in(const fs::path& folder) {
  std::error_code error;
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.path().extension() == ".csv" && entry.path().filename() != "metrics.csv" &&
        is_monitor_header(first_line_of(entry.path()))) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.front().string();
}

// Mean of the values that are numbers, per row; NaN where none is.
std::vector<double> row_means(const std::vector<std::vector<double>>& columns, size_t rows) {
  std::vector<double> out(rows, kNan);
  for (size_t r = 0; r < rows; ++r) {
    double sum = 0;
    int n = 0;
    for (const auto& c : columns) {
      if (!std::isnan(c[r])) {
        sum += c[r];
        ++n;
      }
    }
    if (n > 0) out[r] = sum / n;
  }
  return out;
}

void set_low(const std::vector<double>& t, const std::vector<double>& basis, const std::string& name,
             RunReport* report) {
  if (!any_number(basis)) return;
  report->low_basis = name;
  report->low = low_stretches(t, basis, kLowUtilisationPercent, kLowUtilisationSeconds);
}

// The monitor's scalars in tb/ (host/cpu_percent, host/ram_percent, gpu<N>/util) as the timeline.
void add_event_timeline(const EventScalars& tb, RunReport* report) {
  std::vector<std::pair<std::string, std::string>> wanted = {{"host/cpu_percent", "CPU"}, {"host/ram_percent", "RAM"}};
  const std::regex gpu_util(R"(gpu(\d+)/util)");
  for (const auto& [tag, points] : tb.tags) {
    std::smatch m;
    if (std::regex_match(tag, m, gpu_util)) wanted.emplace_back(tag, "GPU " + m[1].str() + " util");
  }
  double start = std::numeric_limits<double>::infinity();
  for (const auto& [tag, name] : wanted) {
    const auto found = tb.tags.find(tag);
    if (found != tb.tags.end() && !found->second.empty()) start = std::min(start, found->second.front().wall_time);
  }
  if (std::isinf(start)) return;
  std::vector<Curve> gpus;
  for (const auto& [tag, name] : wanted) {
    const auto found = tb.tags.find(tag);
    if (found == tb.tags.end()) continue;
    Curve c{name, {}, {}};
    for (const ScalarPoint& p : found->second) {
      c.x.push_back(p.wall_time - start);
      c.y.push_back(p.value);
    }
    (name.rfind("GPU", 0) == 0 ? gpus : report->timeline).push_back(c);
  }
  report->timeline.insert(report->timeline.end(), gpus.begin(), gpus.end());
  if (!gpus.empty()) {
    // The GPUs' samples share their times: the mean at each of the first GPU's.
    std::vector<std::vector<double>> ys;
    for (const Curve& g : gpus) {
      if (g.y.size() == gpus.front().y.size()) ys.push_back(g.y);
    }
    set_low(gpus.front().x, row_means(ys, gpus.front().x.size()), "GPU utilisation", report);
  } else if (!report->timeline.empty() && report->timeline.front().name == "CPU") {
    set_low(report->timeline.front().x, report->timeline.front().y, "CPU", report);
  }
}

nlohmann::json read_summary(const fs::path& path, RunReport* report) {
  std::error_code error;
  if (!fs::exists(path, error)) {
    report->notes.push_back(
        fmt::format("{} is missing (written when a run ends): no verdicts, loader stages or "
                    "run facts",
                    path.string()));
    return nullptr;
  }
  try {
    return parse_json(read_small_file(path.string(), "summary.json", kMaxSmallFile));
  } catch (const nlohmann::json::exception&) {
    report->notes.push_back(
        fmt::format("{} is not complete JSON (cut off, or still being written): no verdicts, "
                    "loader stages or run facts",
                    path.string()));
    return nullptr;
  }
}

// Values of summary.json of the wrong type (a verdict that is a number, an epoch that is not
// an object): each is left out, with one note per kind ("epochs[].verdict"), and the rest is
// drawn. A well-formed file of another shape loses only what does not fit.
class TypeNotes {
 public:
  explicit TypeNotes(std::string file) : file_(std::move(file)) {}

  // `where` ("epochs[3].verdict") holds `got`, which is not `expected` ("text", "a number").
  void add(const std::string& where, const char* expected, const nlohmann::json& got) {
    static const std::regex index(R"(\[\d+\])");
    const std::string kind = std::regex_replace(where, index, "[]");
    for (Kind& k : kinds_) {
      if (k.kind == kind) {
        ++k.more;
        return;
      }
    }
    std::string shown = got.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    kinds_.push_back({kind, fmt::format("{}: {} is not {} ({}): left out", file_, where, expected, shown), 0});
  }

  void flush(RunReport* r) const {
    for (const Kind& k : kinds_)
      r->notes.push_back(k.more == 0 ? k.note : fmt::format("{} (and {} more like it)", k.note, k.more));
  }

 private:
  struct Kind {
    std::string kind, note;
    size_t more = 0;
  };
  std::string file_;
  std::vector<Kind> kinds_;
};

// Where in summary.json: "best" + "metric" -> "best.metric".
std::string member(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }

// j[key] as a finite number; NaN when it is missing, null or not finite, and a note when it is
// of another type.
double json_number(const nlohmann::json& j, const char* key, const std::string& where, TypeNotes* notes) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return kNan;
  if (!j[key].is_number()) {
    notes->add(member(where, key), "a number", j[key]);
    return kNan;
  }
  const double v = j[key].get<double>();
  return std::isfinite(v) ? v : kNan;
}

// j[key] as text; "" when it is missing or null, and a note when it is of another type.
std::string json_text(const nlohmann::json& j, const char* key, const std::string& where, TypeNotes* notes) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  if (!j[key].is_string()) {
    notes->add(member(where, key), "text", j[key]);
    return "";
  }
  return j[key].get<std::string>();
}

// j[key] when it is an object; nullptr when it is missing or null, and a note when it is of
// another type.
const nlohmann::json* json_object(const nlohmann::json& j, const char* key, const std::string& where,
                                  TypeNotes* notes) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return nullptr;
  if (!j[key].is_object()) {
    notes->add(member(where, key), "an object", j[key]);
    return nullptr;
  }
  return &j[key];
}

// summary.json's epochs that are objects, with where each is ("epochs[3]").
std::vector<std::pair<std::string, const nlohmann::json*>> summary_epochs(const nlohmann::json& summary,
                                                                          TypeNotes* notes) {
  std::vector<std::pair<std::string, const nlohmann::json*>> epochs;
  if (!summary.is_object() || !summary.contains("epochs") || summary["epochs"].is_null()) return epochs;
  const nlohmann::json& list = summary["epochs"];
  if (!list.is_array()) {
    notes->add("epochs", "a list", list);
    return epochs;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("epochs[{}]", i);
    if (list[i].is_object()) {
      epochs.emplace_back(where, &list[i]);
    } else {
      notes->add(where, "an object", list[i]);
    }
  }
  return epochs;
}

void add_summary(const nlohmann::json& summary, RunReport* r, TypeNotes* notes) {
  if (!summary.is_object()) return;
  auto fact = [r](const char* name, const std::string& value) {
    if (!value.empty()) r->facts.emplace_back(name, value);
  };
  fact("model", json_text(summary, "model", "", notes));
  if (const double b = json_number(summary, "batch_size", "", notes); !std::isnan(b)) {
    fact("batch size", fmt::format("{:g}", b));
  }
  if (const double s = json_number(summary, "global_step", "", notes); !std::isnan(s))
    fact("optimizer steps", grouped(s));
  if (const double v = json_number(summary, "samples_per_sec", "", notes); !std::isnan(v))
    fact("samples/s", grouped(v));
  if (const double a = json_number(summary, "test_accuracy", "", notes); !std::isnan(a)) {
    fact("val accuracy", fmt::format("{:.1f} %", 100 * a));
  }
  if (const nlohmann::json* best = json_object(summary, "best", "", notes)) {
    if (const double e = json_number(*best, "epoch", "best", notes); !std::isnan(e)) {
      const std::string metric = json_text(*best, "metric", "best", notes);
      const double v = json_number(*best, "value", "best", notes);
      fact("best epoch", std::isnan(v) ? fmt::format("{:g}", e) : fmt::format("{:g} ({} {:.4g})", e, metric, v));
    }
  }
  if (const double c = json_number(summary, "exit_code", "", notes); !std::isnan(c)) {
    fact("exit code", c == 0 ? "0 (finished)" : fmt::format("{:g} (stopped)", c));
  }
  for (const auto& [where, e] : summary_epochs(summary, notes)) {
    const nlohmann::json* stages = json_object(*e, "loader_seconds", where, notes);
    if (stages == nullptr) continue;
    r->has_stages = true;
    const std::string at = member(where, "loader_seconds");
    // A figure that is not a number is left out, not added as NaN (which drew "nan %").
    const auto add = [&](double* total, const char* key) {
      if (const double v = json_number(*stages, key, at, notes); !std::isnan(v)) *total += v;
    };
    add(&r->stages.read, "read");
    add(&r->stages.decode, "decode");
    add(&r->stages.transform, "transform");
    add(&r->stages.idle, "idle_full_buffers");
  }
}

// Step-time split per epoch: summary.json's entries (with verdicts), else metrics.csv's columns.
void add_split(const nlohmann::json& summary, const CsvTable* metrics, RunReport* r, TypeNotes* notes) {
  const auto epochs = summary_epochs(summary, notes);
  if (!epochs.empty()) {
    for (const auto& [where, e] : epochs) {
      EpochSplit s;
      const double epoch = json_number(*e, "epoch", where, notes);
      if (!plausible_epoch(epoch)) continue;
      s.epoch = static_cast<int64_t>(epoch);
      s.wait_s = json_number(*e, "wait_s", where, notes);
      s.copy_s = json_number(*e, "copy_s", where, notes);
      s.compute_s = json_number(*e, "compute_s", where, notes);
      s.verdict = json_text(*e, "verdict", where, notes);
      if (!std::isnan(s.wait_s + s.copy_s + s.compute_s)) r->split.push_back(s);
    }
    return;
  }
  if (metrics == nullptr) return;
  const auto csv_epochs = metrics->numbers("epoch");
  const auto wait = metrics->numbers("wait_s"), copy = metrics->numbers("copy_s"),
             compute = metrics->numbers("compute_s");
  for (size_t i = 0; i < csv_epochs.size(); ++i) {
    if (!plausible_epoch(csv_epochs[i]) || std::isnan(wait[i] + copy[i] + compute[i])) continue;
    r->split.push_back({static_cast<int64_t>(csv_epochs[i]), wait[i], copy[i], compute[i], ""});
  }
}

// The warnings ("⚠ …") and the changes to try ("try: …") of events.log, each once, in order.
void add_recommendations(const fs::path& path, RunReport* r) {
  std::error_code error;
  if (!fs::exists(path, error)) return;
  const std::string text = read_small_file(path.string(), "events.log", kMaxSmallFile);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    line.erase(0, line.find_first_not_of(' '));
    const bool wanted = line.rfind("try:", 0) == 0 || line.rfind("\u26a0", 0) == 0;
    if (wanted && std::find(r->recommendations.begin(), r->recommendations.end(), line) == r->recommendations.end()) {
      r->recommendations.push_back(line);
    }
  }
}

// The passes of the loops watched beside a monitor log: the first unnamed loop's (else the
// first loop's) as the split and samples/s, the others in other_loops.
void add_loops(const std::string& log_path, RunReport* r) {
  const std::string path = loops_csv_path(log_path);
  std::error_code error;
  if (!fs::exists(path, error)) return;
  CsvTable table;
  try {
    table = read_csv_table(path, "loops file");
  } catch (const Error& e) {
    r->notes.push_back(e.what());
    return;
  }
  r->notes.insert(r->notes.end(), table.notes.begin(), table.notes.end());
  for (const char* column : kLoopColumns) {
    if (table.column(column) < 0) {
      r->notes.push_back(
          fmt::format("{} has no {} column: not a watched loops file of stoker.monitor "
                      "(docs/MONITOR_FORMATS.md); its step-time split is left out",
                      path, column));
      return;
    }
  }
  const int loop_at = table.column("loop"), rank_at = table.column("rank"), verdict_at = table.column("verdict");
  const auto epochs = table.numbers("epoch"), wait = table.numbers("wait_s"), copy = table.numbers("copy_s"),
             compute = table.numbers("compute_s"), rate = table.numbers("samples_per_sec");
  std::vector<LoopSplit> loops;  // one per loop and rank, in the order first seen
  std::vector<std::vector<std::pair<double, double>>> rates;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    if (!plausible_epoch(epochs[i]) || std::isnan(wait[i] + copy[i] + compute[i])) continue;
    const std::vector<std::string>& row = table.rows[i];
    std::string name = row[static_cast<size_t>(loop_at)];
    if (row[static_cast<size_t>(rank_at)] != "0")
      name += (name.empty() ? "rank " : " · rank ") + row[static_cast<size_t>(rank_at)];
    auto found = std::find_if(loops.begin(), loops.end(), [&](const LoopSplit& l) { return l.loop == name; });
    if (found == loops.end()) {
      loops.push_back({name, {}});
      rates.emplace_back();
      found = loops.end() - 1;
    }
    found->epochs.push_back(
        {static_cast<int64_t>(epochs[i]), wait[i], copy[i], compute[i], row[static_cast<size_t>(verdict_at)]});
    rates[static_cast<size_t>(found - loops.begin())].emplace_back(epochs[i], rate[i]);
  }
  if (loops.empty()) return;
  // A loop watched anew each pass (a list, or a new generator each epoch) counts every pass as
  // epoch 0: where a loop's epochs do not rise, its passes are numbered in order instead (the
  // file's order is the order they ended in).
  for (size_t l = 0; l < loops.size(); ++l) {
    std::vector<EpochSplit>& passes = loops[l].epochs;
    bool rising = true;
    for (size_t i = 1; i < passes.size(); ++i) rising = rising && passes[i].epoch > passes[i - 1].epoch;
    if (rising) continue;
    for (size_t i = 0; i < passes.size(); ++i) {
      passes[i].epoch = static_cast<int64_t>(i);
      rates[l][i].first = static_cast<double>(i);
    }
  }
  const auto first = std::find_if(loops.begin(), loops.end(), [](const LoopSplit& l) { return l.loop.empty(); });
  const size_t main = first != loops.end() ? static_cast<size_t>(first - loops.begin()) : 0;
  r->split = loops[main].epochs;
  Curve c{"samples/s", {}, {}};
  for (const auto& [epoch, value] : rates[main]) {
    c.x.push_back(epoch);
    c.y.push_back(value);
  }
  r->samples_per_sec.push_back(std::move(c));
  std::string names = loops[main].loop.empty() ? "(unnamed)" : loops[main].loop;
  for (size_t i = 0; i < loops.size(); ++i) {
    if (i == main) continue;
    names += ", " + loops[i].loop;
    r->other_loops.push_back(std::move(loops[i]));
  }
  r->facts.emplace_back("watched loops", names);
}

bool nothing_drawable(const RunReport& r) {
  return r.loss.empty() && r.accuracy.empty() && r.learning_rate.empty() && r.samples_per_sec.empty() &&
         r.split.empty() && r.timeline.empty();
}

}  // namespace

std::vector<Span> low_stretches(const std::vector<double>& t, const std::vector<double>& percent, double below,
                                double min_seconds) {
  std::vector<Span> out;
  const size_t n = std::min(t.size(), percent.size());
  size_t i = 0;
  while (i < n) {
    if (std::isnan(t[i]) || std::isnan(percent[i]) || percent[i] >= below) {
      ++i;
      continue;
    }
    const size_t first = i;
    while (i < n && !std::isnan(percent[i]) && percent[i] < below) ++i;
    // It ends where the utilisation came back (the next sample), or at the last sample.
    const double end = i < n && !std::isnan(t[i]) ? t[i] : t[i - 1];
    if (end - t[first] >= min_seconds) out.push_back({t[first], end});
  }
  return out;
}

void add_monitor_timeline(const CsvTable& log, RunReport* report) {
  const std::vector<double> t = log.numbers("seconds");
  report->timeline.push_back({"CPU", t, log.numbers("cpu_percent")});
  std::vector<double> ram = log.numbers("mem_used_bytes");
  const std::vector<double> total = log.numbers("mem_total_bytes");
  for (size_t i = 0; i < ram.size(); ++i) ram[i] = total[i] > 0 ? 100 * ram[i] / total[i] : kNan;
  report->timeline.push_back({"RAM", t, ram});
  std::vector<std::vector<double>> gpus;
  for (int gpu = 0; log.column(monitor::gpu_column(gpu, "util_percent")) >= 0; ++gpu) {
    gpus.push_back(log.numbers(monitor::gpu_column(gpu, "util_percent")));
    report->timeline.push_back({fmt::format("GPU {} util", gpu), t, gpus.back()});
  }
  if (!gpus.empty()) {
    set_low(t, row_means(gpus, t.size()), "GPU utilisation", report);
  } else {
    set_low(t, report->timeline.front().y, "CPU", report);
  }
}

RunReport load_monitor_log(const std::string& csv_path) {
  RunReport r;
  r.source = csv_path;
  r.title = "monitor log " + fs::path(csv_path).filename().string();
  r.monitor_log_only = true;
  const std::string text = read_small_file(csv_path, "monitor log", uint64_t{1} << 30);
  const bool json_lines = is_json_lines(text);
  const CsvTable log = json_lines ? parse_jsonl_table(text, csv_path) : parse_csv_table(text, csv_path);
  if (log.column("seconds") < 0 && log.column("loop") >= 0 && log.column("wait_share") >= 0) {
    throw DataError(
        fmt::format("{} is the watched loops' file stoker.monitor writes beside its log, not the log: give the "
                    "monitor log itself (the log= path, e.g. run.csv), whose report draws these loops too",
                    csv_path));
  }
  r.notes = log.notes;
  if (json_lines && log.rows.empty()) {
    throw DataError(
        fmt::format("{} has its meta line but no complete sample line: nothing to draw; wait for the "
                    "monitor's first samples (one per --interval), then run stoker report again",
                    csv_path));
  }
  if (log.column("seconds") < 0 || log.column("cpu_percent") < 0) {
    throw DataError(fmt::format(
        "{} is not a stoker monitor log: its {} no seconds and cpu_percent {} (docs/MONITOR_FORMATS.md); "
        "give the CSV or JSON lines of stoker monitor --log or --jsonl, or of stoker.monitor(log=...), or a run folder",
        csv_path, json_lines ? "samples have" : "header has", json_lines ? "fields" : "columns"));
  }
  if (log.rows.empty()) {
    throw DataError(
        fmt::format("{} has a header but no complete sample row: nothing to draw; wait for the "
                    "monitor's first samples (one per --interval), then run stoker report again",
                    csv_path));
  }
  add_monitor_timeline(log, &r);
  const std::vector<double> t = log.numbers("seconds");
  int gpus = 0;
  while (log.column(monitor::gpu_column(gpus, "util_percent")) >= 0) ++gpus;
  r.facts.emplace_back("samples", grouped(static_cast<double>(log.rows.size())));
  if (t.size() >= 2 && !std::isnan(t.front() + t.back())) {
    r.facts.emplace_back("duration", fmt::format("{:.0f} s", t.back() - t.front()));
    r.facts.emplace_back("interval",
                         fmt::format("{:.2g} s", (t.back() - t.front()) / static_cast<double>(t.size() - 1)));
  }
  r.facts.emplace_back("GPUs", std::to_string(gpus));
  add_loops(csv_path, &r);
  std::string others;  // the logs the other ranks of its script wrote beside it
  std::error_code error;
  for (int rank = 1; fs::is_regular_file(rank_log_path(csv_path, rank), error); ++rank) {
    others += (others.empty() ? "" : ", ") + fs::path(rank_log_path(csv_path, rank)).filename().string();
  }
  if (!others.empty()) r.facts.emplace_back("other ranks' logs", others + " (stoker report each for its page)");
  return r;
}

RunReport load_run_folder(const std::string& folder) {
  const fs::path dir(folder);
  std::error_code error;
  const fs::path metrics_path = dir / "metrics.csv", summary_path = dir / "summary.json", tb_path = dir / "tb";
  if (!fs::exists(metrics_path, error) && !fs::exists(summary_path, error) && !fs::is_directory(tb_path, error)) {
    throw DataError(
        fmt::format("{} is not a run folder: it holds none of metrics.csv, summary.json, tb/; give the "
                    "run dir stoker train printed (e.g. runs/2026-11-27_11-53-32), or a monitor CSV",
                    folder));
  }
  RunReport r;
  r.source = folder;
  fs::path name = fs::absolute(dir).lexically_normal();
  if (name.filename().empty()) name = name.parent_path();  // "runs/x/" names x
  r.title = "run " + name.filename().string();

  std::optional<CsvTable> metrics;
  if (!fs::exists(metrics_path, error)) {
    r.notes.push_back(
        fmt::format("{} is missing (a row is added as each epoch ends): no per-epoch curves", metrics_path.string()));
  } else {
    try {
      metrics = read_csv_table(metrics_path.string(), "metrics.csv");
      r.notes.insert(r.notes.end(), metrics->notes.begin(), metrics->notes.end());
    } catch (const DataError& e) {
      r.notes.push_back(e.what());
    }
  }
  if (metrics) {
    const std::vector<double> epochs = metrics->numbers("epoch");
    add_metrics_curve(*metrics, epochs, "train_loss", "train", 1, &r.loss);
    add_metrics_curve(*metrics, epochs, "val_loss", "validation", 1, &r.loss);
    add_metrics_curve(*metrics, epochs, "ema_val_loss", "validation (EMA)", 1, &r.loss);
    add_metrics_curve(*metrics, epochs, "train_top1", "train", 100, &r.accuracy);
    add_metrics_curve(*metrics, epochs, "val_top1", "validation", 100, &r.accuracy);
    add_metrics_curve(*metrics, epochs, "val_top5", "validation top-5", 100, &r.accuracy);
    add_metrics_curve(*metrics, epochs, "ema_val_top1", "validation (EMA)", 100, &r.accuracy);
    add_metrics_curve(*metrics, epochs, "samples_per_sec", "samples/s", 1, &r.samples_per_sec);
    if (metrics->rows.empty())
      r.notes.push_back(metrics_path.string() + " has no complete row yet: no per-epoch curves");
  }
  const nlohmann::json summary = read_summary(summary_path, &r);
  TypeNotes type_notes(summary_path.string());
  add_summary(summary, &r, &type_notes);
  add_split(summary, metrics ? &*metrics : nullptr, &r, &type_notes);
  type_notes.flush(&r);

  const EventScalars tb = read_event_scalars(tb_path.string());
  r.notes.insert(r.notes.end(), tb.notes.begin(), tb.notes.end());
  if (const auto lr = tb.tags.find("train/lr"); lr != tb.tags.end()) {
    Curve c{"learning rate", {}, {}};
    for (const ScalarPoint& p : lr->second) {
      c.x.push_back(static_cast<double>(p.step));
      c.y.push_back(p.value);
    }
    r.learning_rate.push_back(std::move(c));
  } else {
    r.notes.push_back(
        fmt::format("{} holds no train/lr scalars (stoker train --no-tensorboard writes none): no "
                    "learning-rate curve",
                    tb_path.string()));
  }
  if (const std::string log = monitor_log_in(dir); !log.empty()) {
    try {
      const CsvTable table = read_csv_table(log, "monitor log");
      r.notes.insert(r.notes.end(), table.notes.begin(), table.notes.end());
      if (!table.rows.empty()) add_monitor_timeline(table, &r);
    } catch (const Error& e) {
      r.notes.push_back(e.what());
    }
  }
  if (r.timeline.empty()) add_event_timeline(tb, &r);

  const fs::path config = dir / "config.yaml";
  if (fs::exists(config, error)) {
    r.config = read_small_file(config.string(), "config.yaml", kMaxSmallFile);
  } else {
    r.notes.push_back(config.string() + " is missing: no configuration to show");
  }
  add_recommendations(dir / "events.log", &r);
  if (nothing_drawable(r)) {
    throw DataError(
        fmt::format("{} holds nothing to draw yet: no complete metrics.csv row, no summary.json epochs "
                    "and no tb/ scalars; run stoker report again once the run's first epoch has ended",
                    folder));
  }
  return r;
}

std::vector<std::string> report_inputs(const std::string& path) {
  std::error_code error;
  fs::path dir(path);
  const std::string name = dir.filename().string();
  if (!fs::is_directory(dir, error)) {
    if (name != "metrics.csv" && name != "summary.json") {
      // A monitor log: its loops file, and the other ranks' logs the report names.
      std::vector<std::string> inputs{path, loops_csv_path(path)};
      for (int rank = 1; fs::is_regular_file(rank_log_path(path, rank), error); ++rank) {
        inputs.push_back(rank_log_path(path, rank));
        inputs.push_back(loops_csv_path(rank_log_path(path, rank)));
      }
      return inputs;
    }
    dir = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  }
  std::vector<std::string> inputs;
  for (const char* part : {"metrics.csv", "summary.json", "config.yaml", "events.log", "tb"})
    inputs.push_back((dir / part).string());
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".csv" && is_monitor_header(first_line_of(entry.path())))
      inputs.push_back(entry.path().string());
  }
  return inputs;
}

RunReport load_report(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw UsageError(
        fmt::format("{} does not exist; give a run folder (the run dir stoker train printed) or a monitor "
                    "log (stoker monitor --log FILE.csv or --jsonl FILE.jsonl)",
                    path));
  }
  if (S_ISDIR(st.st_mode)) return load_run_folder(path);
  check_input_file(path, "the report's input");  // a FIFO, a device: refused before any read
  const std::string name = fs::path(path).filename().string();
  if (name == "metrics.csv" || name == "summary.json") {
    const std::string parent = fs::path(path).parent_path().string();
    return load_run_folder(parent.empty() ? "." : parent);
  }
  return load_monitor_log(path);
}

}  // namespace stoker::report
