#include "train/torch/run/exported_weights.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "stoker/core/error.h"
#include "stoker/core/json_text.h"
#include "stoker/core/numbers.h"
#include "train/config/schema.h"
#include "train/torch/model/safetensors.h"
#include "train/torch/run/best_weights.h"

namespace stoker::train {

namespace fs = std::filesystem;

std::string exported_weights_file(const std::string& given) {
  std::error_code ec;
  if (fs::is_directory(given, ec)) {
    for (const char* name : {"model_best.safetensors", "model.safetensors"}) {
      const fs::path path = fs::path(given) / name;
      if (fs::exists(path, ec)) return path.string();
    }
    throw DataError(given +
                    " holds neither model_best.safetensors nor model.safetensors; give the folder of a "
                    "finished stoker train run, or a .safetensors file it wrote");
  }
  if (!fs::exists(given, ec)) {
    throw DataError("weights " + given +
                    " do not exist; give a .safetensors file that stoker train wrote, or its run folder");
  }
  return given;
}

ExportedWeights read_exported_weights(const std::string& path) {
  const std::map<std::string, std::string> m = read_safetensors_metadata(path);
  const auto need = [&](const char* key) -> const std::string& {
    const auto it = m.find(key);
    if (it == m.end()) {
      throw DataError(
          fmt::format("{} has no '{}' in its metadata, so stoker train did not write it; give the "
                      "model.safetensors, model_best.safetensors or model_ema.safetensors of a run",
                      path, key));
    }
    return it->second;
  };
  const auto text_or = [&](const char* key, const std::string& otherwise) {
    const auto it = m.find(key);
    return it == m.end() ? otherwise : it->second;
  };
  ExportedWeights w;
  w.path = path;
  w.model = need("model");
  try {
    // The objective's keys are config keys, written with to_string: read back as a config
    // file's are, so a value no config takes is a line naming the key.
    TrainConfig written;
    const auto set = [&](const char* key, const std::string& text) {
      detail::set_field(*detail::find_field(key), text, fmt::format("'{}'", key), &written);
    };
    set("task", need("task"));
    set("loss", text_or("loss", "auto"));  // files from before it was recorded: the task's default
    set("label_smoothing", text_or("label_smoothing", "0"));
    const bool classes = written.task != TaskKind::kRegression;
    w.objective.task = classes ? TaskKind::kClassification : TaskKind::kRegression;
    w.objective.loss = written.loss != LossKind::kAuto ? written.loss
                       : classes                       ? LossKind::kCrossEntropy
                                                       : LossKind::kMse;
    w.objective.label_smoothing = written.label_smoothing;
    w.objective.outputs = std::stoll(need("outputs"));
    w.class_names = parse_json(need("class_names")).get<std::vector<std::string>>();
    const nlohmann::json inputs = parse_json(need("inputs"));
    w.inputs = data::parse_transforms(inputs.at("transform").get<std::string>());
    w.inputs.dtype = data::DType::kFloat32;
    if (!inputs.at("features").is_null()) w.features = inputs.at("features").get<int>();
    if (const auto& standardize = inputs.at("standardize"); !standardize.is_null()) {
      w.inputs.features.mean = standardize.at("mean").get<std::vector<float>>();
      w.inputs.features.std = standardize.at("std").get<std::vector<float>>();
    }
    if (m.count("ema_decay")) {
      w.note = fmt::format(" · moving average (decay {:g}, {} updates)", std::stod(m.at("ema_decay")),
                           grouped(std::stod(text_or("ema_updates", "0"))));
    }
    if (m.count("best_epoch")) {
      const std::string& metric = need("best_metric");
      w.note += fmt::format(" · best epoch {} ({} {})", need("best_epoch"), figure_name(metric),
                            figure_value_text(metric, std::stod(need("best_value"))));
    }
  } catch (const UsageError& e) {  // a config key's value or the input chain: the line names it
    throw DataError(fmt::format("{}: its metadata does not parse: {}", path, e.what()));
  } catch (const std::exception& e) {  // nlohmann's and std::sto*'s
    throw DataError(fmt::format("{}: its metadata is not what stoker train writes ({})", path, e.what()));
  }
  return w;
}

}  // namespace stoker::train
