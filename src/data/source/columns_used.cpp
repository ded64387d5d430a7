// What a command that reads paths and targets alone makes of a CSV list's (or shards') other columns.
#include <fmt/format.h>

#include <algorithm>

#include "list_columns.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

// "a", "a and b", "a, b and c".
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ")) + names[i];
  }
  return text;
}

}  // namespace

std::string columns_left_unread(const Source& source, const std::string& path, const std::string& command) {
  const SourceColumns* columns = source.columns();
  if (columns == nullptr) return "";
  std::vector<std::string> extra;
  for (const ExtraColumn& c : columns->extra) extra.push_back(c.name);
  if (columns->targets.empty()) {
    std::vector<std::string> all{columns->path};
    all.insert(all.end(), extra.begin(), extra.end());
    std::string text_at;
    for (const ExtraColumn& c : columns->extra) {
      if (text_at.empty() && !c.text_at.empty()) text_at = c.name + " holds text: " + c.text_at;
    }
    std::string others;  // the names a target column goes by, after "label"
    for (const char* name : kTargetColumnNames) {
      if (std::string(name) != "label") others += (others.empty() ? "" : ", ") + std::string(name);
    }
    if (!columns->header && !text_at.empty()) {  // the columns of numbers are the targets
      throw UsageError(fmt::format(
          "{} has no target column: without a header line the targets are the columns of numbers after the path, "
          "and {}; {} needs targets: make that column's cells numbers, or add a header line naming the target "
          "column label",
          path, text_at, command));
    }
    const std::string how = columns->no_target_hint.empty()
                                ? fmt::format("name it label (or {}) in the header line", others)
                                : columns->no_target_hint;
    throw UsageError(
        fmt::format("{} has no target column among {}; {} needs one: {}", path, listed(all), command, how));
  }
  if (extra.empty()) return "";
  std::vector<std::string> used{columns->path};
  used.insert(used.end(), columns->targets.begin(), columns->targets.end());
  std::string ignored;
  for (const std::string& name : extra) ignored += (ignored.empty() ? "" : ", ") + name;
  return fmt::format("ignoring column{} {} of {}: {} uses {}", extra.size() == 1 ? "" : "s", ignored, path, command,
                     listed(used));
}

namespace {

// Throws UsageError unless `source`'s targets are floats, which `option` names some of.
void require_float_targets(const Source& source, std::string_view option) {
  if (source.target_kind() != TargetKind::kRegression) {
    throw UsageError(
        fmt::format("{} names float targets (a head pose's yaw, pitch, roll), and {} has class ids; "
                    "leave it out",
                    option, source.describe()));
  }
}

// The UsageError for `named`, a target `source` does not have: "... has the target columns yaw,
// pitch and roll", or "... has targets 0 to 2" where they have no names.
UsageError no_such_target(const Source& source, std::string_view option, const std::string& named) {
  const SourceColumns* columns = source.columns();
  const std::string targets = columns != nullptr && !columns->targets.empty()
                                  ? "the target columns " + listed(columns->targets)
                                  : fmt::format("targets 0 to {}", source.target_dim() - 1);
  return UsageError(fmt::format("{} names target {}, and {} has {}", option, named, source.describe(), targets));
}

}  // namespace

void check_target_indices(const Source& source, const std::vector<int>& indices, std::string_view option) {
  if (indices.empty()) return;
  require_float_targets(source, option);
  for (const int t : indices) {
    if (t < 0 || t >= source.target_dim()) throw no_such_target(source, option, std::to_string(t));
  }
}

std::vector<int> target_indices(const Source& source, const std::vector<std::string>& given, std::string_view option) {
  if (given.empty()) return {};
  require_float_targets(source, option);
  const SourceColumns* columns = source.columns();
  const std::vector<std::string> names = columns != nullptr ? columns->targets : std::vector<std::string>{};
  std::vector<int> out;
  for (const std::string& name : given) {
    const auto named = std::find(names.begin(), names.end(), name);
    int index = -1;
    if (named != names.end()) {
      index = static_cast<int>(named - names.begin());
    } else if (!name.empty() && name.size() < 10 && name.find_first_not_of("0123456789") == std::string::npos) {
      index = std::stoi(name);
    }
    if (index < 0 || index >= source.target_dim()) throw no_such_target(source, option, "'" + name + "'");
    out.push_back(index);
  }
  return out;
}

}  // namespace stoker::data
