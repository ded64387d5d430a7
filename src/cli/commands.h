// Subcommands of the `stoker` binary. Each returns the process exit code; errors become one
// "error: ..." line on stderr (exit 2 for usage errors, 1 for run failures).
#pragma once

#include <CLI/CLI.hpp>

namespace stoker::cli {

// Parses argv, runs the chosen subcommand, maps every exception to a message + exit code.
int run_main(int argc, char** argv);

// Registers `stoker bench loader` and `stoker bench generate` on `app`; the selected one
// runs during app.parse() and stores its exit code in *exit_code.
void add_bench_commands(CLI::App& app, int* exit_code);

// Registers `stoker prepare` (a copy of a dataset with restart-marked JPEGs).
void add_prepare_command(CLI::App& app, int* exit_code);

// Registers `stoker monitor`.
void add_monitor_command(CLI::App& app, int* exit_code);

// Registers `stoker train` (explains itself when built without libtorch).
void add_train_command(CLI::App& app, int* exit_code);

// Registers `stoker evaluate` (exported weights scored on a dataset; explains itself when
// built without libtorch).
void add_evaluate_command(CLI::App& app, int* exit_code);

// Registers `stoker check` (system report, microbenchmarks, suggestions, epoch estimate).
void add_check_command(CLI::App& app, int* exit_code);

// Registers `stoker scan` (every sample of a dataset read and checked once).
void add_scan_command(CLI::App& app, int* exit_code);

// Registers `stoker report` (a run folder or a monitor log as one self-contained HTML page).
void add_report_command(CLI::App& app, int* exit_code);

// Registers `stoker doctor` (the train options, plus --seconds, --json, --find-batch-size).
void add_doctor_command(CLI::App& app, int* exit_code);

// Registers `stoker help` (the data formats and transforms, or a command's --help). Register it
// last: it looks the other commands up on `app`.
void add_help_command(CLI::App& app, int* exit_code);

}  // namespace stoker::cli
