// `stoker monitor`: the live resource line, logs, and `-- CMD` to watch a command.
#include <fmt/format.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"
#include "commands.h"
#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/core/shell_quote.h"
#include "stoker/monitor/sampler.h"
#include "stoker/monitor/sinks.h"

namespace stoker::cli {

namespace {

struct MonitorArgs {
  double interval = 1.0;
  double duration = 0;  // 0 = until Ctrl-C (or the watched process ends)
  std::string csv;
  std::string jsonl;
  int pid = 0;
  bool no_gpu = false;
  bool quiet = false;
  bool live = false;
  std::vector<std::string> command;
};

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

int run_monitor(const MonitorArgs& args) {
  const bool with_command = !args.command.empty();
  if (args.duration < 0) throw UsageError(fmt::format("--duration must be >= 0 (got {})", args.duration));
  if (with_command && args.duration > 0) {
    throw UsageError("--duration cannot be combined with a command: the command's run is the duration");
  }
  if (with_command && args.pid != 0) throw UsageError("give either --pid PID or -- CMD, not both");
  if (args.pid < 0) throw UsageError(fmt::format("--pid must be a process id > 0 (got {})", args.pid));
  if (args.pid > 0 && !process_exists(args.pid)) {
    throw UsageError(fmt::format("process {} is not running; check the pid with `ps`", args.pid));
  }

  monitor::SamplerOptions options;
  options.interval_s = args.interval;
  options.gpu = !args.no_gpu;
  monitor::Sampler sampler(options);  // validates the interval, opens NVML once

  // Logs are opened before anything runs, so a bad path fails first and loses nothing.
  std::unique_ptr<monitor::CsvLog> csv;
  std::unique_ptr<monitor::JsonlLog> jsonl;
  if (!args.csv.empty()) csv = std::make_unique<monitor::CsvLog>(args.csv, static_cast<int>(sampler.gpus().size()));
  if (!args.jsonl.empty())
    jsonl = std::make_unique<monitor::JsonlLog>(args.jsonl, sampler.gpus(), sampler.gpu_status());
  if (csv) sampler.add_sink([&csv](const monitor::Sample& s) { csv->write(s); });
  if (jsonl) sampler.add_sink([&jsonl](const monitor::Sample& s) { jsonl->write(s); });

  // The live line goes to stdout, or to stderr while a command owns the terminal's stdout.
  const bool live = !args.quiet && (!with_command || args.live);
  monitor::StatusLine line(with_command ? stderr : stdout);
  if (live) sampler.add_sink([&line](const monitor::Sample& s) { line.write(s); });

  block_termination_signals();  // before start(): the sampler thread inherits the mask
  auto say_gpu_status = [&] { std::fprintf(stderr, "stoker monitor: %s\n", sampler.gpu_status().c_str()); };
  int exit_code = 0;
  Stopwatch wall;
  if (with_command) {
    const pid_t child = spawn_command(args.command);
    say_gpu_status();  // once, after the command started (a failed start is one line alone)
    sampler.watch(child);
    sampler.start();
    exit_code = wait_for_child(child);
  } else {
    say_gpu_status();
    if (args.pid > 0) sampler.watch(args.pid);
    sampler.start();
    for (;;) {
      double wait = args.pid > 0 ? 0.5 : -1;  // poll the watched process twice a second
      if (args.duration > 0) {
        const double left = args.duration - ns_to_seconds(wall.elapsed_ns());
        if (left <= 0) break;
        wait = wait < 0 ? left : std::min(wait, left);
      }
      if (wait_for_signal(wait)) break;
      if (args.pid > 0 && !sampler.watched_alive()) break;
    }
  }
  sampler.stop();
  if (live) line.finish();

  monitor::Summary summary = sampler.summary();
  summary.seconds = ns_to_seconds(wall.elapsed_ns());
  std::fputs(monitor::format_summary(summary, sampler.gpu_status()).c_str(), with_command ? stderr : stdout);
  if (const std::string& log = args.csv.empty() ? args.jsonl : args.csv; !log.empty())
    std::fprintf(with_command ? stderr : stdout, "report: stoker report %s\n", shell_quote(log).c_str());
  return exit_code;
}

}  // namespace

void add_monitor_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MonitorArgs>();
  CLI::App* cmd =
      app.add_subcommand("monitor", "Sample GPU (NVML), CPU, RAM, disk and network; watch a process or a command");
  cmd->add_option("--interval", args->interval, "Seconds between samples (>= 0.05)")->capture_default_str();
  CLI::Option* duration =
      cmd->add_option("--duration", args->duration, "Stop after this many seconds (default: Ctrl-C)");
  cmd->add_option("--log", args->csv, "Write a CSV log (columns: docs/MONITOR_FORMATS.md)");
  cmd->add_option("--jsonl", args->jsonl, "Write a JSON-lines log");
  cmd->add_option("--pid", args->pid, "Watch this running process and its children");
  cmd->add_flag("--no-gpu", args->no_gpu, "Do not load NVML");
  cmd->add_flag("--quiet", args->quiet, "No live line (logs and summary only)");
  cmd->add_flag("--live", args->live, "Live line on stderr also while a command runs");
  cmd->add_option("command", args->command, "-- CMD ARGS...: run CMD, watch it, pass its exit code through");
  cmd->callback([args, exit_code, duration] {
    // Given, 0 reads as "no time at all", and ran until Ctrl-C: leaving it out says that.
    if (duration->count() > 0 && args->duration == 0) {
      throw UsageError("--duration must be > 0 seconds (got 0); leave it out to run until Ctrl-C");
    }
    *exit_code = run_monitor(*args);
  });
}

}  // namespace stoker::cli
