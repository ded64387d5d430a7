// classes_without_samples(): see stoker/data/source.h.
#include <vector>

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

}  // namespace stoker::data
