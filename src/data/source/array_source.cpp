// The in-memory array source and its checks.
#include "array_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "file_reader.h"
#include "numbered_classes.h"
#include "stoker/core/error.h"

namespace stoker::data {

namespace {

class ArraySource final : public Source {
 public:
  explicit ArraySource(SampleArrays a)
      : a_(std::move(a)), ids_(a_.origin, a_.labels.size(), [this](size_t i) { return a_.labels[i]; }) {}

  size_t size() const override { return a_.count; }
  std::string name(size_t index) const override { return fmt::format("{}[{}]", a_.item, index); }
  std::string describe() const override {
    std::string text = a_.origin + ": " + with_commas(a_.count);
    text += a_.feature_count > 0 ? fmt::format(" samples × {} feature{}", a_.feature_count,
                                               a_.feature_count == 1 ? "" : "s")
                                 : fmt::format(" images {}x{}{}", a_.width, a_.height,
                                               a_.channels == 3 ? " RGB" : "");
    if (target_kind() == TargetKind::kClass) return text + ", " + ids_.describe();
    return text + fmt::format(", {} float target{}", a_.target_dim, a_.target_dim == 1 ? "" : "s");
  }
  TargetKind target_kind() const override {
    return a_.labels.empty() ? TargetKind::kRegression : TargetKind::kClass;
  }
  int target_dim() const override { return a_.labels.empty() ? a_.target_dim : 1; }
  const std::vector<std::string>& class_names() const override { return ids_.names(); }
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
    ids_.check(max_classes, [](size_t i) { return fmt::format("sample {}", i); });
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
  NumberedClasses ids_;  // of a_.labels (none for regression targets)
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
