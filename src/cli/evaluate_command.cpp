// `stoker evaluate WEIGHTS --data PATH`: the weights a run exported, scored on a dataset.
#include <memory>

#include "commands.h"
#include "stoker/core/error.h"
#include "stoker/train/evaluation.h"
#include "torch_handoff.h"

namespace stoker::cli {

void add_evaluate_command(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<train::EvaluateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "evaluate",
      "Score a trained model (a run folder or the .safetensors file it wrote) on a dataset, fed as it "
      "was validated; optionally write one prediction per sample");
  cmd->add_option("weights,--weights", options->weights,
                  "A run folder (its model_best.safetensors, else model.safetensors) or a .safetensors file that "
                  "stoker train wrote");
  cmd->add_option("--data", options->data,
                  "Dataset to score, read as --val-data is: its own test split where it has one (IDX t10k, an "
                  "archive's x_val/x_test), else all of it");
  cmd->add_option("--batch-size,--batch_size", options->batch_size, "Samples per batch")->capture_default_str();
  cmd->add_option("--workers,--num-workers,--num_workers", options->workers, "Loader worker threads")
      ->capture_default_str();
  cmd->add_option("--device", options->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--predictions", options->predictions,
                  "Write one row per sample to this CSV file: sample, target, predicted class and its probability "
                  "(or each target and prediction for regression)");
  cmd->add_flag("--json", options->json, "One JSON object instead of the lines");
  cmd->callback([options, exit_code] {
    if (options->weights.empty()) {
      throw UsageError(
          "evaluate needs the weights: a run folder or a .safetensors file that stoker train wrote "
          "(stoker evaluate runs/<run> --data <dataset>)");
    }
    if (options->data.empty()) {
      throw UsageError("evaluate needs --data: the dataset to score (a folder, an IDX directory, a feature file)");
    }
    continue_in_torch_program();
    *exit_code = train::run_evaluation(*options);
  });
}

}  // namespace stoker::cli
