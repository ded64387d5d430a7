// TransformSpec::describe(): a spec as the chain that makes it, in torchvision's notation, with
// torchvision's defaults left out. Its text parses back to the same spec (parse_transforms).
#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "spec_common.h"
#include "stoker/data/transform.h"

namespace stoker::data {

namespace spec {

const char* color_op_value_name(ColorOp op) {
  switch (op) {
    case ColorOp::kPosterize:
      return "bits";
    case ColorOp::kSolarize:
      return "threshold";
    case ColorOp::kAdjustSharpness:
      return "sharpness_factor";
    default:
      return nullptr;
  }
}

const char* first_color_op(const TransformSpec& spec) {
  for (size_t i = 0; i < spec.color_ops.size(); ++i) {
    if (spec.color_ops[i].enabled()) return to_string(static_cast<ColorOp>(i));
  }
  return nullptr;
}

std::string size_text(int height, int width) {
  return height == width ? fmt::format("{}", height) : fmt::format("({}, {})", height, width);
}

const char* geometry_name(Geometry geometry) {
  switch (geometry) {
    case Geometry::kRandomResizedCrop:
      return "RandomResizedCrop";
    case Geometry::kResizeCenterCrop:
    case Geometry::kCenterCrop:
      return "CenterCrop";
    case Geometry::kRandomCrop:
      return "RandomCrop";
    case Geometry::kNone:
      break;
  }
  return "output";
}

}  // namespace spec

namespace {

// A range as torchvision's arguments take it: d for (-d, d), else (min, max).
std::string range_text(double lo, double hi) {
  return lo == -hi && hi >= 0 ? fmt::format("{}", hi) : fmt::format("({}, {})", lo, hi);
}

// `transform` inside RandomApply when it runs on a share of the samples only.
std::string applied_text(const std::string& transform, double apply_p) {
  return apply_p == 1 ? transform : fmt::format("RandomApply([{}], p={})", transform, apply_p);
}

std::string affine_text(const AffineSpec& a) {
  std::string s = "RandomAffine(" + range_text(a.min_degrees, a.max_degrees);
  if (a.translate) s += fmt::format(", translate=({}, {})", a.translate_x, a.translate_y);
  if (a.scale) s += fmt::format(", scale=({}, {})", a.scale_min, a.scale_max);
  if (a.shear_y) {
    s += fmt::format(", shear=({}, {}, {}, {})", a.shear_x_min, a.shear_x_max, a.shear_y_min, a.shear_y_max);
  } else if (a.shear) {
    s += ", shear=" + range_text(a.shear_x_min, a.shear_x_max);
  }
  if (a.interpolation == Interpolation::kBilinear) s += ", interpolation=bilinear";
  if (a.fill != std::array<float, 3>{0, 0, 0}) s += fmt::format(", fill=({}, {}, {})", a.fill[0], a.fill[1], a.fill[2]);
  return s + ")";
}

std::string color_op_text(ColorOp op, const ColorOpSpec& c) {
  return spec::color_op_value_name(op) ? fmt::format("{}({}, p={})", to_string(op), c.value, c.p)
                                       : fmt::format("{}(p={})", to_string(op), c.p);
}

std::string triple_text(const std::array<float, 3>& v) { return fmt::format("({}, {}, {})", v[0], v[1], v[2]); }

const char* policy_name(AutoAugmentPolicy policy) {
  switch (policy) {
    case AutoAugmentPolicy::kCifar10:
      return "cifar10";
    case AutoAugmentPolicy::kSvhn:
      return "svhn";
    case AutoAugmentPolicy::kImageNet:
      break;
  }
  return "imagenet";
}

// The arguments that differ from torchvision's defaults, e.g. "RandAugment(magnitude=5)".
std::string auto_augment_text(const AutoAugmentSpec& a) {
  const AutoAugmentSpec defaults;
  std::vector<std::string> args;
  if (a.kind == AutoAugmentKind::kAutoAugment && a.policy != defaults.policy) {
    args.push_back(fmt::format("policy={}", policy_name(a.policy)));
  }
  if (a.kind == AutoAugmentKind::kRandAugment) {
    if (a.num_ops != defaults.num_ops) args.push_back(fmt::format("num_ops={}", a.num_ops));
    if (a.magnitude != defaults.magnitude) args.push_back(fmt::format("magnitude={}", a.magnitude));
  }
  const bool mix = a.kind == AutoAugmentKind::kAugMix;
  if (mix) {
    if (a.severity != defaults.severity) args.push_back(fmt::format("severity={}", a.severity));
    if (a.mixture_width != defaults.mixture_width) args.push_back(fmt::format("mixture_width={}", a.mixture_width));
    if (a.chain_depth != defaults.chain_depth) args.push_back(fmt::format("chain_depth={}", a.chain_depth));
    if (a.alpha != defaults.alpha) args.push_back(fmt::format("alpha={}", a.alpha));
    if (!a.all_ops) args.emplace_back("all_ops=False");
  }
  if (a.kind != AutoAugmentKind::kAutoAugment && !mix && a.num_magnitude_bins != defaults.num_magnitude_bins) {
    args.push_back(fmt::format("num_magnitude_bins={}", a.num_magnitude_bins));
  }
  // Each one's default: bilinear for AugMix, nearest for the others.
  if ((a.interpolation == Interpolation::kBilinear) != mix) {
    args.push_back(fmt::format("interpolation={}", mix ? "nearest" : "bilinear"));
  }
  if (a.has_fill) args.push_back(fmt::format("fill=({}, {}, {})", a.fill[0], a.fill[1], a.fill[2]));
  return fmt::format("{}({})", to_string(a.kind), fmt::join(args, ", "));
}

// "RandomCrop(32, padding=4)": the arguments that differ from torchvision's defaults.
std::string random_crop_text(int height, int width, const PadSpec& pad) {
  std::string s = "RandomCrop(" + spec::size_text(height, width);
  if (pad.left == pad.right && pad.top == pad.bottom) {
    if (pad.left == pad.top && pad.left > 0) {
      s += fmt::format(", padding={}", pad.left);
    } else if (pad.left != pad.top) {
      s += fmt::format(", padding=({}, {})", pad.left, pad.top);
    }
  } else {
    s += fmt::format(", padding=({}, {}, {}, {})", pad.left, pad.top, pad.right, pad.bottom);
  }
  if (pad.if_needed) s += ", pad_if_needed=True";
  if (pad.fill != PadSpec{}.fill) {
    s += fmt::format(", fill={}", pad.fill[0] == pad.fill[1] && pad.fill[1] == pad.fill[2]
                                      ? fmt::format("{}", pad.fill[0])
                                      : triple_text(pad.fill));
  }
  if (pad.mode != PaddingMode::kConstant) s += fmt::format(", padding_mode={}", to_string(pad.mode));
  return s + ")";
}

std::string erasing_text(const RandomErasingSpec& e) {
  const RandomErasingSpec defaults;
  std::string s = fmt::format("RandomErasing(p={}", e.p);
  if (e.scale_min != defaults.scale_min || e.scale_max != defaults.scale_max) {
    s += fmt::format(", scale=({}, {})", e.scale_min, e.scale_max);
  }
  if (e.ratio_min != defaults.ratio_min || e.ratio_max != defaults.ratio_max) {
    s += fmt::format(", ratio=({}, {})", e.ratio_min, e.ratio_max);
  }
  if (e.random_value) {
    s += ", value=random";
  } else if (e.value != defaults.value) {
    s += fmt::format(", value={}", e.value[0] == e.value[1] && e.value[1] == e.value[2] ? fmt::format("{}", e.value[0])
                                                                                        : triple_text(e.value));
  }
  return s + ")";
}

}  // namespace

std::string TransformSpec::describe() const {
  std::vector<std::string> parts;
  // The filter goes on the Resize, else on the RandomResizedCrop: the calls that take it.
  const std::string interpolation = resample == ResampleFilter::kBicubic ? ", interpolation=bicubic" : "";
  // Resize((h, w)) keeps its pair even when square: Resize(224) would be the shorter side.
  if (resize.shorter > 0) {
    parts.push_back(resize.max_size > 0
                        ? fmt::format("Resize({}, max_size={}{})", resize.shorter, resize.max_size, interpolation)
                        : fmt::format("Resize({}{})", resize.shorter, interpolation));
  } else if (resize.enabled()) {
    parts.push_back(fmt::format("Resize(({}, {}){})", resize.height, resize.width, interpolation));
  }
  const bool whole_resized = resize.shorter == 0 && resize.width == out_width && resize.height == out_height;
  switch (geometry) {
    case Geometry::kRandomResizedCrop: {
      std::string s = "RandomResizedCrop(" + spec::size_text(out_height, out_width);
      if (scale_min != spec::kDefaultScaleMin || scale_max != spec::kDefaultScaleMax) {
        s += fmt::format(", scale=({}, {})", scale_min, scale_max);
      }
      if (ratio_min != spec::kDefaultRatioMin || ratio_max != spec::kDefaultRatioMax) {
        s += fmt::format(", ratio=({}, {})", ratio_min, ratio_max);
      }
      if (!resize.enabled()) s += interpolation;
      parts.push_back(s + ")");
      break;
    }
    case Geometry::kResizeCenterCrop:  // Resize((h, w)) alone crops all of it
      if (!whole_resized) parts.push_back(fmt::format("CenterCrop({})", spec::size_text(out_height, out_width)));
      break;
    case Geometry::kRandomCrop:
      parts.push_back(random_crop_text(out_height, out_width, pad));
      break;
    case Geometry::kCenterCrop:
      parts.push_back(fmt::format("CenterCrop({}, resize=False)", spec::size_text(out_height, out_width)));
      break;
    case Geometry::kNone:
      parts.emplace_back("none");
      break;
  }
  if (standardize) parts.emplace_back("Standardize");
  if (flip_p > 0) parts.push_back(fmt::format("RandomHorizontalFlip({})", flip_p));
  if (vflip_p > 0) parts.push_back(fmt::format("RandomVerticalFlip({})", vflip_p));
  if (rotation.enabled()) {
    const RotationSpec& r = rotation;
    std::string s = "RandomRotation(" + range_text(r.min_degrees, r.max_degrees);
    if (r.interpolation == Interpolation::kBilinear) s += ", interpolation=bilinear";
    if (r.fill != std::array<float, 3>{0, 0, 0}) s += ", fill=" + triple_text(r.fill);
    parts.push_back(applied_text(s + ")", r.apply_p));
  }
  if (affine.enabled()) parts.push_back(applied_text(affine_text(affine), affine.apply_p));
  if (auto_augment.enabled()) parts.push_back(auto_augment_text(auto_augment));
  if (jitter.enabled()) {
    std::string args;
    const std::array<std::pair<const char*, double>, 4> components{{{"brightness", jitter.brightness},
                                                                    {"contrast", jitter.contrast},
                                                                    {"saturation", jitter.saturation},
                                                                    {"hue", jitter.hue}}};
    for (const auto& [name, value] : components) {
      if (value == 0) continue;
      args += fmt::format("{}{}={}", args.empty() ? "" : ", ", name, value);
    }
    parts.push_back(applied_text("ColorJitter(" + args + ")", jitter.apply_p));
  }
  if (grayscale_p > 0) parts.push_back(fmt::format("RandomGrayscale({})", grayscale_p));
  if (blur.enabled()) {
    const std::string k = blur.kernel_w == blur.kernel_h ? fmt::format("{}", blur.kernel_w)
                                                         : fmt::format("({}, {})", blur.kernel_w, blur.kernel_h);
    const std::string sigma = blur.sigma_min == blur.sigma_max
                                  ? fmt::format("{}", blur.sigma_min)
                                  : fmt::format("({}, {})", blur.sigma_min, blur.sigma_max);
    parts.push_back(applied_text(fmt::format("GaussianBlur({}, sigma={})", k, sigma), blur.apply_p));
  }
  for (size_t i = 0; i < color_ops.size(); ++i) {
    if (color_ops[i].enabled()) parts.push_back(color_op_text(static_cast<ColorOp>(i), color_ops[i]));
  }
  if (channels == 1 && features == 0) parts.emplace_back("Grayscale");
  if (normalize) {
    if (mean == spec::kImagenetMean && std == spec::kImagenetStd) {
      parts.emplace_back("Normalize");
    } else {
      parts.push_back(fmt::format("Normalize(mean={}, std={})", triple_text(mean), triple_text(std)));
    }
  }
  if (erasing.enabled()) parts.push_back(erasing_text(erasing));
  std::string text;
  for (const std::string& part : parts) {
    if (!text.empty()) text += fmt::format(" {} ", spec::kMiddleDot);
    text += part;
  }
  return fmt::format("{} {} {} {}", text, spec::kArrow, to_string(dtype), to_string(layout));
}

}  // namespace stoker::data
