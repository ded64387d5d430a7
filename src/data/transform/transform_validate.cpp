// TransformSpec::validate(): the checks every spec passes, however it was made (a parsed
// chain, a config, the Python package), each failure one UsageError naming the transform, the
// value and what is allowed. Each transform checks its own part (its registry entry,
// ops/registry.h); what spans transforms is here: channels, the output size, which geometry
// takes a Resize, and what feature vectors may take.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "ops/registry.h"
#include "spec_common.h"
#include "stoker/core/error.h"
#include "stoker/data/transform.h"

namespace stoker::data {

namespace spec {

void check_probability(const char* transform, double p) {
  if (!(p >= 0 && p <= 1)) throw UsageError(fmt::format("{} p must be in [0, 1] (got {})", transform, p));
}

void check_apply_p(const char* transform, double p) {
  if (!(p >= 0 && p <= 1)) {
    throw UsageError(fmt::format("RandomApply p must be in [0, 1] (got {}, around {})", p, transform));
  }
}

void check_fill(const char* transform, const std::array<float, 3>& fill) {
  for (const float f : fill) {
    if (!(f >= 0 && f <= 255)) {
      throw UsageError(fmt::format("{} fill must be pixel values in [0, 255] (got {})", transform, f));
    }
  }
}

}  // namespace spec

namespace {

// The first step describe() writes of an entry `picked` picks, in registry order, as it writes
// it; "" when there is none.
template <typename Pick>
std::string first_step_of(const TransformSpec& spec, Pick picked) {
  std::vector<std::string> steps;
  for (const ops::TransformOp* op : ops::registry()) {
    if (picked(*op) && op->describe != nullptr) op->describe(spec, &steps);
    if (!steps.empty()) return steps.front();
  }
  return "";
}

}  // namespace

void TransformSpec::validate() const {
  if (channels != 1 && channels != 3) {
    throw UsageError(fmt::format("channels must be 1 (Grayscale) or 3 (RGB) (got {})", channels));
  }
  const auto in_size_range = [](int v) { return v >= 1 && v <= spec::kMaxSize; };
  // kNone may leave the size at 0x0 until the pipeline sets it from the source.
  // Feature vectors are sized by the Loader (length x 1), not by an image size limit.
  const bool size_unset = geometry == Geometry::kNone && ((out_width == 0 && out_height == 0) || features.enabled());
  if (!size_unset && !(in_size_range(out_width) && in_size_range(out_height))) {
    throw UsageError(fmt::format("{} size must be in 1..{} (got {})", spec::geometry_name(geometry), spec::kMaxSize,
                                 spec::size_text(out_height, out_width)));
  }
  if (geometry == Geometry::kResizeCenterCrop && !resize.enabled()) {
    throw UsageError("Resize+CenterCrop needs a Resize size (got none)");
  }
  if ((geometry == Geometry::kNone || geometry == Geometry::kCenterCrop) && resize.enabled()) {
    throw UsageError(fmt::format("{} takes no Resize; Resize then CenterCrop is Resize+CenterCrop",
                                 geometry == Geometry::kNone ? "none" : "the 1:1 CenterCrop"));
  }
  for (const ops::TransformOp* op : ops::registry()) {
    if (op->validate != nullptr) op->validate(*this);
  }
  validate_features();
}

std::string TransformSpec::gpu_finishing_blocker() const {
  return first_step_of(*this, [](const ops::TransformOp& op) { return !op.on_gpu; });
}

void TransformSpec::validate_features() const {
  if (!features.standardize && !features.enabled()) return;
  // The first image transform the chain has: its geometry, else the first entry not marked
  // on_features (registry.h) that describe() writes, as it writes it.
  std::vector<std::string> image_steps;
  if (geometry != Geometry::kNone) image_steps.emplace_back(spec::geometry_name(geometry));
  if (grayscale_rgb) image_steps.emplace_back("Grayscale(num_output_channels=3)");
  if (image_steps.empty()) {
    image_steps.push_back(first_step_of(*this, [](const ops::TransformOp& op) { return !op.on_features; }));
    if (image_steps.back().empty()) image_steps.clear();
  }
  if (!image_steps.empty()) {
    throw UsageError(fmt::format(
        "{} is an image transform, and {}; feature vectors take 'Standardize' or 'none' (and Float16/Float32)",
        image_steps.front(),
        features.enabled() ? fmt::format("the data holds feature vectors ({} per sample)", features.length)
                           : std::string("Standardize is for feature vectors")));
  }
  if (features.enabled() && dtype == DType::kUint8) {
    throw UsageError("feature vectors cannot be written as uint8 (ToUint8); use Float32 or Float16");
  }
  if (features.mean.size() != features.std.size()) {
    throw UsageError(fmt::format("Standardize has {} mean and {} std values; give both or neither",
                                 features.mean.size(), features.std.size()));
  }
  for (const std::vector<float>* stats : {&features.mean, &features.std}) {
    if (!stats->empty() && stats->size() != static_cast<size_t>(features.length)) {
      throw UsageError(fmt::format("Standardize has {} {} values for {} features", stats->size(),
                                   stats == &features.mean ? "mean" : "std", features.length));
    }
  }
  for (size_t j = 0; j < features.mean.size(); ++j) {
    if (!std::isfinite(features.mean[j]) || !(std::isfinite(features.std[j]) && features.std[j] > 0)) {
      throw UsageError(fmt::format("Standardize feature {} has mean {} and std {}; both must be finite, std > 0", j,
                                   features.mean[j], features.std[j]));
    }
  }
}

}  // namespace stoker::data
