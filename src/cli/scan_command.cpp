// `stoker scan`: every sample of a dataset read and checked once (stoker/data/scan.h), so that
// a ten-hour run does not meet its damaged files one random crop at a time.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "format.h"
#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/output_clash.h"
#include "stoker/core/progress_line.h"
#include "stoker/core/shell_quote.h"
#include "stoker/core/terminal.h"
#include "stoker/core/user_files.h"
#include "stoker/data/exclude_list.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/scan.h"
#include "stoker/data/source.h"

namespace stoker::cli {
namespace {

constexpr size_t kShownBad = 20;  // listed on the terminal; -o writes them all

struct ScanArgs {
  std::string data;
  std::string split = "train";
  int workers = 0;  // 0: one per core
  std::string out;  // -o: the bad samples' names, for stoker train --exclude-list
  bool json = false;
};

std::string duration_text(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

std::string progress_text(const data::ScanProgress& p) {
  const double rate = p.seconds > 0 ? p.done / p.seconds : 0;
  std::string text = fmt::format("scanned {} of {} samples ({}) · {}/s · {} bad", grouped(static_cast<double>(p.done)),
                                 grouped(static_cast<double>(p.total)),
                                 share(static_cast<double>(p.done), static_cast<double>(p.total)), grouped(rate),
                                 grouped(static_cast<double>(p.bad)));
  if (rate > 0 && p.done < p.total) text += " · about " + duration_text((p.total - p.done) / rate) + " left";
  return text;
}

// One bad sample per line, "name<TAB>reason" (what --exclude-list reads back; the format:
// stoker/data/exclude_list.h), written beside and moved over `path` when complete.
void write_list(const std::string& path, const data::ScanReport& report, const std::string& data_path) {
  check_output_file(path, "-o");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "# stoker scan: " << report.bad_count << " bad of " << report.checked
        << " samples checked; for stoker train --exclude-list (names relative to the data's folder)\n";
    for (const auto& b : report.bad) {
      std::string reason = b.reason;
      std::replace_if(
          reason.begin(), reason.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
      out << data::exclude_list_name(b.name, data_path) << '\t' << reason << '\n';
    }
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(fmt::format("cannot write -o {} (disk full?)", path));
    }
  }
  replace_file(tmp, path, "-o");
}

// The kind of a reason: its words before any detail in parentheses or after a colon
// ("truncated JPEG (no end-of-image marker in its 41230 bytes)" -> "truncated JPEG").
std::string reason_kind(const std::string& reason) {
  std::string kind = reason.substr(0, reason.find_first_of("(:"));
  while (!kind.empty() && kind.back() == ' ') kind.pop_back();
  return kind;
}

// "truncated JPEG 2 · not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF 1", most frequent first.
std::string counts_by_kind(const data::ScanReport& r) {
  std::map<std::string, int64_t> counts;
  for (const auto& b : r.bad) ++counts[reason_kind(b.reason)];
  std::vector<std::pair<std::string, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [kind, n] : sorted)
    text += (text.empty() ? "" : " · ") + kind + " " + grouped(static_cast<double>(n));
  return text;
}

void print_json(const data::ScanReport& r, const std::string& describe) {
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& b : r.bad) bad.push_back({{"index", b.index}, {"name", b.name}, {"reason", b.reason}});
  nlohmann::json reasons = nlohmann::json::object();
  for (const auto& b : r.bad) reasons[reason_kind(b.reason)] = reasons.value(reason_kind(b.reason), 0) + 1;
  const nlohmann::json out = {{"data", describe},         {"samples", r.samples}, {"checked", r.checked},
                              {"bad_count", r.bad_count}, {"reasons", reasons},   {"bad", bad},
                              {"bytes", r.bytes},         {"seconds", r.seconds}, {"stopped", r.stopped}};
  std::printf("%s\n", dump_json(out).c_str());
}

int run_scan(const ScanArgs& args) {
  if (args.data.empty()) throw UsageError("stoker scan needs --data PATH (what stoker train --data reads)");
  if (args.workers < 0) {
    throw UsageError(fmt::format("--workers must be >= 0 (got {}; 0 = one per core)", args.workers));
  }
  if (!args.out.empty()) {
    check_output_file(args.out, "-o");
    const std::vector<CommandInput> inputs = data::data_inputs(args.data, "--data");
    check_output_apart(args.out, "-o", inputs);
    check_output_apart(args.out + ".tmp", "-o's temporary file", inputs);
  }
  const std::unique_ptr<data::Source> source = data::open_source_showing_progress(args.data, args.split);
  data::ScanOptions options;
  options.workers = args.workers > 0 ? args.workers : cpu_count();
  std::fprintf(stderr, "scanning %s: %s samples, each read and checked whole, with %d worker%s (Ctrl-C stops)\n",
               source->describe().c_str(), grouped(static_cast<double>(source->size())).c_str(), options.workers,
               options.workers == 1 ? "" : "s");
  ProgressLine line;
  options.progress = [&line](const data::ScanProgress& p) {
    if (p.done < p.total) line.update([&] { return progress_text(p); });
  };
  block_termination_signals();  // before the workers start: they inherit the mask
  options.wait = [](double seconds) { return wait_for_signal(seconds); };
  const data::ScanReport r = data::scan_source(*source, options);
  line.clear();
  if (!args.out.empty()) write_list(args.out, r, args.data);
  if (args.json) {
    print_json(r, source->describe());
  } else {
    std::printf("scanned   %s of %s samples (%s) in %.1f s with %d worker%s%s\n",
                grouped(static_cast<double>(r.checked)).c_str(), grouped(static_cast<double>(r.samples)).c_str(),
                megabytes(static_cast<double>(r.bytes)).c_str(), r.seconds, options.workers,
                options.workers == 1 ? "" : "s", r.stopped ? ": stopped" : "");
    std::printf("bad       %s\n", r.bad_count == 0
                                      ? "none"
                                      : (grouped(static_cast<double>(r.bad_count)) + ": " + counts_by_kind(r)).c_str());
    for (size_t i = 0; i < r.bad.size() && i < kShownBad; ++i) {
      std::printf("          %s: %s\n", r.bad[i].name.c_str(), r.bad[i].reason.c_str());
    }
    if (r.bad_count > static_cast<int64_t>(std::min(r.bad.size(), kShownBad))) {
      std::printf(
          "          ... and %s more%s\n",
          grouped(static_cast<double>(r.bad_count - static_cast<int64_t>(std::min(r.bad.size(), kShownBad)))).c_str(),
          args.out.empty() ? " (-o bad.txt writes them all)" : "");
    }
    if (!args.out.empty()) std::printf("list      %s\n", args.out.c_str());
    if (r.bad_count > 0) {
      std::printf(
          "next      %s; otherwise stoker train substitutes each with the next good sample and stops "
          "when more than --max-bad-fraction of an epoch fails\n",
          args.out.empty() ? "stoker scan -o bad.txt, then stoker train --exclude-list bad.txt leaves them out"
                           : ("stoker train --exclude-list " + shell_quote(args.out) + " leaves them out").c_str());
    }
  }
  if (r.stopped) return 130;
  return r.bad_count > 0 ? 1 : 0;
}

}  // namespace

void add_scan_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ScanArgs>();
  CLI::App* scan = app.add_subcommand(
      "scan", "Read and check every sample of a dataset once: lists the damaged files, exits 1 if any");
  scan->add_option("--data", args->data, "What stoker train --data reads (a folder, shards, arrays, a file list)");
  scan->add_option("--split", args->split, "Split to read: " + data::split_help_text());
  scan->add_option("--workers,--num-workers,--num_workers", args->workers, "Threads (default: one per core)");
  scan->add_option("-o,--out", args->out,
                   "Write every bad sample to this file, one per line (name, tab, reason): stoker train "
                   "--exclude-list reads it");
  scan->add_flag("--json", args->json, "Print one JSON object instead of the text report");
  scan->callback([args, exit_code] { *exit_code = run_scan(*args); });
}

}  // namespace stoker::cli
