// stoker/data/transform.h — per-sample augmentation with torchvision's names and semantics.
//
// A TransformSpec is a fixed-order chain, the order torchvision pipelines use:
//   [BoxCrop] -> geometry (RandomResizedCrop | Resize+CenterCrop | [Pad] RandomCrop | CenterCrop 1:1 | [Pad] none)
//   -> RandomHorizontalFlip(p) -> RandomVerticalFlip(p) -> [Grayscale] -> RandomRotation
//   -> RandomAffine -> RandomPerspective(distortion_scale, p) -> ElasticTransform(alpha, sigma)
//   -> TrivialAugmentWide | RandAugment | AutoAugment | AugMix (torchvision's autoaugment.py)
//   -> ColorJitter(b, c, s, h) -> RandomGrayscale(p) -> GaussianBlur(k, sigma)
//   -> RandomInvert(p) -> RandomPosterize(bits, p) -> RandomSolarize(threshold, p)
//   -> RandomAdjustSharpness(sharpness_factor, p) -> RandomAutocontrast(p) -> RandomEqualize(p)
//   -> Normalize(mean, std) -> RandomErasing(p, ...)
//   -> output dtype (uint8 | float32 | float16) and layout (NCHW | NHWC).
// RandomApply([T], p) runs T on a share p of the samples, for T one of ColorJitter,
// GaussianBlur, RandomRotation, RandomAffine and ElasticTransform (their `apply_p`), at T's
// place in the chain; around a transform with a p of its own (RandomPerspective, RandomSolarize,
// ...), the two multiply. RandomChoice(transforms, p) runs one of its transforms per sample and
// RandomOrder(transforms) all of them in an order drawn per sample, over the same transforms
// (`Step`, StepGroupSpec).
// Geometry is a crop of the source followed by a resample to the output size, fused into one
// antialiased pass (Pillow's BILINEAR filter, or BICUBIC with interpolation=bicubic, with
// support scaled by the reduction, as torchvision on PIL images does). Resize+CenterCrop is
// mapped back to a source crop.
// A Resize before a RandomCrop or a RandomResizedCrop is too: the crop is drawn in the
// resized image, as torchvision draws it, and resampled from the source in one pass. Only a
// RandomCrop whose window reaches into its padding resizes the whole image first (to uint8,
// as PIL's Resize gives) and then copies the window, padding and all. RandomResizedCrop
// after a Resize is thus one resample where torchvision makes two (slightly less blur).
// Where the filter may read differs as in torchvision: RandomResizedCrop crops and then
// resizes, so taps stay inside the crop; Resize+CenterCrop resizes the whole image, so taps
// at the crop's edges read the pixels around it. A CenterCrop larger than the resized image
// pads it with zeros, as torchvision does: the whole image is resized first (to uint8, as
// PIL's Resize gives), then copied into the padded window.
// Resize takes torchvision's size: an int resizes the shorter side (the longer becomes
// int(size * long / short)), (height, width) resizes to exactly that.
// RandomCrop and the 1:1 CenterCrop (CenterCrop(size) with no Resize before it, torchvision's
// own CenterCrop) do not resample: they copy pixels of the full image, padded as torchvision pads
// a PIL image (np.pad's constant / edge / reflect / symmetric, reflections repeating for
// padding wider than the image), so their output equals torchvision's exactly. 'none' (the
// source's size) is such a copy too: its image must be the output's size (the Loader checks).
// Float arithmetic throughout (Pillow rounds to uint8 between passes and ops): expect
// differences from torchvision-on-PIL of about one grey level.
//
// BoxCrop (BoxCropSpec) comes first: it crops each sample around its own box or keypoints
// (stoker/data/target_geometry.h), and the rest of the chain takes that crop as its image.
//
// Setup/run split (after DALI kernels): draw_params() decides everything random for one
// sample from its SampleRng; SampleTransformer::run() writes the sample into caller-provided
// output memory (out, in, args). Per-worker scratch is grow-only: no steady-state allocation.
//
// The automatic augmentations work, as torchvision's do, on a uint8 image: the resampled
// pixels are rounded to uint8 first, and their operations follow torchvision's tensor
// implementation (truncating blends, grid_sample's nearest or bilinear with zero padding).
// RandomErasing works on the output: its value is in the units Normalize gives (0 = the
// mean). For uint8 output the erased pixels are that value mapped back to pixels,
// round(255 * (value * std + mean)), clamped to [0, 255] (value='random' noise too).
//
// uint8 output skips Normalize (mean/std stay in the spec so the consumer can apply them on
// the device, where 4x fewer bytes cross PCIe). float outputs are (x/255 - mean) / std.
//
// Thread safety: TransformSpec is an immutable value. A SampleTransformer is NOT thread-safe;
// use one per worker thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/image.h"

namespace stoker::data {

struct GeometryTargets;  // stoker/data/target_geometry.h

// kRandomCrop: torchvision's RandomCrop (pad, then a random 1:1 crop). kCenterCrop: its
// CenterCrop, a 1:1 centre crop padded with zeros where the image is smaller. Both copy
// pixels; the others resample (see above).
enum class Geometry { kNone, kResizeCenterCrop, kRandomResizedCrop, kRandomCrop, kCenterCrop };
// The 1:1 geometries: their output is pixels of the (resized) image and padding, not a box of
// the source resampled to the output size.
inline bool copies_pixels(Geometry g) { return g == Geometry::kRandomCrop || g == Geometry::kCenterCrop; }

// torchvision's Resize(size) before the crop. `shorter` > 0: the shorter side to it, the
// longer to int(shorter * long / short); else width x height > 0: exactly that size; else
// none. kResizeCenterCrop always has one; kRandomCrop, kCenterCrop and kRandomResizedCrop may
// (they then crop the resized image); kNone has none.
struct ResizeSpec {
  int shorter = 0;
  int width = 0, height = 0;
  // With `shorter`: where the longer side would exceed it, the longer side becomes max_size
  // and the shorter int(max_size * shorter / longer), as torchvision's; 0 = none.
  int max_size = 0;
  bool enabled() const { return shorter > 0 || (width > 0 && height > 0); }
};
// The size a `width` x `height` image has after `resize` ({width, height} unchanged when it
// is off or a side is 0), as torchvision's _compute_resized_output_size: the longer side is
// truncated.
std::array<int, 2> resized_size(const ResizeSpec& resize, int width, int height);
// The filter of the crops' and Resize's resample (torchvision's interpolation= on a PIL image):
// Pillow's BILINEAR (support 1) or BICUBIC (support 2), antialiased.
enum class ResampleFilter { kBilinear, kBicubic };
inline double filter_support(ResampleFilter f) { return f == ResampleFilter::kBicubic ? 2.0 : 1.0; }
const char* to_string(ResampleFilter filter);  // "bilinear", "bicubic"

enum class DType { kUint8, kFloat32, kFloat16 };
enum class Layout { kNCHW, kNHWC };

const char* to_string(DType dtype);
const char* to_string(Layout layout);
size_t dtype_size(DType dtype);

// torchvision's ColorJitter(brightness, contrast, saturation, hue). Each component is a number
// (the fields below) or, as torchvision's constructor also takes it, a range (min, max)
// (`ranged`, `range`: the number is then 0). Components are indexed 0..3 in that order.
struct ColorJitterSpec {
  double brightness = 0;  // factor drawn from [max(0, 1-b), 1+b]
  double contrast = 0;    // factor drawn from [max(0, 1-c), 1+c]
  double saturation = 0;  // factor drawn from [max(0, 1-s), 1+s]
  double hue = 0;         // shift drawn from [-h, h], 0 <= h <= 0.5
  // ranged[i]: component i is drawn from range[i] = (min, max): 0 <= min <= max for the
  // factors, -0.5 <= min <= max <= 0.5 for hue.
  std::array<bool, 4> ranged{};
  std::array<std::array<double, 2>, 4> range{};
  double apply_p = 1;  // RandomApply([ColorJitter(...)], p): the share of samples it runs on

  double number(int i) const { return i == 0 ? brightness : i == 1 ? contrast : i == 2 ? saturation : hue; }
  // Whether component i draws a value for each sample.
  bool on(int i) const { return ranged[static_cast<size_t>(i)] || number(i) > 0; }
  // The interval component i is drawn from, whichever form gave it.
  std::array<double, 2> bounds(int i) const {
    if (ranged[static_cast<size_t>(i)]) return range[static_cast<size_t>(i)];
    const double v = number(i);
    return i == 3 ? std::array<double, 2>{-v, v} : std::array<double, 2>{v < 1 ? 1 - v : 0.0, 1 + v};
  }
  bool enabled() const { return on(0) || on(1) || on(2) || on(3); }
};

// How RandomCrop's padding is filled, torchvision's padding_mode: the fill value, the edge
// pixel repeated, the image mirrored without or with its edge pixel (2 1 | 1 2 3 | 3 2 vs
// 3 2 | 1 2 3 | 2 1: symmetric repeats it, reflect does not).
enum class PaddingMode { kConstant, kEdge, kReflect, kSymmetric };
const char* to_string(PaddingMode mode);  // "constant", "edge", "reflect", "symmetric"

// torchvision's RandomCrop(size, padding, pad_if_needed, fill, padding_mode) beyond its size,
// and its Pad(padding, fill, padding_mode): alone (geometry kNone: the output is the source
// padded, so a source of one size gives one padded size) or before a RandomCrop, where it is
// the crop's own padding (Pad(4), RandomCrop(32) is RandomCrop(32, padding=4)).
struct PadSpec {
  int left = 0, top = 0, right = 0, bottom = 0;  // padding, in pixels: 0..8192 each
  // Where the padded image is still narrower (shorter) than the crop, pad both sides by the
  // shortfall, as torchvision does (padding=[size - width, 0]): the crop is then drawn from
  // the middle of the shortfall on average.
  bool if_needed = false;
  PaddingMode mode = PaddingMode::kConstant;
  std::array<float, 3> fill{0, 0, 0};  // kConstant: pixel values in [0, 255]
  bool pads() const { return left > 0 || top > 0 || right > 0 || bottom > 0; }
};

// Interpolation of the warps (the automatic augmentations' geometric operations, RandomRotation,
// RandomAffine, RandomPerspective, ElasticTransform). kBicubic: grid_sample's bicubic, for the
// automatic augmentations, RandomRotation and RandomAffine only (warp.h).
enum class Interpolation { kNearest, kBilinear, kBicubic };
enum class AutoAugmentKind { kNone, kTrivialAugmentWide, kRandAugment, kAutoAugment, kAugMix };
enum class AutoAugmentPolicy { kImageNet, kCifar10, kSvhn };

// torchvision's TrivialAugmentWide, RandAugment, AutoAugment and AugMix (0.14), one per chain.
const char* to_string(AutoAugmentKind kind);  // "TrivialAugmentWide", ... or "none"

struct AutoAugmentSpec {
  static constexpr int kMaxOps = 16;    // RandAugment's num_ops
  static constexpr int kMaxChains = 8;  // AugMix's mixture_width
  static constexpr int kMaxDepth = 8;   // AugMix's chain_depth
  AutoAugmentKind kind = AutoAugmentKind::kNone;
  AutoAugmentPolicy policy = AutoAugmentPolicy::kImageNet;  // AutoAugment
  int num_ops = 2;                                          // RandAugment: 0..kMaxOps
  int magnitude = 9;                                        // RandAugment: the bin used, 0 <= m < num_magnitude_bins
  int num_magnitude_bins = 31;                              // RandAugment and TrivialAugmentWide: 2..1000
  // AugMix: mixture_width chains of chain_depth operations (-1: 1..3 drawn per chain) at
  // magnitude bins below severity (of 10), mixed with the image by Dirichlet(alpha) weights;
  // all_ops adds the colour operations (Brightness, Color, Contrast, Sharpness).
  int severity = 3;       // 1..10
  int mixture_width = 3;  // 1..kMaxChains
  int chain_depth = -1;   // -1 or 1..kMaxDepth
  double alpha = 1.0;     // > 0
  bool all_ops = true;
  Interpolation interpolation = Interpolation::kNearest;  // AugMix's default is bilinear
  bool has_fill = false;                                  // torchvision's fill=None: zeros, no mask
  std::array<float, 3> fill{0, 0, 0};                     // pixel values in [0, 255]
  bool enabled() const { return kind != AutoAugmentKind::kNone; }
};

// torchvision's RandomRotation(degrees, interpolation, expand=False, center=None, fill=0) as
// its tensor implementation does it (F.rotate: grid_sample about the centre, the fill blended
// by the in-image mask, on the uint8 image), on the cropped output; expand and center are not
// supported (the output has one size, the centre is the image's).
struct RotationSpec {
  double min_degrees = 0, max_degrees = 0;  // the angle is drawn uniformly in [min, max]
  Interpolation interpolation = Interpolation::kNearest;
  std::array<float, 3> fill{0, 0, 0};  // pixel values in [0, 255]
  double apply_p = 1;                  // RandomApply([RandomRotation(...)], p)
  bool enabled() const { return min_degrees != 0 || max_degrees != 0; }
};

// torchvision's RandomAffine(degrees, translate, scale, shear, interpolation, fill) as its
// tensor implementation does it (F.affine: grid_sample about the centre, the fill blended by
// the in-image mask, on the uint8 image), on the cropped output, after RandomRotation; center
// is not supported. Each sample draws, as RandomAffine.get_params: an angle (clockwise, as
// F.affine takes it) uniform in [min_degrees, max_degrees]; with translate, a shift of
// round(uniform(-tx * width, tx * width)) pixels, then the same for y; with scale, a factor
// uniform in [scale_min, scale_max]; with shear, an x shear in degrees uniform in
// [shear_x_min, shear_x_max], then a y shear where shear_y is given.
struct AffineSpec {
  double min_degrees = 0, max_degrees = 0;
  bool translate = false;                   // translate=(tx, ty) given
  double translate_x = 0, translate_y = 0;  // fractions of the width / height, in [0, 1]
  bool scale = false;                       // scale=(min, max) given
  double scale_min = 1, scale_max = 1;      // > 0
  bool shear = false;                       // shear given: the x range
  double shear_x_min = 0, shear_x_max = 0;
  bool shear_y = false;  // shear given with four values: the y range too
  double shear_y_min = 0, shear_y_max = 0;
  Interpolation interpolation = Interpolation::kNearest;
  std::array<float, 3> fill{0, 0, 0};  // pixel values in [0, 255]
  double apply_p = 1;                  // RandomApply([RandomAffine(...)], p)
  // False for RandomAffine(0) alone, which is the identity.
  bool enabled() const { return min_degrees != 0 || max_degrees != 0 || translate || scale || shear; }
};

// torchvision's RandomPerspective(distortion_scale, p, interpolation, fill) as its tensor
// implementation does it (F.perspective: the coefficients _get_perspective_coeffs solves for,
// the grid _perspective_grid makes, grid_sample with the fill blended by the in-image mask, on
// the uint8 image), on the cropped output, after RandomAffine. A sample runs it with
// probability p and then draws the four corners as RandomPerspective.get_params does.
struct PerspectiveSpec {
  double distortion_scale = 0.5;  // in [0, 1]
  double p = 0;                   // 0 = off (torchvision's default is 0.5)
  Interpolation interpolation = Interpolation::kBilinear;
  std::array<float, 3> fill{0, 0, 0};  // pixel values in [0, 255]
  bool enabled() const { return p > 0; }
};

// torchvision's ElasticTransform(alpha, sigma, interpolation, fill) (F.elastic_transform on the
// uint8 image, after RandomPerspective): a displacement field of uniform noise in [-1, 1) per
// pixel and axis, blurred as ElasticTransform.get_params blurs it (kernel int(8 sigma + 1),
// made odd, both sigmas), scaled by alpha / height for x and alpha / width for y (torchvision's
// size[0] and size[1]), added to the identity grid. The noise comes from a seed each sample
// draws (SampleParams::elastic_seed), not from torch's generator.
struct ElasticSpec {
  bool on = false;
  double alpha_x = 50, alpha_y = 50;  // finite, >= 0
  double sigma_x = 5, sigma_y = 5;    // both > 0, or both 0 (no blur)
  Interpolation interpolation = Interpolation::kBilinear;
  std::array<float, 3> fill{0, 0, 0};  // pixel values in [0, 255]
  double apply_p = 1;                  // RandomApply([ElasticTransform(...)], p)
  bool enabled() const { return on; }
};

// torchvision's GaussianBlur(kernel_size, sigma): odd kernel sides, sigma drawn uniformly in
// [sigma_min, sigma_max] per sample (data/transform/gaussian_blur.h).
struct GaussianBlurSpec {
  int kernel_w = 0, kernel_h = 0;  // 0: off
  double sigma_min = 0.1, sigma_max = 2.0;
  double apply_p = 1;  // RandomApply([GaussianBlur(...)], p)
  bool enabled() const { return kernel_w > 0 && kernel_h > 0; }
};

// torchvision's single-operation colour transforms, in the order they run (after
// GaussianBlur): RandomInvert(p), RandomPosterize(bits, p), RandomSolarize(threshold, p),
// RandomAdjustSharpness(sharpness_factor, p), RandomAutocontrast(p), RandomEqualize(p). Each
// runs on a share p of the samples, as their forward's `torch.rand(1) < p`, and does what
// their tensor implementation does to a uint8 image (F.invert, F.posterize, F.solarize,
// F.adjust_sharpness, F.autocontrast, F.equalize; the operations the automatic augmentations
// use): the image is rounded to uint8 first, as a PIL image or uint8 tensor holds it.
enum class ColorOp : uint8_t { kInvert, kPosterize, kSolarize, kAdjustSharpness, kAutocontrast, kEqualize };
inline constexpr int kColorOps = 6;
const char* to_string(ColorOp op);  // torchvision's class name: "RandomInvert", ...

struct ColorOpSpec {
  double p = 0;  // the share of samples it runs on; 0 = off
  // RandomPosterize's bits (0..8), RandomSolarize's threshold (pixel values, 0 or [1, 255]:
  // pixels >= it are inverted), RandomAdjustSharpness's sharpness_factor (>= 0; 1 = the
  // image, 0 = blurred, 2 = sharpened); unused by the others.
  double value = 0;
  bool enabled() const { return p > 0; }
};

// torchvision's RandomErasing, after Normalize.
struct RandomErasingSpec {
  double p = 0;  // probability per sample; 0 = off
  double scale_min = 0.02, scale_max = 0.33;
  double ratio_min = 0.3, ratio_max = 3.3;
  bool random_value = false;            // value='random': N(0, 1) per element
  std::array<float, 3> value{0, 0, 0};  // in the output's units (after Normalize)
  bool enabled() const { return p > 0; }
};

// The transforms RandomApply, RandomChoice and RandomOrder take, as steps of the chain, in the
// order they run (RandomGrayscale and the automatic augmentation run between them, fixed).
enum class Step : uint8_t {
  kRotation,
  kAffine,
  kPerspective,
  kElastic,
  kColorJitter,
  kGaussianBlur,
  kInvert,  // the colour operations, in ColorOp's order
  kPosterize,
  kSolarize,
  kAdjustSharpness,
  kAutocontrast,
  kEqualize,
};
inline constexpr int kSteps = 12;
const char* to_string(Step step);  // torchvision's class name
inline Step color_step(ColorOp op) { return static_cast<Step>(static_cast<int>(Step::kInvert) + static_cast<int>(op)); }

// torchvision's RandomChoice(transforms, p) (one member per sample, member i with probability
// weight[i] / the sum, as random.choices draws it) or RandomOrder(transforms) (every member, in
// an order drawn per sample), over steps. Each member keeps its own settings (and its own p, if
// it has one) in its spec; the group runs its members one after another at the place of the
// first in the fixed order. A step is in one group at most, and a chain has one of each.
struct StepGroupSpec {
  uint16_t members = 0;                 // bit i: Step i is a member
  std::array<double, kSteps> weight{};  // RandomChoice: >= 0, finite, summing to > 0 over the members
  bool has(Step s) const { return (members >> static_cast<int>(s) & 1u) != 0; }
  bool enabled() const { return members != 0; }
};

// BoxCrop(margin, sides, fill): a crop of each sample around its own box, before the rest of
// the chain, as head-pose and face pipelines (Hopenet, 6DRepNet) crop each face: the box is
// the sample's first box, else the extent of its visible, finite keypoints; with the box's
// width w and height h and a margin k drawn uniformly in [margin_min, margin_max] per sample,
// its left edge moves out by sides[0] k w, its top by sides[1] k h, its right by sides[2] k w
// and its bottom by sides[3] k h, and each edge is then truncated toward zero to a whole
// pixel, as int() does in those recipes. Hopenet's rule is margin (0.2, 0.4), sides (0.6, 2,
// 0.6, 0.6); a symmetric widening by a factor s is margin (s - 1) / 2, sides 1. Where the crop
// reaches past the image it holds `fill`, as PIL's Image.crop does (black). The rest of the
// chain (Resize, the crops, flips, ...) takes the crop as its image, and targets follow
// through it; SampleParams::subject is the crop. On a clip each chosen frame is cropped around
// its own box with the clip's one margin, or, with `union_box`, every frame around the union of
// the chosen frames' boxes (one crop for the clip).
struct BoxCropSpec {
  bool on = false;
  bool union_box = false;                   // clips only: one crop around the chosen frames' boxes' union
  double margin_min = 0, margin_max = 0;    // finite, 0 <= min <= max; equal: a fixed margin
  std::array<double, 4> sides{1, 1, 1, 1};  // left, top, right, bottom: finite, >= 0
  std::array<float, 3> fill{0, 0, 0};       // pixel values in [0, 255]
  bool enabled() const { return on; }
};

// torchvision's RandomResizedCrop(size, scale, ratio) beyond its size (kRandomResizedCrop):
// the crop's area as a fraction of the image's is drawn in [scale_min, scale_max], its aspect
// (width / height) log-uniformly in [ratio_min, ratio_max].
struct RandomResizedCropSpec {
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
};

// A transform whose whole setting is the share p of the samples it applies to: the flips
// (mirrored) and RandomGrayscale (L in all three channels; Grayscale, one channel, is
// TransformSpec::channels).
struct ProbabilitySpec {
  double p = 0;  // 0 = off
  bool enabled() const { return p > 0; }
};

// torchvision's Normalize(mean, std): float outputs are (x/255 - mean) / std per channel
// (a one-channel chain uses the first element). uint8 output keeps them for the consumer.
struct NormalizeSpec {
  bool on = false;
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};  // ImageNet defaults
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
  bool enabled() const { return on; }
};

// Feature vectors (a Source with feature_count() > 0) take no image transform. The Loader
// sets `length` to their length, out_width to it and out_height and channels to 1, so a batch
// is N x 1 x 1 x length. `standardize` ("Standardize") writes (x - mean) / std per feature;
// the Loader fills an empty mean / std from its source (fit_standardize) — give a validation
// loader the training loader's, as scikit-learn's StandardScaler is fit on the training set
// only. `fit_rows` ("Standardize(fit_rows=...)") bounds the rows that fit reads where its
// source gathered no sums on opening (fit_standardize); 0 (fit_rows=None): every row.
inline constexpr int64_t kStandardizeFitRows = 262'144;
struct FeatureSpec {
  int length = 0;  // 0: an image chain
  bool standardize = false;
  int64_t fit_rows = kStandardizeFitRows;
  std::vector<float> mean;
  std::vector<float> std;
  bool enabled() const { return length > 0; }
};

// The chain: the geometry, output size and resample filter at the top level, each other
// transform's settings in its own struct, off by default.
struct TransformSpec {
  BoxCropSpec box_crop;  // before the geometry: the image the rest of the chain takes
  Geometry geometry = Geometry::kRandomResizedCrop;
  // Output size. kNone: the source's fixed size; parse_transforms leaves it 0x0 for the
  // pipeline to fill in, and validate() accepts 0x0 only for kNone.
  int out_width = 224;
  int out_height = 224;
  ResizeSpec resize;                                    // before the crop (see ResizeSpec)
  ResampleFilter resample = ResampleFilter::kBilinear;  // Resize's and RandomResizedCrop's
  RandomResizedCropSpec random_resized_crop;            // kRandomResizedCrop
  PadSpec pad;                                          // kRandomCrop
  ProbabilitySpec hflip;                                // RandomHorizontalFlip
  ProbabilitySpec vflip;                                // RandomVerticalFlip
  ProbabilitySpec random_grayscale;                     // RandomGrayscale
  RotationSpec rotation;
  AffineSpec affine;
  PerspectiveSpec perspective;
  ElasticSpec elastic;
  StepGroupSpec choice;  // RandomChoice
  StepGroupSpec order;   // RandomOrder
  GaussianBlurSpec blur;
  std::array<ColorOpSpec, kColorOps> color_ops{};  // indexed by ColorOp
  AutoAugmentSpec auto_augment;
  ColorJitterSpec jitter;
  NormalizeSpec normalize;
  RandomErasingSpec erasing;
  int channels = 3;  // 1 (gray) or 3 (RGB)
  // Grayscale(num_output_channels=3): L in all three channels, at Grayscale's place.
  bool grayscale_rgb = false;
  DType dtype = DType::kFloat32;
  Layout layout = Layout::kNCHW;
  FeatureSpec features;  // feature vectors instead of images (see FeatureSpec)

  // Bytes one sample occupies in a batch.
  size_t sample_bytes() const { return static_cast<size_t>(out_width) * out_height * channels * dtype_size(dtype); }
  // One line in torchvision's notation, e.g.
  // "RandomResizedCrop(224) · RandomHorizontalFlip(0.5) · Normalize → float32 NCHW".
  // parse_transforms(describe()) gives back an equal spec.
  std::string describe() const;
  // What keeps this chain's samples off the GPU after nvJPEG (stoker/data/gpu_sample.h): the
  // first of its steps, as describe() writes it, that only the CPU runs ("ColorJitter(0.4)",
  // "Grayscale()"); "" when the GPU finishes every step (the geometries that resample a box,
  // the flips, Normalize, the output's type and layout).
  std::string gpu_finishing_blocker() const;
  // Throws UsageError naming the field, the value and the allowed range: sizes 1..8192,
  // RandomCrop padding 0..8192 and fill in [0, 255], 0 < scale min <= max <= 1, 0 < ratio min <= max, flip p in [0, 1],
  // jitter factors >= 0, hue in [0, 0.5], finite mean and non-zero finite std (when normalize), channels 1 or 3; the
  // automatic augmentations' counts and bins as AutoAugmentSpec says, fill in [0, 255]; RandomAffine degrees and shear
  // ranges min <= max, shear within (-90, 90), translate in [0, 1], 0 < scale min <= max, fill in [0, 255]; the colour
  // operations' p in [0, 1], RandomPosterize bits whole in 0..8, RandomSolarize threshold 0 or in [1, 255] (below 1
  // would be a float image's threshold: refused, naming 255 times it), sharpness_factor >= 0;
  // RandomErasing p in [0, 1], 0 <= scale min <= max <= 1, 0 < ratio min <= max, finite value;
  // ColorJitter ranges 0 <= min <= max (hue -0.5 <= min <= max <= 0.5); Pad's padding 0..8192 and
  // fill in [0, 255]; RandomPerspective p and distortion_scale in [0, 1], fill in [0, 255];
  // ElasticTransform alpha >= 0, sigma both in (0, 100] or both 0, fill in [0, 255];
  // RandomChoice weights >= 0 with a positive sum;
  // Standardize only with none / Float16 / Float32; feature vectors not as uint8, and
  // features.mean / features.std empty or one finite value per feature (std > 0).
  void validate() const;

 private:
  void validate_features() const;  // what feature vectors may take (spans every transform)
};

// For a consumer that normalises on its device (the trainer's CUDA feed, the Python
// DataLoader's): a float32 chain with Normalize is written as uint8 instead, 4x fewer bytes to
// copy; the spec keeps Normalize, which for uint8 output means "the consumer normalises" with
// spec.normalize.mean and .std ((x - 255 mean) / (255 std)). Returns whether it changed the spec.
bool normalize_in_consumer(TransformSpec* spec);

// Parses a comma/semicolon separated chain in torchvision's notation, e.g.
//   "RandomResizedCrop(224, scale=(0.08,1)), RandomHorizontalFlip(0.5), Normalize(imagenet)"
//   "Resize(256), CenterCrop(224), Normalize(mean=(0.5,0.5,0.5), std=(0.5,0.5,0.5))"
//   "RandomCrop(32, padding=4)"  "RandomCrop(224, padding=(4, 8), pad_if_needed=True,
//    fill=(124, 116, 104), padding_mode='reflect')"  "CenterCrop(32)"
//   "ColorJitter(0.4, 0.4, 0.4, 0.1)"  "ColorJitter(brightness=(0.6, 1.4), hue=(-0.1, 0.1))"
//   "ToUint8" "Float16" "NHWC" "Grayscale" "Grayscale(num_output_channels=3)"
//   "Pad(4, fill=0, padding_mode=reflect)" (alone, or before a RandomCrop without padding)
//   "BoxCrop(margin=(0.2, 0.4), sides=(0.6, 2, 0.6, 0.6))" (margin a number k or a range
//   (min, max); sides one factor or (left, top, right, bottom); fill as Pad's)
//   "RandomPerspective(distortion_scale=0.5, p=0.5)"  "ElasticTransform(alpha=50.0, sigma=5.0)"
//   "RandomChoice([GaussianBlur(3), RandomInvert(1.0)], p=[0.3, 0.7])"
//   "RandomOrder([ColorJitter(0.4), GaussianBlur(3)])" (over the transforms RandomApply takes)
//   "RandomRotation(15)"  "RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5)"
//   (shear: a number d for x in (-d, d), (min, max) for x, or four values for x then y)
//   "RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8)" (one transform per RandomApply:
//   ColorJitter, GaussianBlur, RandomRotation, RandomAffine, ElasticTransform, or one with a p
//   of its own, RandomPerspective and the colour operations; p defaults to 0.5)
//   "TrivialAugmentWide(num_magnitude_bins=31, interpolation=bilinear, fill=(128, 128, 128))"
//   "RandAugment(num_ops=2, magnitude=9)"  "AutoAugment(policy=imagenet)" (or cifar10, svhn)
//   "AugMix(severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True)"
//   "RandomErasing(p=0.25, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0)" (or value=random)
//   "RandomSolarize(128, p=0.2)"  "RandomPosterize(bits=4)"  "RandomAdjustSharpness(2, p=0.5)"
//   "RandomInvert(0.5)"  "RandomAutocontrast(p=0.5)"  "RandomEqualize()" (p defaults to 0.5)
//   "Standardize" (feature vectors: per-feature (x - mean) / std, fit on the training data)
// A chain pasted from a Python script reads as written: Compose([...]) or a bare [...] list
// (nested too) is its transforms in order, a module path before a name is dropped
// (transforms.Resize, T.Resize, v2.Resize), ToTensor is the default output (float32 in
// [0, 1]), PILToTensor / ToImage make it uint8 unless ConvertImageDtype(dtype) or
// ToDtype(dtype, scale=True) (torch.float32 / float16 / uint8) sets it; Lambda is refused
// with a line saying why.
// Names are case-sensitive, as in torchvision; arguments bind by position or keyword as in
// Python (RandomResizedCrop(size, scale, ratio), ColorJitter(brightness, contrast,
// saturation, hue), RandomHorizontalFlip(p=0.5), Normalize(mean, std) or Normalize(imagenet)
// or a bare Normalize for ImageNet's). Sizes are an int or (height, width).
//   - The chain is always applied in the fixed order above, whatever order it is written in;
//     each transform may appear once.
//   - Resize(n) (the shorter side) needs a crop after it: CenterCrop(m), RandomCrop(m, ...) or
//     RandomResizedCrop(m); Resize((h, w)) may stand alone (the output is h x w). A
//     CenterCrop(m) alone is torchvision's: a 1:1 crop, padded with zeros if the image is
//     smaller. CenterCrop(m, resize=True) alone is stoker's and means Resize(m) first (so that
//     every image, whatever its size, gives the whole of its centre); after a Resize both just
//     crop. Resize(n,
//     max_size=m) caps the longer side as torchvision's. Resize and RandomResizedCrop accept
//     interpolation=bilinear or bicubic (InterpolationMode.BILINEAR / BICUBIC, or PIL's 2 / 3)
//     and antialias=True/None; other filters, antialias=False, and a Resize and a
//     RandomResizedCrop asking for different filters are refused.
//   - RandomCrop's padding is an int (every side), (left/right, top/bottom) or (left, top,
//     right, bottom); padding_mode is constant, edge, reflect or symmetric. Words may be
//     quoted ('reflect'); True/False are read as Python's.
//   - No geometry given (or "none"): kNone, output at the source's size.
//   - Grayscale: one channel; Normalize then uses the first mean/std element.
//   - Defaults: float32 NCHW (as ToTensor), no flip, no jitter, no Normalize.
//   - Items may also be separated by '·', '→' or whitespace, and "uint8", "float16",
//     "float32" are accepted for ToUint8, Float16, Float32, so that describe()'s output
//     parses back.
// Throws UsageError for unknown transforms (with a did-you-mean), bad or repeated arguments,
// conflicting transforms and out-of-range values, naming them.
TransformSpec parse_transforms(std::string_view text);

// The chain that evaluates (validation, inference) a model trained with `train`, as
// torchvision's and timm's reference recipes pair them: RandomResizedCrop(S) becomes
// Resize(floor(S / 0.875)), CenterCrop(S) (Resize(256), CenterCrop(224) for 224), and
// RandomCrop(S, ...) becomes CenterCrop(S) (what CIFAR's recipes evaluate on: the
// image itself when it is S); after a Resize, RandomCrop(S, ...) and RandomResizedCrop(S)
// become that Resize and CenterCrop(S); flips, ColorJitter, the colour operations, the warps
// (RandomRotation, RandomAffine, RandomPerspective, ElasticTransform), RandomChoice and
// RandomOrder are dropped; BoxCrop's margin range becomes its middle; Pad is kept;
// Resize+CenterCrop, no geometry, the resample filter, Grayscale, Normalize, Standardize, dtype
// and layout are kept; the automatic augmentations and RandomErasing are dropped. Evaluation
// then sees every sample the same way each epoch.
TransformSpec eval_transform(const TransformSpec& train);

// Every random decision for one sample.
struct SampleParams {
  // BoxCrop: the region of the source cropped around the sample's box, in whole source pixels;
  // it may reach past the image (that part is BoxCrop's fill). The rest of the chain takes
  // it as its image, so every field below is then in its pixels, not the source's. Width 0:
  // the chain has no BoxCrop, or the sample had no box to crop around (box_crop_problem says
  // why; the loader makes it a bad sample).
  CropRect subject;
  double subject_margin = 0;  // the margin k drawn
  // In full-resolution source pixels (BoxCrop's crop's, with one). For the 1:1 geometries
  // (kRandomCrop, kCenterCrop): left/top are where the crop starts in the image padded by
  // spec.pad and then by pad_x/pad_y (so they may lie in padding), width/height the output
  // size; width 0 when the padded image is smaller than the crop (torchvision raises; the
  // loader reports it).
  CropRect crop;
  int pad_x = 0, pad_y = 0;  // 1:1 geometries: padding added on the left / top beyond spec.pad
  // How the output is made. false: `crop` is a box of the source, resampled to the output
  // size. true: `crop` is a 1:1 window (none, RandomCrop, the 1:1 CenterCrop) of the
  // image, or, when resized_width > 0, of the image first resized to resized_width x
  // resized_height. A 1:1 crop after a Resize is a box (false) when its window lies inside the
  // resized image, so it is resampled in one pass; only a window that reaches into the
  // padding needs the whole image resized first.
  bool copy = false;
  int resized_width = 0, resized_height = 0;
  bool vflip = false;      // RandomVerticalFlip
  bool grayscale = false;  // RandomGrayscale
  bool rotate = false;     // RandomRotation, by `angle` degrees (counter-clockwise)
  float angle = 0;
  // RandomAffine: F.affine(img, affine_angle, [translate_x, translate_y], affine_scale,
  // [shear_x, shear_y]) (angle and shears in degrees, the shift in pixels).
  bool affine = false;
  float affine_angle = 0, affine_scale = 1, shear_x = 0, shear_y = 0;
  int translate_x = 0, translate_y = 0;
  // RandomPerspective: the end points get_params draws, (x, y) for the top-left, top-right,
  // bottom-right and bottom-left corners, in output pixels.
  bool perspective = false;
  std::array<int, 8> corners{};
  // ElasticTransform: the seed of its displacement field's noise.
  bool elastic = false;
  uint64_t elastic_seed = 0;
  // RandomChoice: the member drawn (its Step). RandomOrder: its members in the order they run.
  uint8_t chosen = 0;
  std::array<uint8_t, kSteps> order{};
  int order_size = 0;
  float blur_sigma = 0;   // GaussianBlur's sigma; 0 when it is off
  uint8_t color_ops = 0;  // bit i set: ColorOp i runs for this sample
  bool flip = false;
  // ColorJitter: factors and the order they apply in (a permutation of 0..3 =
  // brightness, contrast, saturation, hue), as torchvision draws them.
  std::array<int, 4> jitter_order{0, 1, 2, 3};
  double brightness = 1, contrast = 1, saturation = 1, hue = 0;
  bool jitter_skipped = false;  // RandomApply's draw left ColorJitter out for this sample
  // The automatic augmentation's operations, in order, each with its signed magnitude
  // (op is an AugmentOp of data/transform/auto_augment.h). AugMix: its chains one after the
  // other, chain i being chain_length[i] steps, and the mixing weights: mix_weight[0] for the
  // image, mix_weight[1 + i] for chain i (float32, as torchvision computes them).
  struct AugmentStep {
    uint8_t op = 0;
    float magnitude = 0;
  };
  static constexpr int kMaxAugmentSteps = AutoAugmentSpec::kMaxChains * AutoAugmentSpec::kMaxDepth;
  std::array<AugmentStep, kMaxAugmentSteps> augment{};
  int augment_steps = 0;
  int chains = 0;  // AugMix only; 0 otherwise
  std::array<uint8_t, AutoAugmentSpec::kMaxChains> chain_length{};
  std::array<float, AutoAugmentSpec::kMaxChains + 1> mix_weight{};
  // RandomErasing: the box in output pixels, and the seed of value='random''s noise.
  bool erase = false;
  int erase_top = 0, erase_left = 0, erase_height = 0, erase_width = 0;
  uint64_t erase_noise_seed = 0;
};

// Draws the parameters for a source of `width` x `height` (torchvision's get_params logic,
// including RandomResizedCrop's 10 attempts and central-crop fallback, and RandomCrop's
// top-then-left draw, skipped when the padded image is the crop's size). The order of draws
// from `rng` is fixed, a determinism contract: the transform registry's order, each transform
// drawing only when it is on (random_params.cpp documents it). A transform inside RandomApply
// (apply_p < 1) first draws one bernoulli(apply_p) and, when that says no, nothing more; a
// RandomChoice member that was not chosen draws nothing. Erasing and the automatic
// augmentation need the output size.
SampleParams draw_params(const TransformSpec& spec, int width, int height, SampleRng& rng);
// The same for a sample with keypoints and boxes (in its source's pixels), which BoxCrop crops
// around: it draws first (its margin, when that is a range), and every other transform then
// draws for the size of its crop. Null: none (a BoxCrop then crops nothing: subject width 0).
SampleParams draw_params(const TransformSpec& spec, int width, int height, SampleRng& rng,
                         const GeometryTargets* targets);

// A clip's frame of its own size (frames_per_clip): `frame`'s geometry, drawn for that size
// from a copy of the clip's stream (BoxCrop's crop and margin, the resize, the crop window and
// its padding), with every other draw `clip`'s, the first chosen frame's: the same flip,
// colour, erasing and the rest for every frame, even where a frame's size changed how many
// draws its geometry took. A RandomCrop's offsets land at the same fraction of each frame's
// room (SampleRng::below maps one draw in proportion), a CenterCrop at each frame's centre.
SampleParams with_frame_geometry(const SampleParams& clip, const SampleParams& frame);

// The size of the image the geometry takes for a width x height source: BoxCrop's crop
// (params.subject) when there is one, else the source's.
std::array<int, 2> geometry_input_size(const SampleParams& params, int width, int height);

// The part of a width x height image that the transform resamples for `params`, in its
// pixels (with a BoxCrop, give the crop's size, and the result is in the crop's pixels):
// params.crop for a box, the whole image for a window after a Resize
// (params.resized_width > 0); a plain 1:1 copy reads none (it gets params.crop). This is the
// region to decode, and what SampleTransformer::run's `crop` locates in the decoded image.
CropRect resampled_region(const SampleParams& params, int width, int height);

// The region of a width x height source that becomes the output, before any flip, rotation or
// warp, in the source's pixels: the box a crop resamples, or the window a 1:1 crop copies
// (scaled back through a Resize before it), moved to the source by BoxCrop's crop when there
// is one. It reaches past the image where the chain pads.
// Re-cropping the source by it and resizing to the output size gives the output's geometry.
CropRect source_box(const TransformSpec& spec, const SampleParams& params, int width, int height);

// RandomAffine's map of a point of the out_w x out_h image before it to the image after it, as
// a 2x3 matrix (row by row) in pixels with the origin at the top-left corner: the inverse of
// the matrix its warp samples through. The identity for a sample without it.
std::array<double, 6> affine_forward(const SampleParams& params, int out_w, int out_h);

// Antialiased bilinear resample of `region` of `src` to out_w x out_h, output float HWC in
// [0, 255] with src's channels. Pillow's BILINEAR resampling with a box: `region` may be
// fractional and is clipped to the image; filter taps may read outside it, anywhere in the
// image (as Image.resize(size, BILINEAR, box)). `out` and `scratch` (the horizontal pass)
// are grown as needed and can be reused across calls; no allocation once warm.
void resample_region(std::vector<float>* out, std::vector<float>* scratch, const Image& src, const CropRect& region,
                     int out_w, int out_h);

// One axis of the resampler's filter, for a consumer that resamples elsewhere (the GPU, after
// nvJPEG: stoker/data/gpu_sample.h): output o is the sum over k < taps, in order, of
// weight[o * taps + k] x input index[o * taps + k], in float32, one multiply and one add a tap
// (no fused multiply-add): the CPU path's arithmetic, so its values to the bit. Taps past an
// output's own count weigh 0 and name a pixel inside the axis.
struct FilterTaps {
  int taps = 0;
  std::vector<int32_t> index;  // out_size x taps
  std::vector<float> weight;   // out_size x taps
};

// The taps resample_region() uses along an axis of `in_size` pixels for [start, start + length)
// (clipped to the axis, as it clips `region`) resampled to `out_size` outputs: `clamp_to_region`
// and `filter` as ResampleOptions has them (src/data/transform/resample.h), `mirror` listing the
// outputs in reverse (a flip). Grows nothing it does not own; thread-safe.
void filter_taps(int in_size, double start, double length, int out_size, bool clamp_to_region, bool mirror,
                 ResampleFilter filter, FilterTaps* out);

class Source;

// Per-feature mean and population standard deviation of `source` (which must hold feature
// vectors), in double precision; a constant feature gets std 1 (as StandardScaler). Over every
// sample from source.feature_sums() when it has them; else read in order: every row when the
// source has at most `fit_rows` (or `fit_rows` is 0), otherwise a sample of about `fit_rows`
// rows (whole runs of Source::rows_read_together() rows, evenly spread from the first to the last, the
// same on every call). Throws UsageError for a source without feature vectors. The pass
// reports its rows to current_open_progress() (stoker/data/open_progress.h), so a front end
// shows a line.
void fit_standardize(const Source& source, std::vector<float>* mean, std::vector<float>* std, int64_t fit_rows = 0);

class SampleTransformer {
 public:
  // Writes one sample of spec.sample_bytes() bytes at `out`, from the decoded crop.
  // `decoded.crop` says where resampled_region(params, ...) lies in decoded.image: params.crop
  // for a box; with params.copy (the 1:1 geometries) decoded.image must be the whole image
  // (padding reads anywhere in it) and `crop` is unused, except after a Resize
  // (params.resized_width > 0), where it is the whole source in decoded.image (a reduced
  // decode's fractional extent) and is resized to resized_width x resized_height. A grey decode with an RGB
  // spec is replicated to 3 channels (an RGB decode with a grey spec converted to L).
  // float16 is IEEE binary16, rounded to nearest even; uint8 is rounded to nearest.
  // decoded.pil_resample says how the geometry resamples it, as PIL resamples its mode
  // (PilResample): an RGBA image premultiplied (its alpha then dropped; not where the crop
  // is resized to its own size, which PIL leaves as it is), a P or 1 one nearest.
  void run(void* out, const DecodedImage& decoded, const SampleParams& params, const TransformSpec& spec) {
    run(out, decoded.image, decoded.crop, params, spec, decoded.pil_resample);
  }
  // The same from an image held elsewhere (the decoded cache): `crop` in `image` coordinates.
  void run(void* out, const Image& image, const CropRect& crop, const SampleParams& params, const TransformSpec& spec,
           PilResample pil_resample = PilResample::kAsStored);

 private:
  class Stages;  // the steps between the geometry and the write (sample_transformer.cpp)

  // `whole` (the source's extent in `image`) resized to width x height and rounded to uint8,
  // into resized_image_ (a padded RandomCrop window after a Resize).
  void resize_whole(const Image& image, const CropRect& whole, int width, int height, ResampleFilter filter);

  std::vector<float> resized_;  // out_h x out_w x channels, [0, 255]
  Image resized_image_;
  Image premultiplied_;             // an RGBA image's colours premultiplied by its alpha, to resample
  std::vector<float> scratch_;      // resampler's horizontal pass
  std::vector<int> columns_;        // the 1:1 crop's source columns
  std::vector<uint8_t> planes_[3];  // the automatic augmentation's uint8 image, its target, AugMix's chain
  std::vector<float> mix_;          // AugMix's sum of the image and its chains
  std::vector<float> grid_[3];      // RandomPerspective's and ElasticTransform's sampling grid (x, y), blur scratch
};

}  // namespace stoker::data
