#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "commands.h"
#include "foreign_flags.h"
#include "help_formatter.h"
#include "stoker/core/error.h"

namespace stoker::cli {

namespace {

constexpr const char* kVersion = "0.1.0";

int fail(const char* message, int code) {
  std::fprintf(stderr, "error: %s\n", message);
  return code;
}

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{"stoker — keeps training accelerators fed", "stoker"};
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands copy it
  app.set_version_flag("--version", std::string("stoker ") + kVersion);
  app.require_subcommand(1);
  int exit_code = 0;
  add_bench_commands(app, &exit_code);
  add_prepare_command(app, &exit_code);
  add_scan_command(app, &exit_code);
  add_monitor_command(app, &exit_code);
  add_report_command(app, &exit_code);
  add_train_command(app, &exit_code);
  add_evaluate_command(app, &exit_code);
  add_doctor_command(app, &exit_code);
  add_check_command(app, &exit_code);
  add_help_command(app, &exit_code);
  try {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
      found = found || (argc > 1 && sub->get_name() == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !found) {
      throw UsageError(std::string("unknown command '") + argv[1] + "' (commands: " + known + "; see `stoker --help`)");
    }
    // `--` starts the command that `monitor` runs; with nothing after it, monitor would watch
    // nothing until Ctrl-C, and the other commands take no command at all.
    if (argc > 2 && std::string(argv[argc - 1]) == "--") {
      throw UsageError(
          "'--' must be followed by a command to run (e.g. `stoker monitor -- python "
          "train.py`); nothing follows it");
    }
    app.parse(argc, argv);  // runs the selected subcommand's callback
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::string message = e.what();
    if (const std::string hint = foreign_flag_hint(argc, argv); !hint.empty()) message += "; " + hint;
    // A command's flags are in its own help (an unknown command was refused above).
    const std::string help =
        argc > 1 && argv[1][0] != '-' ? std::string("stoker ") + argv[1] + " --help" : std::string("stoker --help");
    return fail((message + " (see `" + help + "`)").c_str(), 2);
  } catch (const Error& e) {
    return fail(e.what(), e.exit_code());
  } catch (const std::bad_alloc&) {
    return fail("out of memory; lower --batch-size, --prefetch or --workers", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
  return exit_code;
}

}  // namespace stoker::cli
