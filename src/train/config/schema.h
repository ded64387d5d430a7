// The schema behind stoker/train/config.h: one row per TrainConfig member with its name, help
// and aliases, and text conversion shared by the YAML file, the flags and to_yaml().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "stoker/train/config.h"

namespace stoker::train::detail {

using Member = std::variant<std::string TrainConfig::*, int TrainConfig::*, int64_t TrainConfig::*,
                            uint64_t TrainConfig::*, double TrainConfig::*, bool TrainConfig::*, AmpMode TrainConfig::*,
                            OptimizerKind TrainConfig::*, ScheduleKind TrainConfig::*, TaskKind TrainConfig::*,
                            LossKind TrainConfig::*, CacheKind TrainConfig::*, data::DecodeMode TrainConfig::*>;

// The values a key allows: a number key's range, or the words a string key takes. validate()
// checks every key's with range_message(); NaN passes no range. A key that takes "auto" is
// checked only when it is not auto.
struct Range {
  enum class Kind { kNone, kAtLeast, kFiniteAtLeast, kAbove, kFiniteAbove, kBetween, kInterval, kOneOf };
  Kind kind = Kind::kNone;
  double min = 0;
  double max = 0;
  bool min_open = false;             // kInterval: (min, ... rather than [min, ...
  bool max_open = false;             // kInterval: ..., max) rather than ..., max]
  std::string hint{};                // appended to the message: "; 0 = automatic"
  std::vector<std::string> words{};  // kOneOf: the values, in the order messages list them

  // "<key> must be >= 1 (got 0)<hint>"
  static Range at_least(double min, std::string hint = "") {
    return {Kind::kAtLeast, min, 0, false, false, std::move(hint)};
  }
  // "<key> must be a finite number >= 0 (got inf)<hint>"
  static Range finite_at_least(double min, std::string hint) {
    return {Kind::kFiniteAtLeast, min, 0, false, false, std::move(hint)};
  }
  // "<key> must be > 0 (got 0)"
  static Range above(double min) { return {Kind::kAbove, min}; }
  // "<key> must be a finite number > 0 (got 0)<hint>"
  static Range finite_above(double min, std::string hint) {
    return {Kind::kFiniteAbove, min, 0, false, false, std::move(hint)};
  }
  // "<key> must be between 1 and 1024 (got 0)<hint>"
  static Range between(double min, double max, std::string hint = "") {
    return {Kind::kBetween, min, max, false, false, std::move(hint)};
  }
  // "<key> must be in [0, 1) (got 1)<hint>"
  static Range in(double min, double max, bool min_open, bool max_open, std::string hint = "") {
    return {Kind::kInterval, min, max, min_open, max_open, std::move(hint)};
  }
  // A string key: "<key> must be one of rel, abs (got 'x')". --help shows them as its type,
  // {rel,abs}.
  static Range one_of(std::vector<std::string> words) {
    return {Kind::kOneOf, 0, 0, false, false, "", std::move(words)};
  }
};

struct Field {
  std::string name;  // the YAML key, snake_case
  Member member;
  std::string help;
  // Other names the flags accept (snake_case, like `name`). A YAML file gets a did-you-mean
  // for them instead: the saved config.yaml only ever uses `name`, so files stay uniform.
  std::vector<std::string> aliases;
  // A number key that also takes the word "auto", stored as kAuto (-1).
  bool takes_auto = false;
  Range range{};
};

// "sgd or rmsprop": the names of the optimizer table's rows whose `flag` is set.
std::string optimizer_names_where(bool OptimizerSpec::*flag);

// Every key, in the order of TrainConfig.
const std::vector<Field>& fields();
// The field with this exact YAML name, or nullptr.
const Field* find_field(std::string_view name);
// For an unknown key: the key it most likely means (alias, other spelling or typo), or "".
std::string suggest_key(std::string_view name);

bool is_bool(const Field& field);
bool is_string(const Field& field);
// What a value must be, for messages: "an integer", "a number", "true or false",
// "one of off, bf16, fp16" (an enum, or a string key's Range::one_of), "a string".
std::string expected_phrase(const Field& field);
// CLI11's type column in --help: INT, FLOAT, TEXT, {off,bf16,fp16} (an enum, or a string key's
// Range::one_of).
std::string type_name(const Field& field);

// Parses `text` into the field of *config. `what` names the source for the message, e.g.
// "c.yaml:3: key 'epochs'" or "--epochs": "<what> must be an integer (got 'two')".
void set_field(const Field& field, std::string_view text, const std::string& what, TrainConfig* config);
// The field's value as text that set_field() reads back to the same value.
std::string field_text(const Field& field, const TrainConfig& config);
// The message for a value outside the field's range, or a word not among its one_of; "" when
// it is allowed (or the field declares nothing).
std::string range_message(const Field& field, const TrainConfig& config);

}  // namespace stoker::train::detail
