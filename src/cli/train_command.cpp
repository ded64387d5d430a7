// `stoker train`: a YAML config (--config) plus flags that override it (on --resume, the
// run's own config.yaml under both), then the trainer.
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "commands.h"
#include "stoker/core/process.h"
#include "stoker/core/error.h"
#include "local_launch.h"
#include "stoker/train/config.h"
#include "stoker/train/trainer.h"

namespace stoker::cli {

namespace {

struct TrainCliOptions {
  bool no_progress = false;
  bool json_summary = false;
};

}  // namespace

void add_train_command(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<train::ConfigFlags>();
  auto options = std::make_shared<TrainCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model (default: the Fashion-MNIST CNN on Debian's dataset-fashion-mnist)");
  flags->add_to(cmd);
  cmd->add_flag("--no-progress", options->no_progress, "No progress line (epoch lines only)");
  cmd->add_flag("--json-summary", options->json_summary, "Print summary.json at the end");
  cmd->callback([flags, options, exit_code] {
    const train::TrainConfig config = train::resolve_train_config(*flags);
    // --nproc-per-node N starts the group here; its processes (WORLD_SIZE > 1, as torchrun's
    // are) train. WORLD_SIZE unset, empty or 1 is a process alone, as the trainer reads it.
    const char* world = std::getenv("WORLD_SIZE");
    const bool alone = world == nullptr || std::string_view(world).empty() || std::string_view(world) == "1";
    if (config.nproc_per_node > 1 && alone) {
      // Refused here, once, rather than by each of the processes it would start.
      if (const std::string why = train::data_parallel_unavailable_reason(); !why.empty()) throw UsageError(why);
      if (const int cores = usable_cores(); config.nproc_per_node > cores) {
        throw UsageError(fmt::format("--nproc-per-node {} would start {} training processes on {} core{}; each needs "
                                     "at least one: give --nproc-per-node {} or fewer",
                                     config.nproc_per_node, config.nproc_per_node, cores, cores == 1 ? "" : "s",
                                     cores));
      }
      *exit_code = launch_local_processes(config.nproc_per_node, config.threads);
      return;
    }
    train::TrainUi ui;
    ui.progress = !options->no_progress;
    ui.json_summary = options->json_summary;
    *exit_code = train::run_training(config, ui);
  });
}

}  // namespace stoker::cli
