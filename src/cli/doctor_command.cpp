// `stoker doctor [train options]`: measure loader, model and both; say which limits.
#include <memory>

#include "commands.h"
#include "stoker/train/config.h"
#include "stoker/train/doctor.h"
#include "torch_handoff.h"

namespace stoker::cli {

void add_doctor_command(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<train::ConfigFlags>();
  auto options = std::make_shared<train::DoctorOptions>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Measure the loader alone, the model alone and both together; name the bottleneck and rank fixes "
      "(takes the same options as `stoker train`)");
  flags->add_to(cmd);
  cmd->add_option("--seconds", options->seconds, "Seconds per measurement")->capture_default_str();
  cmd->add_flag("--json", options->json, "One JSON object instead of the report");
  cmd->add_flag("--find-batch-size", options->find_batch_size,
                "Also find the largest batch that fits and the fastest (a suggestion; never applied)");
  cmd->callback([flags, options, exit_code] {
    const train::TrainConfig config = train::resolve_train_config(*flags);
    train::validate(config);  // before libtorch loads
    continue_in_torch_program();
    *exit_code = train::run_doctor(config, *options);
  });
}

}  // namespace stoker::cli
