// YAML in and out, and the range checks, for stoker/train/config.h.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/core/suggest.h"
#include "stoker/core/user_files.h"
#include "stoker/data/formats.h"
#include "stoker/data/loader_keys.h"
#include "stoker/train/config.h"
#include "train/config/schema.h"

namespace stoker::train {

namespace {

namespace fs = std::filesystem;
using detail::Field;

// A config is a page of YAML; a larger "config" is the wrong file (or /dev/zero).
constexpr uint64_t kMaxConfigBytes = 1 << 20;

std::string read_config_file(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw UsageError("config file " + path + " does not exist");
  if (fs::is_directory(status)) {
    throw UsageError("config file " + path + " is a directory; give the path of a .yaml file");
  }
  return read_small_file(path, "config file", kMaxConfigBytes);
}

// How a node that is not the expected scalar looks, for messages.
std::string describe(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  if (node.IsNull()) return "nothing";
  return "'" + node.Scalar() + "'";
}

[[noreturn]] void unknown_key(const std::string& where, const std::string& name) {
  const std::string suggestion = detail::suggest_key(name);
  if (suggestion.empty()) {
    throw UsageError(fmt::format("{}unknown key '{}' (`stoker train --help` lists the keys)", where, name));
  }
  throw UsageError(fmt::format("{}unknown key '{}' — did you mean '{}'?", where, name, suggestion));
}

// Quotes a string value only where YAML needs it ("", "off", "a: b", " x").
std::string yaml_string(const std::string& value) {
  YAML::Emitter out;
  out << value;
  return out.c_str();
}

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> keys = [] {
    const TrainConfig defaults;
    std::vector<ConfigKey> result;
    for (const Field& field : detail::fields()) {
      result.push_back({field.name, field.help, detail::field_text(field, defaults)});
    }
    return result;
  }();
  return keys;
}

void apply_yaml_file(const std::string& path, TrainConfig* config) {
  const std::string text = read_config_file(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const std::string line = e.mark.is_null() ? "" : fmt::format(":{}", e.mark.line + 1);
    throw UsageError(fmt::format("{}{}: not valid YAML: {}", path, line, e.msg));
  }
  if (root.IsNull()) return;  // empty, or only comments
  if (!root.IsMap()) {
    throw UsageError(
        fmt::format("{}:{}: a config file is 'key: value' lines (got {})", path, root.Mark().line + 1, describe(root)));
  }

  // Into a copy, so that a file with an error changes nothing.
  TrainConfig result = *config;
  // yaml-cpp keeps both entries of a repeated key; say so rather than let one silently win.
  std::map<std::string, int> first_line;
  for (const auto& entry : root) {
    const YAML::Node key = entry.first;  // copies are handles; `it->` would dangle
    const YAML::Node value = entry.second;
    const int line = key.Mark().line + 1;
    const std::string where = fmt::format("{}:{}: ", path, line);
    if (!key.IsScalar()) {
      throw UsageError(where + "a key must be a name (got " + describe(key) + ")");
    }
    const std::string& name = key.Scalar();
    const Field* field = detail::find_field(name);
    if (field == nullptr) unknown_key(where, name);
    if (const auto [first, added] = first_line.emplace(name, line); !added) {
      throw UsageError(
          fmt::format("{}key '{}' is given twice (also on line {}); keep one", where, name, first->second));
    }
    const std::string what = fmt::format("{}key '{}'", where, name);
    if (value.IsNull() && detail::is_string(*field)) {
      detail::set_field(*field, "", what, &result);  // `resume:` or `resume: ~` means none
    } else if (value.IsSequence() && (name == "transforms" || name == "val_transforms" || name == "lr_milestones")) {
      // A chain written as a YAML list, one transform per item; milestones as [30, 60, 80].
      const bool epochs = name == "lr_milestones";
      std::string chain;
      for (const YAML::Node& item : value) {
        if (!item.IsScalar()) {
          throw UsageError(fmt::format("{}:{}: key '{}' lists {}, one per item, e.g. {} (got {})", path,
                                       item.Mark().line + 1, name, epochs ? "epochs" : "transforms",
                                       epochs ? "[30, 60, 80]" : "'- Resize(256)'", describe(item)));
        }
        chain += (chain.empty() ? "" : ", ") + item.Scalar();
      }
      detail::set_field(*field, chain, what, &result);
    } else if (!value.IsScalar()) {
      throw UsageError(fmt::format("{} must be {} (got {})", what, detail::expected_phrase(*field), describe(value)));
    } else {
      detail::set_field(*field, value.Scalar(), what, &result);
    }
  }
  *config = result;
}

std::string to_yaml(const TrainConfig& config) {
  std::string text;
  for (const Field& field : detail::fields()) {
    const std::string value = detail::field_text(field, config);
    text += field.name + ": " + (detail::is_string(field) ? yaml_string(value) : value) + "\n";
  }
  return text;
}

int64_t warmup_steps_of(const TrainConfig& c, int64_t steps_per_epoch) {
  return c.warmup_steps > 0 ? c.warmup_steps : static_cast<int64_t>(c.warmup_epochs) * steps_per_epoch;
}

std::vector<int> lr_milestones_of(const TrainConfig& c) {
  std::vector<int> epochs;
  std::string_view rest = c.lr_milestones;
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(", ");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::string_view item = rest.substr(0, rest.find_first_of(", "));
    rest.remove_prefix(item.size());
    int epoch = 0;
    const auto [stop, error] = std::from_chars(item.data(), item.data() + item.size(), epoch);
    if (error != std::errc() || stop != item.data() + item.size() || epoch < 1) {
      throw UsageError(
          fmt::format("lr_milestones must be epochs >= 1 separated by commas, e.g. '30, 60, 80' (got "
                      "'{}' in '{}')",
                      item, c.lr_milestones));
    }
    epochs.push_back(epoch);
  }
  return epochs;
}

AveragePlan average_plan(const TrainConfig& c, int processes, int64_t steps_per_epoch) {
  AveragePlan plan;
  plan.on = c.ema_decay > 0 || c.model_ema;
  if (!plan.on) return plan;
  if (!c.model_ema) {
    plan.decay = c.ema_decay;
    plan.every_steps = c.ema_steps == kAuto ? 1 : c.ema_steps;
    return plan;
  }
  constexpr double kTorchvisionDecay = 0.99998;  // its --model-ema-decay default
  constexpr int kTorchvisionSteps = 32;          // its --model-ema-steps default
  plan.every_steps = c.ema_steps == kAuto ? kTorchvisionSteps : c.ema_steps;
  const double samples_per_update =
      static_cast<double>(processes) * c.batch_size * c.accumulation_steps * plan.every_steps;
  const double alpha = (1 - (c.ema_decay > 0 ? c.ema_decay : kTorchvisionDecay)) * samples_per_update / c.epochs;
  plan.decay = 1 - std::min(1.0, alpha);
  plan.ramp = false;
  plan.copy_until_step = warmup_steps_of(c, steps_per_epoch);
  return plan;
}

void check_task_and_loss(TaskKind task, LossKind loss, double label_smoothing) {
  const bool regression_loss = loss == LossKind::kMse || loss == LossKind::kL1 || loss == LossKind::kSmoothL1;
  if (task == TaskKind::kClassification && regression_loss) {
    throw UsageError(
        fmt::format("loss {} is for regression; a classification task takes loss "
                    "cross_entropy (or auto)",
                    to_string(loss)));
  }
  if (task == TaskKind::kRegression && loss == LossKind::kCrossEntropy) {
    throw UsageError(
        "loss cross_entropy is for classification; a regression task takes loss mse, l1, "
        "smooth_l1 (or auto)");
  }
  if (task == TaskKind::kRegression && label_smoothing > 0) {
    throw UsageError(
        fmt::format("label_smoothing applies to classification only (got {} with task "
                    "regression); set it to 0",
                    label_smoothing));
  }
}

namespace {

// The keys of one schedule given with another would be silently unused: each says whose it is.
void check_schedule_keys(const TrainConfig& c) {
  const TrainConfig defaults;
  const auto check = [](bool ok, const std::string& message) {
    if (!ok) throw UsageError(message);
  };
  const std::vector<int> milestones = lr_milestones_of(c);
  if (c.schedule == ScheduleKind::kMultiStep) {
    check(!milestones.empty(),
          "schedule multistep needs lr_milestones, the epochs at which lr is multiplied by "
          "step_gamma, e.g. --lr-milestones 30,60,80");
    for (size_t i = 1; i < milestones.size(); ++i) {
      check(milestones[i] > milestones[i - 1], fmt::format("lr_milestones must increase (got {} after {} in '{}')",
                                                           milestones[i], milestones[i - 1], c.lr_milestones));
    }
  } else {
    check(milestones.empty(), fmt::format("lr_milestones '{}' are schedule multistep's, and the schedule is {}; set "
                                          "schedule multistep or leave lr_milestones out",
                                          c.lr_milestones, to_string(c.schedule)));
  }
  // Each schedule's own keys, by name: given means the value differs from the default.
  constexpr std::array<std::pair<std::string_view, ScheduleKind>, 17> kOwnKeys{
      {{"pct_start", ScheduleKind::kOneCycle},
       {"div_factor", ScheduleKind::kOneCycle},
       {"final_div_factor", ScheduleKind::kOneCycle},
       {"anneal_strategy", ScheduleKind::kOneCycle},
       {"three_phase", ScheduleKind::kOneCycle},
       {"cycle_momentum", ScheduleKind::kOneCycle},
       {"base_momentum", ScheduleKind::kOneCycle},
       {"max_momentum", ScheduleKind::kOneCycle},
       {"plateau_factor", ScheduleKind::kPlateau},
       {"plateau_patience", ScheduleKind::kPlateau},
       {"plateau_threshold", ScheduleKind::kPlateau},
       {"plateau_threshold_mode", ScheduleKind::kPlateau},
       {"plateau_cooldown", ScheduleKind::kPlateau},
       {"plateau_metric", ScheduleKind::kPlateau},
       {"poly_power", ScheduleKind::kPolynomial},
       {"restart_epochs", ScheduleKind::kCosineRestarts},
       {"restart_mult", ScheduleKind::kCosineRestarts}}};
  for (const auto& [key, owner] : kOwnKeys) {
    const detail::Field& field = *detail::find_field(key);
    const bool given = detail::field_text(field, c) != detail::field_text(field, defaults);
    check(!given || owner == c.schedule,
          fmt::format("{} is schedule {}'s, and the schedule is {}; set schedule {} or leave {} out", key,
                      to_string(owner), to_string(c.schedule), to_string(owner), key));
  }
  if (c.schedule != ScheduleKind::kOneCycle) return;
  check(!c.three_phase || c.pct_start < 0.5,
        fmt::format("pct_start must be below 0.5 with three_phase (got {}): the rise and the fall back each take "
                    "pct_start of the run",
                    c.pct_start));
  check(c.base_momentum >= 0 && c.base_momentum <= c.max_momentum && c.max_momentum < 1,
        fmt::format("base_momentum and max_momentum must satisfy 0 <= base_momentum <= max_momentum < 1 (got {} and "
                    "{}); OneCycleLR's defaults are 0.85 and 0.95",
                    c.base_momentum, c.max_momentum));
  check(c.warmup_steps == 0 && c.warmup_epochs == 0,
        fmt::format("schedule onecycle rises from lr / div_factor over pct_start of the run itself, and a warmup "
                    "({}) is set too; leave the warmup out, or set pct_start",
                    c.warmup_steps > 0 ? fmt::format("warmup_steps {}", c.warmup_steps)
                                       : fmt::format("warmup_epochs {}", c.warmup_epochs)));
  check(!c.cycle_momentum || c.momentum == defaults.momentum,
        fmt::format("momentum {} is not used with schedule onecycle and cycle_momentum, which moves the momentum "
                    "between max_momentum and base_momentum; set those, or cycle_momentum false to keep momentum",
                    c.momentum));
}

}  // namespace

void validate(const TrainConfig& c) {
  auto check = [](bool ok, const std::string& message) {
    if (!ok) throw UsageError(message);
  };

  if (std::find(kModelNames.begin(), kModelNames.end(), c.model) == kModelNames.end()) {
    const std::string_view close = closest(c.model, kModelNames);
    throw UsageError(fmt::format("model must be one of {} (got '{}'){}", model_names_text(), c.model,
                                 close.empty() ? "" : fmt::format("; did you mean '{}'?", close)));
  }
  check(!c.data.empty(), "data must not be empty: give " + data::data_formats_text());
  // num_workers 0, which PyTorch users write for "load in the main process", gets its own hint.
  if (c.num_workers == 0) {
    const data::LoaderKeySpec& workers = data::loader_key(data::LoaderKey::kWorkers);
    throw UsageError(fmt::format(
        "num_workers must be between {} and {} (got 0); stoker always loads on worker threads: {} is the fewest, "
        "or auto",
        workers.lo, workers.hi, workers.lo));
  }
  // Each key's own range, declared with the key (schema.cpp; the loader's keys in
  // stoker/data/loader_keys.h); the rules below span keys.
  for (const detail::Field& field : detail::fields()) {
    if (std::string message = detail::range_message(field, c); !message.empty()) throw UsageError(message);
  }
  check(c.val_split == 0 || c.val_data.empty(),
        fmt::format("val_split {} holds out part of the training data for validation, and val_data {} is validation "
                    "data too; give one of them",
                    c.val_split, c.val_data));
  check(c.norm_weight_decay == kAuto || (c.norm_weight_decay >= 0 && std::isfinite(c.norm_weight_decay)),
        fmt::format("norm_weight_decay must be a finite number >= 0, or auto for weight_decay's value (got {})",
                    c.norm_weight_decay));
  check(!c.nesterov || optimizer_spec(c.optimizer).takes_nesterov,
        fmt::format("nesterov applies to {} (optimizer is {}); leave nesterov out, or set optimizer sgd",
                    detail::optimizer_names_where(&OptimizerSpec::takes_nesterov), to_string(c.optimizer)));
  check(!(c.nesterov && optimizer_spec(c.optimizer).takes_nesterov && c.momentum == 0),
        "nesterov needs momentum > 0 (got momentum 0); set momentum (e.g. 0.9) or nesterov: false");
  check(c.warmup_steps == 0 || c.warmup_epochs == 0,
        fmt::format("warmup_steps {} and warmup_epochs {} both set the warmup; give one", c.warmup_steps,
                    c.warmup_epochs));
  check(!(c.warmup_method == "constant" && c.warmup_decay == 0),
        "warmup_method constant with warmup_decay 0 holds the learning rate at 0 through the warmup; set "
        "warmup_decay (torchvision's default is 0.01) or warmup_method linear");
  check(c.lr_min >= 0 && c.lr_min <= c.lr,
        fmt::format("lr_min must be in [0, lr] = [0, {}] (got {}); it is where the cosine schedule ends", c.lr,
                    c.lr_min));
  check(c.lr_min == 0 || c.schedule == ScheduleKind::kCosine || c.schedule == ScheduleKind::kPlateau ||
            c.schedule == ScheduleKind::kCosineRestarts,
        fmt::format("lr_min {} is where the cosine schedule ends (cosine_restarts' bottom, plateau's floor), and the "
                    "schedule is {}; set schedule cosine or leave lr_min out",
                    c.lr_min, to_string(c.schedule)));
  check_schedule_keys(c);
  check_task_and_loss(c.task, c.loss, c.label_smoothing);
  check(c.task != TaskKind::kRegression || (c.mixup_alpha == 0 && c.cutmix_alpha == 0),
        "mixup_alpha and cutmix_alpha mix class targets and apply to classification only (task is regression); "
        "set them to 0");
  check(!c.output_dir.empty(), "output_dir must not be empty (use . for the current directory)");

  const std::string_view device = c.device;
  const bool cuda_n = device.starts_with("cuda:") && device.size() > 5 && device.size() <= 8 &&
                      device.find_first_not_of("0123456789", 5) == std::string_view::npos;
  if (device != "auto" && device != "cpu" && device != "cuda" && !cuda_n) {
    std::string hint;
    if (device == "gpu" || device.starts_with("gpu:")) {
      hint = fmt::format("; did you mean 'cuda{}'?", device.substr(3));
    }
    throw UsageError(fmt::format("device must be auto, cpu, cuda or cuda:N (got '{}'){}", device, hint));
  }
}

}  // namespace stoker::train
