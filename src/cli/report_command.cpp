// `stoker report`: a run folder or a monitor log as one self-contained HTML page
// (stoker/report/html_report.h).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "format.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/output_clash.h"
#include "stoker/core/user_files.h"
#include "stoker/report/html_report.h"
#include "stoker/report/loop_records.h"
#include "stoker/report/run_report.h"

namespace stoker::cli {
namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string input;  // a run folder or a monitor log (CSV or JSON lines)
  std::string out;    // -o; default: report.html in the run folder, X.html beside a log X.csv
};

std::string default_report_path(const std::string& input) {
  std::error_code error;
  if (fs::is_directory(input, error)) return (fs::path(input) / "report.html").string();
  fs::path path(input);
  if (path.filename() == "metrics.csv" || path.filename() == "summary.json")
    return (path.parent_path() / "report.html").string();
  return path.replace_extension(".html").string();
}

int run_report(const ReportArgs& args) {
  if (args.input.empty()) {
    throw UsageError(
        "stoker report needs a run folder (the run dir stoker train printed) or a monitor log "
        "(stoker monitor --log FILE.csv or --jsonl FILE.jsonl)");
  }
  const std::string out = args.out.empty() ? default_report_path(args.input) : args.out;
  check_output_file(out, "-o");  // before any reading: a bad path fails first
  std::vector<CommandInput> inputs;
  const std::string given = fs::path(args.input).filename().string();
  const bool run_folder = fs::is_directory(args.input) || given == "metrics.csv" || given == "summary.json";
  for (const std::string& path : report::report_inputs(args.input)) {
    const char* whose = path == args.input                           ? "the input"
                        : path == report::loops_csv_path(args.input) ? "the log's watched loops file"
                        : run_folder                                 ? "the run folder's"
                                                                     : "another rank's monitor log (or its loops file)";
    inputs.push_back({path, whose});
  }
  check_output_apart(out, "-o", inputs);
  check_output_apart(out + ".tmp", "-o's temporary file", inputs);
  Stopwatch clock;
  const report::RunReport r = report::load_report(args.input);
  for (const std::string& note : r.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  const std::string page = report::render_html(r);
  const std::string tmp = out + ".tmp";
  {
    std::ofstream file(tmp, std::ios::trunc | std::ios::binary);
    file << page;
    file.flush();
    if (!file) {
      std::remove(tmp.c_str());
      throw SystemError(fmt::format("cannot write -o {} (disk full, or no permission to write in its folder?)", out));
    }
  }
  replace_file(tmp, out, "-o");
  std::printf("report    %s (%s, %.2f s): open it in a browser; it needs no network\n", out.c_str(),
              megabytes(static_cast<double>(page.size())).c_str(), ns_to_seconds(clock.elapsed_ns()));
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd =
      app.add_subcommand("report", "Write one self-contained HTML page of a run folder, or of a monitor log alone");
  cmd->add_option("input", args->input,
                  "A run folder (the run dir stoker train printed) or a monitor log, CSV or JSON lines (stoker monitor "
                  "--log or --jsonl)");
  cmd->add_option("-o,--out", args->out,
                  "The HTML file to write (default: report.html in the run folder, or the log's name with .html)");
  cmd->callback([args, exit_code] { *exit_code = run_report(*args); });
}

}  // namespace stoker::cli
