// classes_without_samples(), classes_without_samples_text(): see stoker/data/source.h.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "stoker/core/numbers.h"
#include "stoker/data/source.h"

namespace stoker::data {

std::vector<int64_t> classes_without_samples(const Source& source) {
  if (source.target_kind() != TargetKind::kClass) return {};
  const size_t classes = source.class_names().size();
  std::vector<bool> seen(classes, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t id = source.label(i);
    if (id >= 0 && static_cast<size_t>(id) < classes) seen[static_cast<size_t>(id)] = true;
  }
  std::vector<int64_t> empty;
  for (size_t c = 0; c < classes; ++c) {
    if (!seen[c]) empty.push_back(static_cast<int64_t>(c));
  }
  return empty;
}

std::string classes_without_samples_text(const Source& source, std::string_view sample) {
  const std::vector<int64_t> empty = classes_without_samples(source);
  if (empty.empty()) return "";
  const auto& names = source.class_names();
  std::string listed;
  for (size_t i = 0; i < empty.size() && i < 5; ++i) {
    listed += fmt::format("{}'{}'", i == 0 ? "" : ", ", names[static_cast<size_t>(empty[i])]);
  }
  if (empty.size() > 5) listed += fmt::format(", … '{}'", names[static_cast<size_t>(empty.back())]);
  return fmt::format("{} of {} classes ha{} no {} ({})", grouped(static_cast<double>(empty.size())),
                     grouped(static_cast<double>(names.size())), empty.size() == 1 ? "s" : "ve", sample, listed);
}

}  // namespace stoker::data
