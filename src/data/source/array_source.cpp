// The in-memory array source and its checks.
#include "array_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "file_reader.h"
#include "stoker/core/error.h"

namespace stoker::data {

namespace {

class ArraySource final : public Source {
 public:
  explicit ArraySource(SampleArrays a) : a_(std::move(a)) {
    if (a_.labels.empty()) return;
    const auto [low, high] = std::minmax_element(a_.labels.begin(), a_.labels.end());
    min_id_ = *low;
    max_id_ = *high;
  }

  size_t size() const override { return a_.count; }
  std::string name(size_t index) const override { return fmt::format("{}[{}]", a_.item, index); }
  std::string describe() const override {
    std::string text = a_.origin + ": " + with_commas(a_.count);
    text += a_.feature_count > 0 ? fmt::format(" samples × {} feature{}", a_.feature_count,
                                               a_.feature_count == 1 ? "" : "s")
                                 : fmt::format(" images {}x{}{}", a_.width, a_.height,
                                               a_.channels == 3 ? " RGB" : "");
    if (target_kind() == TargetKind::kClass) {
      if (!ids_can_be_classes()) return text + fmt::format(", integer targets {}..{}", min_id_, max_id_);
      return text + ", " + with_commas(static_cast<uint64_t>(max_id_) + 1) + " classes";
    }
    return text + fmt::format(", {} float target{}", a_.target_dim, a_.target_dim == 1 ? "" : "s");
  }
  TargetKind target_kind() const override {
    return a_.labels.empty() ? TargetKind::kRegression : TargetKind::kClass;
  }
  int target_dim() const override { return a_.labels.empty() ? a_.target_dim : 1; }
  // "0".."max_id", made on first use: integers read as regression targets never need them.
  const std::vector<std::string>& class_names() const override {
    std::call_once(classes_made_, [this] {
      if (!ids_can_be_classes()) return;
      classes_.reserve(static_cast<size_t>(max_id_) + 1);
      for (int64_t c = 0; c <= max_id_; ++c) classes_.push_back(std::to_string(c));
    });
    return classes_;
  }
  int64_t label(size_t index) const override { return a_.labels.empty() ? 0 : a_.labels[index]; }
  void targets(size_t index, float* out) const override {
    if (!a_.labels.empty()) {
      out[0] = static_cast<float>(a_.labels[index]);
      return;
    }
    const auto dim = static_cast<size_t>(a_.target_dim);
    std::copy_n(a_.targets.data() + index * dim, dim, out);
  }
  Status read(size_t index, SampleData* out) const override {
    if (a_.feature_count > 0) {
      const auto d = static_cast<size_t>(a_.feature_count);
      out->bytes = {reinterpret_cast<const uint8_t*>(a_.features.data() + index * d),
                    d * sizeof(float)};
      out->raw = false;
      out->feature_count = a_.feature_count;
      return Status::ok_status();
    }
    const size_t bytes = static_cast<size_t>(a_.width) * static_cast<size_t>(a_.height) *
                         static_cast<size_t>(a_.channels);
    out->bytes = {a_.pixels.data() + index * bytes, bytes};
    out->raw = true;
    out->raw_width = a_.width;
    out->raw_height = a_.height;
    out->raw_channels = a_.channels;
    out->feature_count = 0;
    return Status::ok_status();
  }
  void fixed_shape(int* width, int* height, int* channels) const override {
    *width = a_.feature_count > 0 ? 0 : a_.width;
    *height = a_.feature_count > 0 ? 0 : a_.height;
    *channels = a_.feature_count > 0 ? 0 : a_.channels;
  }
  int feature_count() const override { return a_.feature_count; }
  bool targets_are_numbers() const override { return true; }
  std::string default_transforms() const override {
    if (a_.feature_count > 0) return "Standardize";
    return a_.channels == 1 ? "none, Grayscale" : "none";
  }
  void check_class_ids(int64_t max_classes) const override {
    if (a_.labels.empty()) return;
    if (min_id_ < 0) {
      const auto at = static_cast<size_t>(std::find(a_.labels.begin(), a_.labels.end(), min_id_) - a_.labels.begin());
      throw DataError(fmt::format(
          "{}: class id {} of sample {} is negative; class ids must be 0..K-1 (for quantities, pass --task "
          "regression)",
          a_.origin, min_id_, at));
    }
    if (max_id_ >= max_classes) {
      throw DataError(fmt::format(
          "{}: integer targets up to {} would make {} classes (at most {}); for quantities pass --task regression "
          "(or store floats: np.float32, or 12.0 in a CSV){}",
          a_.origin, max_id_, with_commas(static_cast<uint64_t>(max_id_) + 1), with_commas(max_classes),
          max_classes < kMaxClasses ? fmt::format("; for that many classes pass --task classification (up to {})",
                                                      with_commas(kMaxClasses))
                                        : ""));
    }
  }
  void prefetch(size_t index) const override {
    if (!a_.labels.empty()) __builtin_prefetch(a_.labels.data() + index);
    if (a_.feature_count == 0) return;
    const size_t bytes = static_cast<size_t>(a_.feature_count) * sizeof(float);
    const auto* row = reinterpret_cast<const char*>(a_.features.data() +
                                                    index * static_cast<size_t>(a_.feature_count));
    for (size_t at = 0; at < bytes && at < 1024; at += 64) __builtin_prefetch(row + at);
  }

 private:
  SampleArrays a_;
  int64_t min_id_ = 0, max_id_ = -1;  // of the class ids
  mutable std::once_flag classes_made_;
  mutable std::vector<std::string> classes_;  // empty if check_class_ids(kMaxClasses) throws

  bool ids_can_be_classes() const { return !a_.labels.empty() && min_id_ >= 0 && max_id_ < kMaxClasses; }
};

// The first non-finite value of `values` (row-major, `width` per row), as a message.
void require_finite(const std::vector<float>& values, size_t width, const std::string& origin,
                    const char* what) {
  const auto bad =
      std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  if (bad == values.end()) return;
  const auto at = static_cast<size_t>(bad - values.begin());
  throw DataError(
      fmt::format("{}: {} of sample {} (column {}) is {}; fill or drop missing values first",
                  origin, what, at / width, at % width, *bad));
}

}  // namespace

std::unique_ptr<Source> make_array_source(SampleArrays a) {
  if (a.count == 0) throw DataError(a.origin + " holds no samples");
  const size_t per_sample = a.feature_count > 0
                                ? static_cast<size_t>(a.feature_count)
                                : static_cast<size_t>(a.width) * static_cast<size_t>(a.height) *
                                      static_cast<size_t>(a.channels);
  const size_t held = a.feature_count > 0 ? a.features.size() : a.pixels.size();
  if (per_sample == 0 || held != a.count * per_sample) {
    throw DataError(
        fmt::format("{}: {} values for {} samples of {}", a.origin, held, a.count, per_sample));
  }
  if (a.feature_count > 0) require_finite(a.features, per_sample, a.origin, "a feature");
  if (!a.labels.empty()) {
    if (a.labels.size() != a.count)
      throw DataError(
          fmt::format("{}: {} class ids for {} samples", a.origin, a.labels.size(), a.count));
  } else {
    if (a.target_dim < 1 || a.targets.size() != a.count * static_cast<size_t>(a.target_dim)) {
      throw DataError(
          fmt::format("{}: {} targets for {} samples", a.origin, a.targets.size(), a.count));
    }
    require_finite(a.targets, static_cast<size_t>(a.target_dim), a.origin, "the target");
  }
  return std::make_unique<ArraySource>(std::move(a));
}

}  // namespace stoker::data
