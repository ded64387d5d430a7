#include "train/torch/run/best_weights.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "train/torch/model/safetensors.h"

namespace stoker::train {

namespace {

// The figure an evaluation is judged by, and whether higher is better; nullopt without one.
std::optional<std::pair<std::string, double>> figure_of(const EvalResult& eval) {
  if (eval.samples == 0) return std::nullopt;
  if (!eval.mae.empty()) return std::make_pair(std::string("val_mae"), eval.mean_mae());
  if (eval.top1 >= 0) return std::make_pair(std::string("val_top1"), eval.top1);
  return std::nullopt;
}

bool is_mae(const std::string& metric) { return metric.ends_with("val_mae"); }
bool is_loss(const std::string& metric) { return metric.ends_with("val_loss"); }

bool better(const std::string& metric, double value, double than) {
  return is_mae(metric) ? value < than : value > than;
}

}  // namespace

BestWeights::BestWeights(const std::string& run_dir, bool resumed, bool averaged)
    : path_((std::filesystem::path(run_dir) / "model_best.safetensors").string()), prefix_(averaged ? "ema_" : "") {
  std::error_code ec;
  if (!resumed || !std::filesystem::exists(path_, ec)) return;
  try {
    const auto metadata = read_safetensors_metadata(path_);
    const auto metric = metadata.find("best_metric");
    const auto value = metadata.find("best_value");
    const auto epoch = metadata.find("best_epoch");
    if (metric == metadata.end() || value == metadata.end() || epoch == metadata.end()) return;
    metric_ = metric->second;
    value_ = std::stod(value->second);
    epoch_ = std::stoll(epoch->second);
  } catch (const std::exception&) {
    metric_.clear();  // unreadable: the next evaluation starts the record afresh
  }
}

bool BestWeights::offer(const torch::nn::Module& model, const EvalResult& eval, int64_t epoch,
                        const std::function<std::map<std::string, std::string>()>& metadata) {
  const auto figure = figure_of(eval);
  if (!figure || !std::isfinite(figure->second)) return false;
  const std::string metric = prefix_ + figure->first;
  const double value = figure->second;
  if (metric_ == metric && !better(metric, value, value_)) return false;
  std::map<std::string, std::string> entries = metadata();
  entries["best_metric"] = metric;
  entries["best_value"] = fmt::format("{:.17g}", value);
  entries["best_epoch"] = std::to_string(epoch);
  save_safetensors(model, path_, entries);
  metric_ = metric;
  value_ = value;
  epoch_ = epoch;
  return true;
}

std::string figure_name(const std::string& metric) {
  return (metric.starts_with("ema_") ? "EMA " : "") + std::string(is_loss(metric)  ? "val loss"
                                                                  : is_mae(metric) ? "val MAE"
                                                                                   : "val acc");
}

std::string figure_value_text(const std::string& metric, double value) {
  return is_mae(metric) || is_loss(metric) ? fmt::format("{:.4g}", value) : fmt::format("{:.1f} %", 100 * value);
}

std::string BestWeights::figure_name() const { return metric_.empty() ? "" : train::figure_name(metric_); }

std::string BestWeights::value_text() const { return metric_.empty() ? "" : figure_value_text(metric_, value_); }

nlohmann::json BestWeights::summary() const {
  if (metric_.empty()) return nullptr;
  return {{"epoch", epoch_}, {"metric", metric_}, {"value", value_}, {"weights", path_}};
}

}  // namespace stoker::train
