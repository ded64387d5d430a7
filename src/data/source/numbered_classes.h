// Class ids read as numbers from the data (CSV file lists, NumPy and HDF5 arrays, feature
// tables), shared by the sources that hold them: their range, the check once the task is
// known (Source::check_class_ids) and the class names "0".."max", made on first use.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace stoker::data {

// An integer target read as a float (CSV cells) as an id: saturated to int64's range, where a
// plain cast of a value beyond it is undefined. Such values are refused as class ids anyway.
inline int64_t class_id_of(float value) {
  constexpr float kLimit = 9.2e18f;  // below 2^63, above every id check_class_ids lets through
  return static_cast<int64_t>(value < -kLimit ? -kLimit : (value > kLimit ? kLimit : value));
}

// Thread safety: const members may be called from any thread (names() makes the names once).
// Neither copyable nor movable (it holds a once_flag): a source holds it as a member.
class NumberedClasses {
 public:
  // `count` ids, `id_of(i)` the id of sample i; `origin` names the data in messages.
  NumberedClasses(std::string origin, size_t count, const std::function<int64_t(size_t)>& id_of);
  NumberedClasses(const NumberedClasses&) = delete;
  NumberedClasses& operator=(const NumberedClasses&) = delete;

  // Throws DataError when an id is negative (naming `sample_name(i)` of the first one) or
  // the ids would make more than `max_classes` classes, with both ways out: --task
  // regression for quantities, --task classification for that many classes.
  void check(int64_t max_classes, const std::function<std::string(size_t)>& sample_name) const;

  // "0".."max_id", made on the first call (integers read as regression targets never need
  // them); empty when the ids cannot be classes.
  const std::vector<std::string>& names() const;
  // "10 classes", or "integer targets -3..250000" when the ids cannot be classes.
  std::string describe() const;

 private:
  // True when there are ids, none negative, and they make at most kMaxClasses classes.
  bool can_be_classes() const;

  std::string origin_;
  size_t count_ = 0;
  int64_t min_ = 0;
  int64_t max_ = -1;      // -1 when there are no ids
  size_t first_min_ = 0;  // the first sample with id min_
  mutable std::once_flag made_;
  mutable std::vector<std::string> names_;
};

}  // namespace stoker::data
