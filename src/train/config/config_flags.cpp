// ConfigFlags: the schema as CLI11 flags. Values are recorded as text when given and parsed by
// the same code as the YAML file, so both report errors alike and flags override only what the
// user typed.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "stoker/train/config.h"
#include "train/config/schema.h"

namespace stoker::train {

namespace {

using detail::Field;

std::string dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

// The flag names of a field without "--": its name, then its aliases, each dashed and (where
// different) as written.
std::vector<std::string> flag_names(const Field& field) {
  std::vector<std::string> names;
  auto add = [&names](const std::string& snake) {
    names.push_back(dashed(snake));
    if (snake != names.back()) names.push_back(snake);
  };
  add(field.name);
  for (const std::string& alias : field.aliases) add(alias);
  return names;
}

std::string help_of(const Field& field) {
  // amp's help already says what its alias, a flag without a value, means.
  if (std::holds_alternative<AmpMode TrainConfig::*>(field.member)) return field.help;
  std::string also;
  for (const std::string& alias : field.aliases) {
    also += (also.empty() ? "" : ", ") + ("--" + dashed(alias));
  }
  return also.empty() ? field.help : field.help + " (also " + also + ")";
}

}  // namespace

void ConfigFlags::add_to(CLI::App* app) {
  app->add_option("-c,--config", config_file_,
                  "YAML file of 'key: value' lines, keys as below with '_'; flags override it")
      ->type_name("FILE");
  const TrainConfig defaults;
  for (const Field& field : detail::fields()) {
    const std::string key = field.name;
    const bool amp = std::holds_alternative<AmpMode TrainConfig::*>(field.member);
    // One option per spelling, so that a message names the flag as typed; only the first
    // (dashed) spelling shows in --help, the others are hidden.
    bool first = true;
    for (const std::string& name : flag_names(field)) {
      const std::string flag = "--" + name;
      // amp's aliases (--use-amp, --use_amp) are flags: given alone they mean bf16, which needs
      // no loss scaling on CPU or CUDA. --use-amp=fp16 also works.
      const bool use_amp = amp && name != key;
      CLI::Option* option = nullptr;
      if (detail::is_bool(field)) {
        const bool snake = name.find('_') != std::string::npos;
        option = app->add_flag(flag + (snake ? ",!--no_" : ",!--no-") + name);
      } else if (use_amp) {
        option = app->add_flag(flag);
      } else {
        option = app->add_option(flag)->type_name(detail::type_name(field));
      }
      option->each([this, key, flag, use_amp](const std::string& text) {
        if (use_amp && (text == "true" || text == "false")) {
          record(key, flag, text == "true" ? "bf16" : "off");
        } else {
          record(key, flag, text);
        }
      });
      // Callbacks run as each flag is parsed, in command-line order, so the last one given
      // wins also across spellings: --batch-size 8 --batch_size 16 gives 16.
      option->trigger_on_parse()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
      if (first) {
        option->description(help_of(field));
        const std::string default_text = detail::field_text(field, defaults);
        if (!default_text.empty()) option->default_str(default_text);
      } else {
        option->group("");
      }
      first = false;
    }
  }
}

void ConfigFlags::record(const std::string& key, const std::string& flag, const std::string& text) {
  for (Given& given : given_) {
    if (given.key == key) {
      given = {key, flag, text};
      return;
    }
  }
  given_.push_back({key, flag, text});
}

void ConfigFlags::apply(TrainConfig* config) const {
  TrainConfig result = *config;  // a bad flag changes nothing
  for (const Given& given : given_) {
    detail::set_field(*detail::find_field(given.key), given.text, given.flag, &result);
  }
  *config = result;
}

std::string resumed_checkpoint(const std::string& resume) {
  namespace fs = std::filesystem;
  std::error_code ec;
  return fs::is_directory(resume, ec) ? (fs::path(resume) / "checkpoint.pt").string() : resume;
}

TrainConfig resolve_train_config(const ConfigFlags& flags) {
  const auto layered = [&flags](const std::string& run_config) {
    TrainConfig config;
    if (!run_config.empty()) apply_yaml_file(run_config, &config);
    if (!flags.config_file().empty()) apply_yaml_file(flags.config_file(), &config);
    flags.apply(&config);
    return config;
  };
  TrainConfig config = layered("");
  if (config.resume.empty()) return config;
  // The run's folder is the checkpoint's.
  const std::filesystem::path saved =
      std::filesystem::path(resumed_checkpoint(config.resume)).parent_path() / "config.yaml";
  std::error_code ec;
  return std::filesystem::is_regular_file(saved, ec) ? layered(saved.string()) : config;
}

}  // namespace stoker::train
