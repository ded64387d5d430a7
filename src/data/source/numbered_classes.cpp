// Class ids read as numbers: range, check and names made on first use.
#include "numbered_classes.h"

#include <fmt/format.h>

#include "file_reader.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

NumberedClasses::NumberedClasses(std::string origin, size_t count, const std::function<int64_t(size_t)>& id_of)
    : origin_(std::move(origin)), count_(count) {
  for (size_t i = 0; i < count; ++i) {
    const int64_t id = id_of(i);
    if (i == 0 || id < min_) {
      min_ = id;
      first_min_ = i;
    }
    if (i == 0 || id > max_) max_ = id;
  }
}

bool NumberedClasses::can_be_classes() const { return count_ > 0 && min_ >= 0 && max_ < kMaxClasses; }

void NumberedClasses::check(int64_t max_classes, const std::function<std::string(size_t)>& sample_name) const {
  if (count_ == 0) return;
  if (min_ < 0) {
    throw DataError(fmt::format(
        "{}: class id {} of {} is negative; class ids must be 0..K-1 (for quantities, pass --task regression)", origin_,
        min_, sample_name(first_min_)));
  }
  if (max_ >= max_classes) {
    throw DataError(fmt::format(
        "{}: integer targets up to {} would make {} classes (at most {}); for quantities pass --task regression "
        "(or store floats: np.float32, or 12.0 in a CSV){}",
        origin_, max_, with_commas(static_cast<uint64_t>(max_) + 1), with_commas(max_classes),
        max_classes < kMaxClasses
            ? fmt::format("; for that many classes pass --task classification (up to {})", with_commas(kMaxClasses))
            : ""));
  }
}

const std::vector<std::string>& NumberedClasses::names() const {
  std::call_once(made_, [this] {
    if (!can_be_classes()) return;
    names_.reserve(static_cast<size_t>(max_) + 1);
    for (int64_t c = 0; c <= max_; ++c) names_.push_back(std::to_string(c));
  });
  return names_;
}

std::string NumberedClasses::describe() const {
  if (!can_be_classes()) return fmt::format("integer targets {}..{}", min_, max_);
  return with_commas(static_cast<uint64_t>(max_) + 1) + " classes";
}

}  // namespace stoker::data
