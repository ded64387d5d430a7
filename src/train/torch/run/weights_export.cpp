// A finished run's weight files and closing lines (weights_export.h).
#include "train/torch/run/weights_export.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "stoker/core/json_text.h"
#include "stoker/core/shell_quote.h"
#include "train/torch/model/safetensors.h"

namespace stoker::train {

namespace {

// The weights alone as `run_dir`/`name`, for other tools (torchvision's names for the ResNets
// and EfficientNets), with `metadata`; returns the path.
std::string export_weights(Network& network, const std::string& run_dir, const char* name,
                           const std::map<std::string, std::string>& metadata) {
  std::string path = (std::filesystem::path(run_dir) / name).string();
  save_safetensors(network, path, metadata);
  return path;
}

// The line that lists what a finished run saved.
void print_saved(const RunStart& start, bool averaged, const nlohmann::json& best) {
  const std::string best_text =
      best.is_null() ? "" : fmt::format(" · model_best.safetensors (epoch {})", best["epoch"].get<int64_t>());
  std::printf("saved      %s (atomic) · model.safetensors%s%s · metrics.csv · config.yaml · summary.json\n",
              start.checkpoint_path.c_str(), averaged ? " · model_ema.safetensors" : "", best_text.c_str());
}

}  // namespace

WeightsMetadata::WeightsMetadata(const TrainConfig& cfg, const TrainSetup& setup, const data::TransformSpec& inputs)
    : common_{{"model", cfg.model},
              {"task", to_string(setup.objective.task)},
              {"loss", to_string(setup.objective.loss)},
              {"label_smoothing", fmt::format("{:.17g}", setup.objective.label_smoothing)},
              {"outputs", std::to_string(setup.objective.outputs)},
              {"class_names", dump_json(nlohmann::json(setup.train_source->class_names()))},
              {"inputs", dump_json(inputs_json(inputs))}} {}

std::map<std::string, std::string> WeightsMetadata::model(int64_t global_step) const {
  std::map<std::string, std::string> entries = common_;
  entries["global_step"] = std::to_string(global_step);
  return entries;
}

std::map<std::string, std::string> WeightsMetadata::averaged(int64_t global_step, const ModelEma& ema) const {
  std::map<std::string, std::string> entries = model(global_step);
  entries["ema_decay"] = fmt::format("{:.17g}", ema.decay());
  entries["ema_updates"] = std::to_string(ema.updates());
  return entries;
}

int export_run(const TrainConfig& cfg, bool json_summary, TrainSetup& setup, const RunStart& start,
               const WeightsMetadata& metadata, ModelEma* ema, RunRecords& records, const nlohmann::json& best,
               const TensorBoardLog* tensorboard, int64_t global_step, int exit_code) {
  std::optional<std::string> weights, averaged;
  if (exit_code == 0) {
    weights = export_weights(*setup.model, start.run_dir, "model.safetensors", metadata.model(global_step));
    if (ema != nullptr) {
      averaged =
          export_weights(ema->network(), start.run_dir, "model_ema.safetensors", metadata.averaged(global_step, *ema));
    }
  }
  if (ema != nullptr) records.set_ema(ema->decay(), ema->updates(), averaged);
  records.set_best(best);
  const nlohmann::json& summary = records.finish(weights, global_step, exit_code);
  if (exit_code == 0) print_saved(start, ema != nullptr, best);
  if (tensorboard != nullptr && !tensorboard->path().empty()) {
    std::printf("TensorBoard: tensorboard --logdir %s\n", shell_quote(cfg.output_dir).c_str());
  }
  std::printf("report: stoker report %s\n", shell_quote(start.run_dir).c_str());
  if (json_summary) std::printf("%s\n", dump_json(summary).c_str());
  return exit_code;
}

}  // namespace stoker::train
