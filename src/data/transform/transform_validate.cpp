// TransformSpec::validate(): the checks every spec passes, however it was made (a parsed
// chain, a config, the Python package), each failure one UsageError naming the transform, the
// value and what is allowed.
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "spec_common.h"
#include "stoker/core/error.h"
#include "stoker/data/transform.h"

namespace stoker::data {

void TransformSpec::validate() const {
  if (channels != 1 && channels != 3) {
    throw UsageError(fmt::format("channels must be 1 (Grayscale) or 3 (RGB) (got {})", channels));
  }
  const auto in_size_range = [](int v) { return v >= 1 && v <= spec::kMaxSize; };
  // kNone may leave the size at 0x0 until the pipeline sets it from the source.
  // Feature vectors are sized by the Loader (features x 1), not by an image size limit.
  const bool size_unset = geometry == Geometry::kNone && ((out_width == 0 && out_height == 0) || features > 0);
  if (!size_unset && !(in_size_range(out_width) && in_size_range(out_height))) {
    throw UsageError(fmt::format("{} size must be in 1..{} (got {})", spec::geometry_name(geometry), spec::kMaxSize,
                                 spec::size_text(out_height, out_width)));
  }
  if (resize.shorter != 0 && !in_size_range(resize.shorter)) {
    throw UsageError(fmt::format("Resize size must be in 1..{} (got {})", spec::kMaxSize, resize.shorter));
  }
  if ((resize.width != 0 || resize.height != 0) && !(in_size_range(resize.width) && in_size_range(resize.height))) {
    throw UsageError(
        fmt::format("Resize size must be in 1..{} (got ({}, {}))", spec::kMaxSize, resize.height, resize.width));
  }
  if (resize.max_size != 0 &&
      !(resize.shorter > 0 && resize.max_size > resize.shorter && resize.max_size <= spec::kMaxSize)) {
    throw UsageError(fmt::format("Resize max_size must be in {}..{}, above the size (got {})", resize.shorter + 1,
                                 spec::kMaxSize, resize.max_size));
  }
  if (geometry == Geometry::kResizeCenterCrop && !resize.enabled()) {
    throw UsageError("Resize+CenterCrop needs a Resize size (got none)");
  }
  if ((geometry == Geometry::kNone || geometry == Geometry::kCenterCrop) && resize.enabled()) {
    throw UsageError(fmt::format("{} takes no Resize; Resize then CenterCrop is Resize+CenterCrop",
                                 geometry == Geometry::kNone ? "none" : "CenterCrop(resize=False)"));
  }
  if (geometry == Geometry::kRandomCrop) {
    for (const int side : {pad.left, pad.top, pad.right, pad.bottom}) {
      if (side < 0 || side > spec::kMaxSize) {
        throw UsageError(
            fmt::format("RandomCrop padding must be in 0..{} pixels per side (got {})", spec::kMaxSize, side));
      }
    }
    for (const float f : pad.fill) {
      if (!(f >= 0 && f <= 255)) {
        throw UsageError(fmt::format("RandomCrop fill must be pixel values in [0, 255] (got {})", f));
      }
    }
  }
  if (geometry == Geometry::kRandomResizedCrop) {
    if (!(scale_min > 0 && scale_min <= scale_max && scale_max <= 1)) {
      throw UsageError(
          fmt::format("RandomResizedCrop scale must satisfy 0 < min <= max <= 1 (got ({}, {}))", scale_min, scale_max));
    }
    if (!(ratio_min > 0 && ratio_min <= ratio_max && std::isfinite(ratio_max))) {
      throw UsageError(
          fmt::format("RandomResizedCrop ratio must satisfy 0 < min <= max (got ({}, {}))", ratio_min, ratio_max));
    }
  }
  if (!(std::isfinite(rotation.min_degrees) && std::isfinite(rotation.max_degrees) &&
        rotation.min_degrees <= rotation.max_degrees)) {
    throw UsageError(fmt::format("RandomRotation degrees must satisfy min <= max, both finite (got ({}, {}))",
                                 rotation.min_degrees, rotation.max_degrees));
  }
  if (blur.kernel_w != 0 || blur.kernel_h != 0) {
    for (const int k : {blur.kernel_w, blur.kernel_h}) {
      if (k < 1 || k > spec::kMaxSize || k % 2 == 0) {
        throw UsageError(
            fmt::format("GaussianBlur kernel_size must be odd and positive, as torchvision's (got {})", k));
      }
    }
    if (!(blur.sigma_min > 0 && blur.sigma_min <= blur.sigma_max && std::isfinite(blur.sigma_max))) {
      throw UsageError(
          fmt::format("GaussianBlur sigma must satisfy 0 < min <= max (got ({}, {}))", blur.sigma_min, blur.sigma_max));
    }
  }
  for (const float f : rotation.fill) {
    if (!(f >= 0 && f <= 255)) {
      throw UsageError(fmt::format("RandomRotation fill must be pixel values in [0, 255] (got {})", f));
    }
  }
  validate_affine();
  for (const auto& [name, p] : {std::pair<const char*, double>{"ColorJitter", jitter.apply_p},
                                {"GaussianBlur", blur.apply_p},
                                {"RandomRotation", rotation.apply_p},
                                {"RandomAffine", affine.apply_p}}) {
    if (!(p >= 0 && p <= 1)) {
      throw UsageError(fmt::format("RandomApply p must be in [0, 1] (got {}, around {})", p, name));
    }
  }
  for (const auto& [name, p] : {std::pair<const char*, double>{"RandomHorizontalFlip", flip_p},
                                {"RandomVerticalFlip", vflip_p},
                                {"RandomGrayscale", grayscale_p}}) {
    if (!(p >= 0 && p <= 1)) throw UsageError(fmt::format("{} p must be in [0, 1] (got {})", name, p));
  }
  const std::array<std::pair<const char*, double>, 3> factors{
      {{"brightness", jitter.brightness}, {"contrast", jitter.contrast}, {"saturation", jitter.saturation}}};
  for (const auto& [name, value] : factors) {
    if (!(value >= 0 && std::isfinite(value))) {
      throw UsageError(fmt::format("ColorJitter {} must be >= 0 (got {})", name, value));
    }
  }
  if (!(jitter.hue >= 0 && jitter.hue <= 0.5)) {
    throw UsageError(fmt::format("ColorJitter hue must be in [0, 0.5] (got {})", jitter.hue));
  }
  validate_augmentations();
  validate_color_ops();
  validate_features();
  if (normalize) {
    for (int c = 0; c < channels; ++c) {
      if (!std::isfinite(mean[c])) {
        throw UsageError(fmt::format("Normalize mean must be finite (got mean[{}] = {})", c, mean[c]));
      }
      if (!(std::isfinite(std[c]) && std[c] != 0)) {
        throw UsageError(fmt::format("Normalize std must be non-zero and finite (got std[{}] = {})", c, std[c]));
      }
    }
  }
}

void TransformSpec::validate_augmentations() const {
  const AutoAugmentSpec& a = auto_augment;
  if (a.enabled()) {
    const char* name = to_string(a.kind);
    if (a.num_ops < 0 || a.num_ops > AutoAugmentSpec::kMaxOps) {
      throw UsageError(fmt::format("{} num_ops must be in 0..{} (got {})", name, AutoAugmentSpec::kMaxOps, a.num_ops));
    }
    if (a.num_magnitude_bins < 2 || a.num_magnitude_bins > 1000) {
      throw UsageError(fmt::format("{} num_magnitude_bins must be in 2..1000 (got {})", name, a.num_magnitude_bins));
    }
    if (a.kind == AutoAugmentKind::kAugMix) {
      if (a.severity < 1 || a.severity > 10) {
        throw UsageError(fmt::format("AugMix severity must be in 1..10 (got {})", a.severity));
      }
      if (a.mixture_width < 1 || a.mixture_width > AutoAugmentSpec::kMaxChains) {
        throw UsageError(fmt::format("AugMix mixture_width must be in 1..{} (got {})", AutoAugmentSpec::kMaxChains,
                                     a.mixture_width));
      }
      if (a.chain_depth != -1 && (a.chain_depth < 1 || a.chain_depth > AutoAugmentSpec::kMaxDepth)) {
        throw UsageError(fmt::format("AugMix chain_depth must be -1 (1 to 3 at random) or 1..{} (got {})",
                                     AutoAugmentSpec::kMaxDepth, a.chain_depth));
      }
      if (!(a.alpha > 0 && std::isfinite(a.alpha))) {
        throw UsageError(fmt::format("AugMix alpha must be a number > 0 (got {})", a.alpha));
      }
    }
    if (a.kind == AutoAugmentKind::kRandAugment && !(a.magnitude >= 0 && a.magnitude < a.num_magnitude_bins)) {
      throw UsageError(fmt::format("RandAugment magnitude must be in 0..{} (num_magnitude_bins - 1) (got {})",
                                   a.num_magnitude_bins - 1, a.magnitude));
    }
    for (const float f : a.fill) {
      if (!(f >= 0 && f <= 255)) {
        throw UsageError(fmt::format("{} fill must be pixel values in [0, 255] (got {})", name, f));
      }
    }
  }
  const RandomErasingSpec& e = erasing;
  if (!(e.p >= 0 && e.p <= 1)) {
    throw UsageError(fmt::format("RandomErasing p must be in [0, 1] (got {})", e.p));
  }
  if (!(e.scale_min >= 0 && e.scale_min <= e.scale_max && e.scale_max <= 1)) {
    throw UsageError(
        fmt::format("RandomErasing scale must satisfy 0 <= min <= max <= 1 (got ({}, {}))", e.scale_min, e.scale_max));
  }
  if (!(e.ratio_min > 0 && e.ratio_min <= e.ratio_max && std::isfinite(e.ratio_max))) {
    throw UsageError(
        fmt::format("RandomErasing ratio must satisfy 0 < min <= max (got ({}, {}))", e.ratio_min, e.ratio_max));
  }
  for (const float v : e.value) {
    if (!std::isfinite(v)) throw UsageError(fmt::format("RandomErasing value must be finite (got {})", v));
  }
}

void TransformSpec::validate_color_ops() const {
  for (size_t i = 0; i < color_ops.size(); ++i) {
    const char* name = to_string(static_cast<ColorOp>(i));
    const ColorOpSpec& c = color_ops[i];
    if (!(c.p >= 0 && c.p <= 1)) throw UsageError(fmt::format("{} p must be in [0, 1] (got {})", name, c.p));
  }
  const double bits = color_ops[static_cast<size_t>(ColorOp::kPosterize)].value;
  if (!(bits >= 0 && bits <= 8 && std::floor(bits) == bits)) {
    throw UsageError(fmt::format("RandomPosterize bits must be a whole number in 0..8 (got {})", bits));
  }
  const double threshold = color_ops[static_cast<size_t>(ColorOp::kSolarize)].value;
  if (threshold > 0 && threshold < 1) {
    // torchvision takes it in the image's units: a float tensor's 0.5 is a uint8 image's 128.
    throw UsageError(fmt::format(
        "RandomSolarize threshold is a pixel value in [0, 255], as for a PIL or uint8 image (got {}); a threshold "
        "written for a float image in [0, 1] is 255 times it here, e.g. RandomSolarize({:g}) for {}",
        threshold, std::round(255 * threshold), threshold));
  }
  if (!(threshold >= 0 && threshold <= 255)) {
    throw UsageError(fmt::format("RandomSolarize threshold must be a pixel value in [0, 255] (got {})", threshold));
  }
  const double factor = color_ops[static_cast<size_t>(ColorOp::kAdjustSharpness)].value;
  if (!(factor >= 0 && std::isfinite(factor))) {
    throw UsageError(fmt::format(
        "RandomAdjustSharpness sharpness_factor must be a number >= 0 (got {}); 0 blurs, 1 is the image, 2 sharpens",
        factor));
  }
}

void TransformSpec::validate_affine() const {
  const AffineSpec& a = affine;
  const auto range = [](const char* what, double lo, double hi) {
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
      throw UsageError(
          fmt::format("RandomAffine {} must satisfy min <= max, both finite (got ({}, {}))", what, lo, hi));
    }
  };
  range("degrees", a.min_degrees, a.max_degrees);
  range("shear", a.shear_x_min, a.shear_x_max);
  range("shear (y)", a.shear_y_min, a.shear_y_max);
  for (const double t : {a.translate_x, a.translate_y}) {
    if (!(t >= 0 && t <= 1)) {
      throw UsageError(
          fmt::format("RandomAffine translate must be fractions of the image's size in [0, 1] (got ({}, {}))",
                      a.translate_x, a.translate_y));
    }
  }
  if (!(a.scale_min > 0 && a.scale_min <= a.scale_max && std::isfinite(a.scale_max))) {
    throw UsageError(
        fmt::format("RandomAffine scale must satisfy 0 < min <= max (got ({}, {}))", a.scale_min, a.scale_max));
  }
  for (const double shear : {a.shear_x_min, a.shear_x_max, a.shear_y_min, a.shear_y_max}) {
    // tan(90°) is infinite: the grid would be NaN.
    if (std::abs(shear) >= 90) {
      throw UsageError(fmt::format("RandomAffine shear must be within (-90, 90) degrees (got {})", shear));
    }
  }
  for (const float f : a.fill) {
    if (!(f >= 0 && f <= 255)) {
      throw UsageError(fmt::format("RandomAffine fill must be pixel values in [0, 255] (got {})", f));
    }
  }
}

void TransformSpec::validate_features() const {
  if (!standardize && features == 0) return;
  const char* image_step = geometry != Geometry::kNone   ? spec::geometry_name(geometry)
                           : flip_p > 0                  ? "RandomHorizontalFlip"
                           : vflip_p > 0                 ? "RandomVerticalFlip"
                           : rotation.enabled()          ? "RandomRotation"
                           : affine.enabled()            ? "RandomAffine"
                           : blur.enabled()              ? "GaussianBlur"
                           : grayscale_p > 0             ? "RandomGrayscale"
                           : spec::first_color_op(*this) ? spec::first_color_op(*this)
                           : auto_augment.enabled()      ? to_string(auto_augment.kind)
                           : jitter.enabled()            ? "ColorJitter"
                           : normalize                   ? "Normalize"
                           : erasing.enabled()           ? "RandomErasing"
                                                         : nullptr;
  if (image_step != nullptr) {
    throw UsageError(fmt::format(
        "{} is an image transform, and {}; feature vectors take 'Standardize' or 'none' (and Float16/Float32)",
        image_step,
        features > 0 ? fmt::format("the data holds feature vectors ({} per sample)", features)
                     : std::string("Standardize is for feature vectors")));
  }
  if (features > 0 && dtype == DType::kUint8) {
    throw UsageError("feature vectors cannot be written as uint8 (ToUint8); use Float32 or Float16");
  }
  if (feature_mean.size() != feature_std.size()) {
    throw UsageError(fmt::format("Standardize has {} mean and {} std values; give both or neither", feature_mean.size(),
                                 feature_std.size()));
  }
  for (const std::vector<float>* stats : {&feature_mean, &feature_std}) {
    if (!stats->empty() && stats->size() != static_cast<size_t>(features)) {
      throw UsageError(fmt::format("Standardize has {} {} values for {} features", stats->size(),
                                   stats == &feature_mean ? "mean" : "std", features));
    }
  }
  for (size_t j = 0; j < feature_mean.size(); ++j) {
    if (!std::isfinite(feature_mean[j]) || !(std::isfinite(feature_std[j]) && feature_std[j] > 0)) {
      throw UsageError(fmt::format("Standardize feature {} has mean {} and std {}; both must be finite, std > 0", j,
                                   feature_mean[j], feature_std[j]));
    }
  }
}

}  // namespace stoker::data
