// The chain builder: calls applied to a TransformSpec (chain_builder.h). Each transform a chain
// may name is one row of ChainBuilder::kTransforms: its name and the member that binds its
// arguments and sets its fields.
#include "chain_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "call_args.h"
#include "data/transform/spec_common.h"
#include "stoker/core/error.h"
#include "stoker/core/suggest.h"

namespace stoker::data::chain {

namespace {

// Applying calls to a spec. The chain always runs in the fixed order of transform.h, so the
// order of the calls does not matter; what does is that each thing is said once.

class ChainBuilder {
 public:
  ChainBuilder() {
    // Nothing asked for, nothing done: no geometry (output = source size, filled in by the
    // pipeline), no flip, no jitter, no Normalize; float32 NCHW like ToTensor.
    spec_.geometry = Geometry::kNone;
    spec_.out_width = 0;
    spec_.out_height = 0;
  }

  void apply(const Call& call) {
    // Each transform once; RandomApply may wrap several (its transform is checked inside).
    if (call.name != "RandomApply" && !seen_.insert(call.name).second) {
      throw UsageError(fmt::format("{} appears twice in the transform chain", call.name));
    }
    for (const Transform& t : kTransforms) {
      if (t.name == call.name) {
        t.apply(*this, call);
        return;
      }
    }
    unknown_transform(call.name);
  }

  TransformSpec finish() {
    if (!uint8_by_.empty() && dtype_by_.empty()) spec_.dtype = DType::kUint8;
    if (resize_.enabled()) {
      if (geometry_by_ == "none") {
        throw UsageError(fmt::format("{} resizes and 'none' keeps the source's size; give one of the two", resize_by_));
      }
      spec_.resize = resize_;
    }
    if (crop_[0] > 0 && !crop_resizes_ && !resize_.enabled()) {
      spec_.geometry = Geometry::kCenterCrop;
      spec_.out_height = crop_[0];
      spec_.out_width = crop_[1];
    } else if (crop_[0] > 0) {  // after a Resize, CenterCrop(m) and CenterCrop(m, resize=False) agree
      spec_.geometry = Geometry::kResizeCenterCrop;
      spec_.out_height = crop_[0];
      spec_.out_width = crop_[1];
      // A CenterCrop alone resizes the shorter side to the crop size first (to its larger
      // side for a non-square crop, so that the crop fits).
      if (!resize_.enabled()) spec_.resize.shorter = std::max(crop_[0], crop_[1]);
    } else if (resize_.enabled() && geometry_by_.empty()) {  // Resize alone
      if (resize_.shorter > 0) {
        throw UsageError(fmt::format(
            "{} resizes the shorter side, so images of other shapes come out in other sizes; add a crop after it "
            "(CenterCrop({}), RandomCrop({}) or RandomResizedCrop({})), or resize to one size with Resize(({}, {}))",
            resize_by_, resize_.shorter, resize_.shorter, resize_.shorter, resize_.shorter, resize_.shorter));
      }
      spec_.geometry = Geometry::kResizeCenterCrop;  // the centre crop of the whole resized image
      spec_.out_height = resize_.height;
      spec_.out_width = resize_.width;
    }
    spec_.validate();
    return spec_;
  }

 private:
  // Every transform a chain may name and what it does to the spec. Names that are not `listed`
  // are lower-case aliases; the rest are what an unknown name's message lists, in this order.
  struct Transform {
    std::string_view name;
    void (*apply)(ChainBuilder& builder, const Call& call);
    bool listed = true;
  };
  static const std::array<Transform, 40> kTransforms;

  [[noreturn]] static void unknown_transform(std::string_view name) {
    std::vector<std::string_view> known;
    for (const Transform& t : kTransforms) {
      if (t.listed) known.push_back(t.name);
    }
    std::string message = fmt::format("unknown transform '{}' (known: {})", name, fmt::join(known, ", "));
    const std::string_view best = closest(name, known);
    if (!best.empty()) message += fmt::format("; did you mean '{}'?", best);
    throw UsageError(message);
  }

  void grayscale(const Call& call) {
    const auto args = bind(call, {"num_output_channels"});
    if (args[0] && to_number(call, "num_output_channels", *args[0]) != 1) {
      throw UsageError(fmt::format(
          "Grayscale num_output_channels must be 1 (got {}); stoker's Grayscale gives one channel", args[0]->text));
    }
    spec_.channels = 1;
  }

  // PILToTensor, ToImage: uint8 unless a ConvertImageDtype / ToDtype follows.
  void uint8_image(const Call& call) {
    bind(call, {});
    uint8_by_ = call.name;
  }

  void layout(const Call& call, Layout layout) {
    bind(call, {});
    if (!layout_by_.empty()) {
      throw UsageError(fmt::format("{} and {} both set the output layout; give one", layout_by_, call.name));
    }
    layout_by_ = call.name;
    spec_.layout = layout;
  }

  void no_geometry(const Call& call) {
    bind(call, {});
    claim_geometry(call);
    spec_.geometry = Geometry::kNone;
  }

  // A transform whose one argument is its probability `p` (torchvision's default otherwise).
  double probability(const Call& call, double default_p) {
    const auto args = bind(call, {"p"});
    return args[0] ? to_number(call, "p", *args[0]) : default_p;
  }

  static std::optional<ColorOp> color_op_named(const std::string& name) {
    for (int i = 0; i < kColorOps; ++i) {
      if (name == to_string(static_cast<ColorOp>(i))) return static_cast<ColorOp>(i);
    }
    return std::nullopt;
  }

  // torchvision's RandomInvert(p=0.5), RandomPosterize(bits, p=0.5), RandomSolarize(threshold,
  // p=0.5), RandomAdjustSharpness(sharpness_factor, p=0.5), RandomAutocontrast(p=0.5),
  // RandomEqualize(p=0.5).
  void color_op(const Call& call, ColorOp op) {
    ColorOpSpec& c = spec_.color_ops[static_cast<size_t>(op)];
    const char* value_name = spec::color_op_value_name(op);
    if (value_name == nullptr) {
      c.p = probability(call, 0.5);
      return;
    }
    const auto args = bind(call, {value_name, "p"});
    if (!args[0]) {
      const char* example = op == ColorOp::kPosterize  ? "4, p=0.5"
                            : op == ColorOp::kSolarize ? "128, p=0.2"
                                                       : "2, p=0.5";
      throw UsageError(
          fmt::format("{} needs its {}, e.g. {}({}) (got '{}')", call.name, value_name, call.name, example, call.text));
    }
    c.value =
        op == ColorOp::kPosterize ? to_int(call, value_name, *args[0], 0, 8) : to_number(call, value_name, *args[0]);
    c.p = args[1] ? to_number(call, "p", *args[1]) : 0.5;
  }

  // One crop (or none), after an optional Resize.
  void claim_geometry(const Call& call) {
    if (!geometry_by_.empty()) {
      throw UsageError(fmt::format(
          "{} conflicts with {}: give one of RandomResizedCrop(size), RandomCrop(size), CenterCrop(size) (each "
          "after an optional Resize) or none",
          call.name, geometry_by_));
    }
    geometry_by_ = call.name;
  }

  void random_resized_crop(const Call& call) {
    claim_geometry(call);
    const auto args = bind(call, {"size", "scale", "ratio", "interpolation", "antialias"});
    if (!args[0]) {
      throw UsageError(
          fmt::format("RandomResizedCrop needs a size, e.g. RandomResizedCrop(224) (got '{}')", call.text));
    }
    set_resampling(call, args[3], args[4]);
    const auto [h, w] = to_size_pair(call, "size", *args[0]);
    spec_.geometry = Geometry::kRandomResizedCrop;
    spec_.out_height = h;
    spec_.out_width = w;
    spec_.scale_min = spec::kDefaultScaleMin;
    spec_.scale_max = spec::kDefaultScaleMax;
    spec_.ratio_min = spec::kDefaultRatioMin;
    spec_.ratio_max = spec::kDefaultRatioMax;
    if (args[1]) {
      const auto [lo, hi] = to_range(call, "scale", *args[1]);
      spec_.scale_min = lo;
      spec_.scale_max = hi;
    }
    if (args[2]) {
      const auto [lo, hi] = to_range(call, "ratio", *args[2]);
      spec_.ratio_min = lo;
      spec_.ratio_max = hi;
    }
  }

  // torchvision's Resize(size, interpolation, max_size, antialias): an int (or (size,)) for
  // the shorter side, (height, width) for exactly that size.
  void resize(const Call& call) {
    const auto args = bind(call, {"size", "interpolation", "max_size", "antialias"});
    if (!args[0]) {
      throw UsageError(
          fmt::format("Resize needs a size, e.g. Resize(256) or Resize((224, 224)) (got '{}')", call.text));
    }
    set_resampling(call, args[1], args[3]);
    resize_by_ = call.text;
    const bool pair = args[0]->kind == Value::Kind::kTuple && args[0]->items.size() != 1;
    if (pair) {
      const auto [h, w] = to_size_pair(call, "size", *args[0]);
      resize_.height = h;
      resize_.width = w;
    } else {
      resize_.shorter = to_size_pair(call, "size", *args[0])[0];
    }
    if (args[2] && !is_none(*args[2])) {
      if (pair) {
        throw UsageError(
            fmt::format("Resize max_size applies to an int size, the shorter side (got size {})", args[0]->text));
      }
      resize_.max_size = to_int(call, "max_size", *args[2], resize_.shorter + 1, spec::kMaxSize);
    }
  }

  // stoker resamples with Pillow's antialiased filters, bilinear (torchvision's default on a
  // PIL image) or bicubic; the arguments that ask for one are accepted, others refused. One
  // resample makes the output, so a Resize and a RandomResizedCrop after it share their filter.
  void set_resampling(const Call& call, const Value* interpolation, const Value* antialias) {
    if (antialias && !is_none(*antialias) && !to_bool(call, "antialias", *antialias)) {
      throw UsageError(fmt::format(
          "{} antialias must be True or None (got '{}'): stoker always antialiases, as torchvision does on PIL "
          "images",
          call.name, antialias->text));
    }
    if (!interpolation) return;
    // PIL's constants (Image.BILINEAR = 2, Image.BICUBIC = 3) are what torchvision took before
    // InterpolationMode.
    const bool number = interpolation->kind == Value::Kind::kNumber;
    const std::string word = interpolation->kind == Value::Kind::kWord ? enum_word(*interpolation) : "";
    ResampleFilter filter;
    if ((number && interpolation->number == 2) || word == "bilinear") {
      filter = ResampleFilter::kBilinear;
    } else if ((number && interpolation->number == 3) || word == "bicubic") {
      filter = ResampleFilter::kBicubic;
    } else {
      throw UsageError(fmt::format(
          "{} interpolation must be bilinear or bicubic (got '{}'): stoker resamples with Pillow's antialiased "
          "bilinear or bicubic filter",
          call.name, interpolation->text));
    }
    if (!resample_by_.empty() && filter != spec_.resample) {
      throw UsageError(fmt::format(
          "{} and {} ask for different interpolations ({} and {}); stoker makes the crop in one resample, so give "
          "one",
          resample_by_, call.name, to_string(spec_.resample), to_string(filter)));
    }
    resample_by_ = call.name;
    spec_.resample = filter;
  }

  void center_crop(const Call& call) {
    claim_geometry(call);
    const auto args = bind(call, {"size", "resize"});
    if (!args[0]) {
      throw UsageError(fmt::format("CenterCrop needs a size, e.g. CenterCrop(224) (got '{}')", call.text));
    }
    crop_ = to_size_pair(call, "size", *args[0]);
    if (args[1]) crop_resizes_ = to_bool(call, "resize", *args[1]);
  }

  // torchvision's RandomCrop(size, padding=None, pad_if_needed=False, fill=0,
  // padding_mode='constant').
  void random_crop(const Call& call) {
    claim_geometry(call);
    const auto args = bind(call, {"size", "padding", "pad_if_needed", "fill", "padding_mode"});
    if (!args[0]) {
      throw UsageError(fmt::format("RandomCrop needs a size, e.g. RandomCrop(32, padding=4) (got '{}')", call.text));
    }
    const auto [h, w] = to_size_pair(call, "size", *args[0]);
    spec_.geometry = Geometry::kRandomCrop;
    spec_.out_height = h;
    spec_.out_width = w;
    PadSpec& pad = spec_.pad;
    pad = PadSpec{};
    if (args[1] && !is_none(*args[1])) padding(call, *args[1]);
    if (args[2]) pad.if_needed = to_bool(call, "pad_if_needed", *args[2]);
    if (args[3]) pad.fill = to_channels(call, "fill", *args[3]);
    if (args[4]) {
      const std::string mode = to_word(call, "padding_mode", *args[4], {"constant", "edge", "reflect", "symmetric"});
      pad.mode = mode == "edge"        ? PaddingMode::kEdge
                 : mode == "reflect"   ? PaddingMode::kReflect
                 : mode == "symmetric" ? PaddingMode::kSymmetric
                                       : PaddingMode::kConstant;
    }
  }

  // An int for every side, (left/right, top/bottom) or (left, top, right, bottom), as
  // torchvision's padding.
  void padding(const Call& call, const Value& v) {
    const auto side = [&](const Value& x) { return to_int(call, "padding", x, 0, spec::kMaxSize); };
    PadSpec& pad = spec_.pad;
    if (v.kind != Value::Kind::kTuple) {
      pad.left = pad.top = pad.right = pad.bottom = side(v);
    } else if (v.items.size() == 1) {
      pad.left = pad.top = pad.right = pad.bottom = side(v.items[0]);
    } else if (v.items.size() == 2) {
      pad.left = pad.right = side(v.items[0]);
      pad.top = pad.bottom = side(v.items[1]);
    } else if (v.items.size() == 4) {
      pad.left = side(v.items[0]);
      pad.top = side(v.items[1]);
      pad.right = side(v.items[2]);
      pad.bottom = side(v.items[3]);
    } else {
      throw UsageError(fmt::format(
          "RandomCrop padding must be an int, (left/right, top/bottom) or (left, top, right, bottom) (got '{}')",
          v.text));
    }
  }

  static bool is_none(const Value& v) { return v.kind == Value::Kind::kWord && v.text == "None"; }

  // Python's True / False (and true / false, 1 / 0).
  static bool to_bool(const Call& call, std::string_view param, const Value& v) {
    if (v.kind == Value::Kind::kWord && (v.text == "True" || v.text == "true")) return true;
    if (v.kind == Value::Kind::kWord && (v.text == "False" || v.text == "false")) return false;
    if (v.kind == Value::Kind::kNumber && (v.number == 0 || v.number == 1)) return v.number == 1;
    throw UsageError(fmt::format("{} {} must be True or False (got '{}')", call.name, param, v.text));
  }

  // A whole number in [lo, hi].
  static int to_int(const Call& call, std::string_view param, const Value& v, int lo, int hi) {
    const double x = to_number(call, param, v);
    if (std::floor(x) != x || x < lo || x > hi) {
      throw UsageError(
          fmt::format("{} {} must be a whole number in {}..{} (got '{}')", call.name, param, lo, hi, v.text));
    }
    return static_cast<int>(x);
  }

  // A word as a Python enum's member name, lower case: InterpolationMode.BILINEAR and
  // AutoAugmentPolicy.IMAGENET are read as bilinear and imagenet.
  static std::string enum_word(const Value& v) {
    std::string word = v.text;
    if (const size_t dot = word.rfind('.'); v.kind == Value::Kind::kWord && dot != std::string::npos) {
      word = word.substr(dot + 1);
    }
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    return word;
  }

  // The warps' interpolation: nearest or bilinear (InterpolationMode.NEAREST / .BILINEAR).
  static Interpolation to_interpolation(const Call& call, const Value& v) {
    return to_word(call, "interpolation", v, {"nearest", "bilinear"}) == "bilinear" ? Interpolation::kBilinear
                                                                                    : Interpolation::kNearest;
  }

  // A word out of `allowed`, read by enum_word.
  static std::string to_word(const Call& call, std::string_view param, const Value& v,
                             std::initializer_list<std::string_view> allowed) {
    const std::string word = enum_word(v);
    for (const std::string_view a : allowed) {
      if (v.kind == Value::Kind::kWord && word == a) return word;
    }
    throw UsageError(
        fmt::format("{} {} must be one of {} (got '{}')", call.name, param, fmt::join(allowed, ", "), v.text));
  }

  void auto_augment(const Call& call) {
    if (!auto_augment_by_.empty()) {
      throw UsageError(fmt::format(
          "{} conflicts with {}: give one automatic augmentation (TrivialAugmentWide, RandAugment, AutoAugment or "
          "AugMix)",
          call.name, auto_augment_by_));
    }
    auto_augment_by_ = call.name;
    AutoAugmentSpec& a = spec_.auto_augment;
    std::vector<const Value*> args;
    if (call.name == "TrivialAugmentWide") {
      a.kind = AutoAugmentKind::kTrivialAugmentWide;
      args = bind(call, {"num_magnitude_bins", "interpolation", "fill"});
    } else if (call.name == "RandAugment") {
      a.kind = AutoAugmentKind::kRandAugment;
      const auto all = bind(call, {"num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill"});
      if (all[0]) a.num_ops = to_int(call, "num_ops", *all[0], 0, AutoAugmentSpec::kMaxOps);
      if (all[1]) a.magnitude = to_int(call, "magnitude", *all[1], 0, 999);
      args = {all[2], all[3], all[4]};
    } else if (call.name == "AugMix") {
      a.kind = AutoAugmentKind::kAugMix;
      a.interpolation = Interpolation::kBilinear;  // AugMix's default
      const auto all =
          bind(call, {"severity", "mixture_width", "chain_depth", "alpha", "all_ops", "interpolation", "fill"});
      if (all[0]) a.severity = to_int(call, "severity", *all[0], 1, 10);
      if (all[1]) a.mixture_width = to_int(call, "mixture_width", *all[1], 1, AutoAugmentSpec::kMaxChains);
      if (all[2])
        a.chain_depth = to_int(call, "chain_depth", *all[2], -1, AutoAugmentSpec::kMaxDepth);  // 0: validate()
      if (all[3]) a.alpha = to_number(call, "alpha", *all[3]);
      if (all[4]) a.all_ops = to_bool(call, "all_ops", *all[4]);
      args = {nullptr, all[5], all[6]};
    } else {
      a.kind = AutoAugmentKind::kAutoAugment;
      const auto all = bind(call, {"policy", "interpolation", "fill"});
      if (all[0]) {
        const std::string policy = to_word(call, "policy", *all[0], {"imagenet", "cifar10", "svhn"});
        a.policy = policy == "cifar10" ? AutoAugmentPolicy::kCifar10
                   : policy == "svhn"  ? AutoAugmentPolicy::kSvhn
                                       : AutoAugmentPolicy::kImageNet;
      }
      args = {nullptr, all[1], all[2]};
    }
    if (args[0]) a.num_magnitude_bins = to_int(call, "num_magnitude_bins", *args[0], 2, 1000);
    if (args[1]) {
      a.interpolation = to_interpolation(call, *args[1]);
    }
    if (args[2] && !is_none(*args[2])) {
      a.has_fill = true;
      a.fill = to_channels(call, "fill", *args[2]);
    }
  }

  // torchvision's GaussianBlur(kernel_size, sigma=(0.1, 2.0)): an int or (kx, ky), odd; a
  // sigma or (min, max).
  void gaussian_blur(const Call& call) {
    const auto args = bind(call, {"kernel_size", "sigma"});
    if (!args[0]) {
      throw UsageError(fmt::format("GaussianBlur needs a kernel_size, e.g. GaussianBlur(23) (got '{}')", call.text));
    }
    GaussianBlurSpec& b = spec_.blur;
    b = GaussianBlurSpec{};
    if (args[0]->kind == Value::Kind::kTuple && args[0]->items.size() == 2) {  // torchvision's (x, y)
      b.kernel_w = to_int(call, "kernel_size", args[0]->items[0], 1, spec::kMaxSize);
      b.kernel_h = to_int(call, "kernel_size", args[0]->items[1], 1, spec::kMaxSize);
    } else {
      b.kernel_w = b.kernel_h = to_size_pair(call, "kernel_size", *args[0])[0];
    }
    if (args[1] && args[1]->kind == Value::Kind::kTuple) {
      const auto [lo, hi] = to_range(call, "sigma", *args[1]);
      b.sigma_min = lo;
      b.sigma_max = hi;
    } else if (args[1]) {
      b.sigma_min = b.sigma_max = to_number(call, "sigma", *args[1]);
    }
  }

  // torchvision's _setup_angle: a number d >= 0 is (-d, d), a pair is (min, max).
  static std::array<double, 2> symmetric_range(const Call& call, std::string_view param, const Value& v) {
    if (v.kind == Value::Kind::kTuple) return to_range(call, param, v);
    const double d = to_number(call, param, v);
    if (d < 0) {
      throw UsageError(fmt::format("{} {} must be >= 0 for a single number (got {}); give (min, max) for a range",
                                   call.name, param, d));
    }
    return {-d, d};
  }

  // torchvision's RandomRotation(degrees, interpolation, expand, center, fill).
  void random_rotation(const Call& call) {
    const auto args = bind(call, {"degrees", "interpolation", "expand", "center", "fill"});
    if (!args[0]) {
      throw UsageError(fmt::format("RandomRotation needs degrees, e.g. RandomRotation(15) (got '{}')", call.text));
    }
    RotationSpec& r = spec_.rotation;
    r = RotationSpec{};
    std::tie(r.min_degrees, r.max_degrees) = std::tuple_cat(symmetric_range(call, "degrees", *args[0]));
    if (args[1]) {
      r.interpolation = to_interpolation(call, *args[1]);
    }
    if (args[2] && to_bool(call, "expand", *args[2])) {
      throw UsageError(
          "RandomRotation expand=True changes the image's size; stoker's samples have one size, so "
          "give expand=False (the default)");
    }
    if (args[3] && !is_none(*args[3])) {
      throw UsageError(fmt::format("RandomRotation center must be None, the image's centre (got '{}')", args[3]->text));
    }
    if (args[4] && !is_none(*args[4])) r.fill = to_channels(call, "fill", *args[4]);
  }

  // torchvision's RandomAffine(degrees, translate, scale, shear, interpolation, fill, center).
  void random_affine(const Call& call) {
    const auto args = bind(call, {"degrees", "translate", "scale", "shear", "interpolation", "fill", "center"});
    if (!args[0]) {
      throw UsageError(
          fmt::format("RandomAffine needs degrees, e.g. RandomAffine(10, translate=(0.1, 0.1)) or RandomAffine(0, "
                      "scale=(0.9, 1.1)) (got '{}')",
                      call.text));
    }
    AffineSpec& a = spec_.affine;
    a = AffineSpec{};
    std::tie(a.min_degrees, a.max_degrees) = std::tuple_cat(symmetric_range(call, "degrees", *args[0]));
    if (args[1] && !is_none(*args[1])) {
      a.translate = true;
      std::tie(a.translate_x, a.translate_y) = std::tuple_cat(to_pair(call, "translate", *args[1], "(tx, ty)"));
    }
    if (args[2] && !is_none(*args[2])) {
      a.scale = true;
      std::tie(a.scale_min, a.scale_max) = std::tuple_cat(to_range(call, "scale", *args[2]));
    }
    if (args[3] && !is_none(*args[3])) {
      a.shear = true;
      const Value& v = *args[3];
      if (v.kind == Value::Kind::kTuple && v.items.size() == 4) {
        a.shear_y = true;
        a.shear_x_min = to_number(call, "shear", v.items[0]);
        a.shear_x_max = to_number(call, "shear", v.items[1]);
        a.shear_y_min = to_number(call, "shear", v.items[2]);
        a.shear_y_max = to_number(call, "shear", v.items[3]);
      } else if (v.kind == Value::Kind::kTuple && v.items.size() != 2) {
        throw UsageError(fmt::format(
            "RandomAffine shear must be a number, (min, max) for x or (x min, x max, y min, y max) (got '{}')",
            v.text));
      } else {
        std::tie(a.shear_x_min, a.shear_x_max) = std::tuple_cat(symmetric_range(call, "shear", v));
      }
    }
    if (args[4]) a.interpolation = to_interpolation(call, *args[4]);
    if (args[5] && !is_none(*args[5])) a.fill = to_channels(call, "fill", *args[5]);
    if (args[6] && !is_none(*args[6])) {
      throw UsageError(fmt::format("RandomAffine center must be None, the image's centre (got '{}')", args[6]->text));
    }
  }

  // torchvision's RandomApply(transforms, p=0.5) around one transform that has no probability
  // of its own: its spec's apply_p.
  void random_apply(const Call& call) {
    const auto args = bind(call, {"transforms", "p"});
    static constexpr std::string_view kTakes =
        "ColorJitter, GaussianBlur, RandomRotation, RandomAffine or a colour operation (RandomInvert, "
        "RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize)";
    if (!args[0] || args[0]->kind != Value::Kind::kTuple || args[0]->items.empty()) {
      throw UsageError(fmt::format(
          "RandomApply needs a list of one transform ({}), e.g. RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], "
          "p=0.8) (got '{}')",
          kTakes, call.text));
    }
    const std::vector<Value>& items = args[0]->items;
    if (items.size() > 1) {
      throw UsageError(fmt::format(
          "RandomApply takes one transform in stoker (got {}: {}); write one RandomApply per transform, knowing "
          "that each then draws its own chance where torchvision's one RandomApply draws one for all",
          items.size(), args[0]->text));
    }
    const Value& inner = items[0];
    const Call applied =
        inner.kind == Value::Kind::kCall ? *inner.call : Call{transform_name(inner.text), inner.text, {}};
    const std::string& name = applied.name;
    const double p = args[1] ? to_number(call, "p", *args[1]) : 0.5;
    if (const std::optional<ColorOp> op = color_op_named(name)) {
      // Its own coin and RandomApply's, both drawn per sample: one coin of the product, so
      // RandomApply's p is checked here; validate() sees only the product.
      apply(applied);
      if (!(p >= 0 && p <= 1)) {
        throw UsageError(fmt::format("RandomApply p must be in [0, 1] (got {}, around {})", p, name));
      }
      spec_.color_ops[static_cast<size_t>(*op)].p *= p;
      return;
    }
    double* apply_p = name == "ColorJitter"      ? &spec_.jitter.apply_p
                      : name == "GaussianBlur"   ? &spec_.blur.apply_p
                      : name == "RandomRotation" ? &spec_.rotation.apply_p
                      : name == "RandomAffine"   ? &spec_.affine.apply_p
                                                 : nullptr;
    if (apply_p == nullptr) {
      const std::string own = name == "Grayscale" ? "; use RandomGrayscale(p)"
                              : name == "RandomErasing" || name == "RandomGrayscale" ||
                                      name == "RandomHorizontalFlip" || name == "RandomVerticalFlip"
                                  ? fmt::format("; {} has a p of its own", name)
                                  : "";
      throw UsageError(fmt::format("RandomApply takes {} (got '{}'){}", kTakes, inner.text, own));
    }
    apply(applied);
    *apply_p = p;  // kept as given: validate() says when it is outside [0, 1]
  }

  // Two numbers, named by `shape` in the message.
  static std::array<double, 2> to_pair(const Call& call, std::string_view param, const Value& v,
                                       std::string_view shape) {
    if (v.kind != Value::Kind::kTuple || v.items.size() != 2) {
      throw UsageError(fmt::format("{} {} must be a pair {} (got '{}')", call.name, param, shape, v.text));
    }
    return {to_number(call, param, v.items[0]), to_number(call, param, v.items[1])};
  }

  void random_erasing(const Call& call) {
    const auto args = bind(call, {"p", "scale", "ratio", "value"});
    RandomErasingSpec& e = spec_.erasing;
    e = RandomErasingSpec{};
    e.p = args[0] ? to_number(call, "p", *args[0]) : 0.5;
    if (args[1]) {
      const auto [lo, hi] = to_range(call, "scale", *args[1]);
      e.scale_min = lo;
      e.scale_max = hi;
    }
    if (args[2]) {
      const auto [lo, hi] = to_range(call, "ratio", *args[2]);
      e.ratio_min = lo;
      e.ratio_max = hi;
    }
    if (args[3] && args[3]->kind == Value::Kind::kWord) {
      if (args[3]->text != "random") {
        throw UsageError(fmt::format(
            "RandomErasing value must be a number, one per channel (r, g, b), or random (got '{}')", args[3]->text));
      }
      e.random_value = true;
    } else if (args[3]) {
      e.value = to_channels(call, "value", *args[3]);
    }
  }

  void color_jitter(const Call& call) {
    const auto args = bind(call, {"brightness", "contrast", "saturation", "hue"});
    static constexpr std::array<std::string_view, 4> kNames{"brightness", "contrast", "saturation", "hue"};
    std::array<double, 4> values{};
    for (size_t i = 0; i < 4; ++i) {
      if (!args[i]) continue;
      if (args[i]->kind == Value::Kind::kTuple) {
        throw UsageError(
            fmt::format("ColorJitter {} must be a single number (got '{}'); ranges (min, max) are not "
                        "supported",
                        kNames[i], args[i]->text));
      }
      values[i] = to_number(call, kNames[i], *args[i]);
    }
    spec_.jitter = {values[0], values[1], values[2], values[3]};
  }

  void normalize(const Call& call) {
    const auto args = bind(call, {"mean", "std"});
    spec_.normalize = true;
    spec_.mean = spec::kImagenetMean;
    spec_.std = spec::kImagenetStd;
    if (!args[0] && !args[1]) return;
    if (args[0] && args[0]->kind == Value::Kind::kWord && !args[1]) {
      if (args[0]->text != "imagenet") {
        throw UsageError(fmt::format("Normalize preset must be 'imagenet' (got '{}')", args[0]->text));
      }
      return;
    }
    if (!args[0] || !args[1]) {
      throw UsageError(fmt::format("Normalize needs both mean and std, or 'imagenet' (got '{}')", call.text));
    }
    spec_.mean = to_channels(call, "mean", *args[0]);
    spec_.std = to_channels(call, "std", *args[1]);
  }

  // torchvision's ConvertImageDtype(dtype) and v2's ToDtype(dtype, scale=False): floats in
  // [0, 1] (scaled as ToTensor scales) or uint8.
  void convert_dtype(const Call& call) {
    const bool v2 = call.name == "ToDtype";
    const auto args = v2 ? bind(call, {"dtype", "scale"}) : bind(call, {"dtype"});
    if (!args[0]) {
      throw UsageError(fmt::format("{} needs a dtype, e.g. {}(torch.float32{}) (got '{}')", call.name, call.name,
                                   v2 ? ", scale=True" : "", call.text));
    }
    const std::string dtype = to_word(call, "dtype", *args[0], {"float", "float32", "half", "float16", "uint8"});
    const DType to = dtype == "uint8"                        ? DType::kUint8
                     : dtype == "half" || dtype == "float16" ? DType::kFloat16
                                                             : DType::kFloat32;
    if (v2 && to != DType::kUint8 && !(args[1] && to_bool(call, "scale", *args[1]))) {
      throw UsageError(fmt::format(
          "{} keeps pixel values 0..255 as floats without scale=True; stoker's float output is in [0, 1] as "
          "ToTensor gives it: write {}({}, scale=True)",
          call.text, call.name, args[0]->text));
    }
    claim_dtype(call, to);
  }

  void set_dtype(const Call& call, DType dtype) {
    bind(call, {});
    claim_dtype(call, dtype);
  }
  void claim_dtype(const Call& call, DType dtype) {
    if (!dtype_by_.empty()) {
      throw UsageError(fmt::format("{} and {} both set the output type; give one", dtype_by_, call.name));
    }
    dtype_by_ = call.name;
    spec_.dtype = dtype;
  }

  TransformSpec spec_;
  std::set<std::string> seen_;
  std::string geometry_by_;  // the crop (or none) given
  std::string dtype_by_;
  std::string resample_by_;  // the call that set an interpolation
  std::string uint8_by_;     // PILToTensor / ToImage: uint8 output unless a dtype is set
  std::string layout_by_;
  std::string auto_augment_by_;
  ResizeSpec resize_;
  std::string resize_by_;          // the Resize call as written
  std::array<int, 2> crop_{0, 0};  // CenterCrop (height, width)
  bool crop_resizes_ = true;       // CenterCrop's resize= (stoker's: Resize(size) first)
};

const std::array<ChainBuilder::Transform, 40> ChainBuilder::kTransforms{{
    {"RandomResizedCrop", [](ChainBuilder& b, const Call& c) { b.random_resized_crop(c); }},
    {"RandomCrop", [](ChainBuilder& b, const Call& c) { b.random_crop(c); }},
    {"Resize", [](ChainBuilder& b, const Call& c) { b.resize(c); }},
    {"CenterCrop", [](ChainBuilder& b, const Call& c) { b.center_crop(c); }},
    {"RandomHorizontalFlip", [](ChainBuilder& b, const Call& c) { b.spec_.flip_p = b.probability(c, 0.5); }},
    {"RandomVerticalFlip", [](ChainBuilder& b, const Call& c) { b.spec_.vflip_p = b.probability(c, 0.5); }},
    {"RandomRotation", [](ChainBuilder& b, const Call& c) { b.random_rotation(c); }},
    {"RandomAffine", [](ChainBuilder& b, const Call& c) { b.random_affine(c); }},
    {"RandomApply", [](ChainBuilder& b, const Call& c) { b.random_apply(c); }},
    {"TrivialAugmentWide", [](ChainBuilder& b, const Call& c) { b.auto_augment(c); }},
    {"RandAugment", [](ChainBuilder& b, const Call& c) { b.auto_augment(c); }},
    {"AutoAugment", [](ChainBuilder& b, const Call& c) { b.auto_augment(c); }},
    {"AugMix", [](ChainBuilder& b, const Call& c) { b.auto_augment(c); }},
    {"ColorJitter", [](ChainBuilder& b, const Call& c) { b.color_jitter(c); }},
    {"RandomErasing", [](ChainBuilder& b, const Call& c) { b.random_erasing(c); }},
    {"Normalize", [](ChainBuilder& b, const Call& c) { b.normalize(c); }},
    {"Grayscale", [](ChainBuilder& b, const Call& c) { b.grayscale(c); }},
    {"RandomGrayscale", [](ChainBuilder& b, const Call& c) { b.spec_.grayscale_p = b.probability(c, 0.1); }},
    {"GaussianBlur", [](ChainBuilder& b, const Call& c) { b.gaussian_blur(c); }},
    {"RandomInvert", [](ChainBuilder& b, const Call& c) { b.color_op(c, ColorOp::kInvert); }},
    {"RandomPosterize", [](ChainBuilder& b, const Call& c) { b.color_op(c, ColorOp::kPosterize); }},
    {"RandomSolarize", [](ChainBuilder& b, const Call& c) { b.color_op(c, ColorOp::kSolarize); }},
    {"RandomAdjustSharpness", [](ChainBuilder& b, const Call& c) { b.color_op(c, ColorOp::kAdjustSharpness); }},
    {"RandomAutocontrast", [](ChainBuilder& b, const Call& c) { b.color_op(c, ColorOp::kAutocontrast); }},
    {"RandomEqualize", [](ChainBuilder& b, const Call& c) { b.color_op(c, ColorOp::kEqualize); }},
    // float32 in [0, 1], NCHW: what the output is unless the chain says otherwise.
    {"ToTensor", [](ChainBuilder&, const Call& c) { bind(c, {}); }},
    {"PILToTensor", [](ChainBuilder& b, const Call& c) { b.uint8_image(c); }},
    {"ToImage", [](ChainBuilder& b, const Call& c) { b.uint8_image(c); }},
    {"ConvertImageDtype", [](ChainBuilder& b, const Call& c) { b.convert_dtype(c); }},
    {"ToDtype", [](ChainBuilder& b, const Call& c) { b.convert_dtype(c); }},
    {"ToUint8", [](ChainBuilder& b, const Call& c) { b.set_dtype(c, DType::kUint8); }},
    {"Float16", [](ChainBuilder& b, const Call& c) { b.set_dtype(c, DType::kFloat16); }},
    {"Float32", [](ChainBuilder& b, const Call& c) { b.set_dtype(c, DType::kFloat32); }},
    {"NCHW", [](ChainBuilder& b, const Call& c) { b.layout(c, Layout::kNCHW); }},
    {"NHWC", [](ChainBuilder& b, const Call& c) { b.layout(c, Layout::kNHWC); }},
    {"none", [](ChainBuilder& b, const Call& c) { b.no_geometry(c); }},
    {"Standardize",
     [](ChainBuilder& b, const Call& c) {
       bind(c, {});
       b.spec_.standardize = true;
     }},
    {"uint8", [](ChainBuilder& b, const Call& c) { b.set_dtype(c, DType::kUint8); }, false},
    {"float16", [](ChainBuilder& b, const Call& c) { b.set_dtype(c, DType::kFloat16); }, false},
    {"float32", [](ChainBuilder& b, const Call& c) { b.set_dtype(c, DType::kFloat32); }, false},
}};

}  // namespace

TransformSpec build_spec(const std::vector<Call>& calls) {
  ChainBuilder builder;
  for (const Call& call : calls) builder.apply(call);
  return builder.finish();
}

}  // namespace stoker::data::chain
