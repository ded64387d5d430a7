// draw_params: torchvision's get_params logic on a SampleRng.
//
// Draw order (part of the determinism contract: changing it changes every epoch's samples):
//   1. geometry: RandomResizedCrop draws 2 uniforms per attempt (area fraction, log aspect),
//      then 2 bounded ints (top, left) for the accepted attempt; RandomCrop 2 bounded ints
//      (top, left) unless the padded image is the crop's size; nothing for the others. After
//      a Resize, both draw in the resized image's size.
//   2. flip: one bernoulli(hflip.p), only if hflip.p > 0; then one bernoulli(vflip.p), only if
//      vflip.p > 0; then RandomChoice's member, one uniform, only with a RandomChoice (the
//      member whose cumulative weight, in Step order, first exceeds uniform * total, as
//      random.choices picks); then RandomOrder's order, only with a RandomOrder (Fisher-Yates
//      over its members in Step order: for i = n-1..1, swap(order[i], order[below(i + 1)]));
//      then RandomRotation's angle, one uniform in [min, max], only if enabled;
//      then RandomAffine's, only if enabled, as RandomAffine.get_params: the angle (one
//      uniform), with translate two uniforms (x then y, each rounded half to even to whole
//      pixels), with scale one uniform, with shear one uniform (x) and a second (y) where four
//      values were given; then RandomPerspective's, only if enabled: one bernoulli(p), and when
//      it says yes the corners as RandomPerspective.get_params draws them (top-left x, y,
//      top-right x, y, bottom-right x, y, bottom-left x, y, each one bounded int); then
//      ElasticTransform's, only if enabled: one 64-bit seed for its noise.
//   3. the automatic augmentation, only if one is set (auto_augment.h lists its draws).
//   4. ColorJitter, only if any component is enabled: a permutation of the four operations
//      (Fisher-Yates: for i = 3..1, swap(order[i], order[below(i + 1)])), then one uniform per
//      enabled component in the order brightness, contrast, saturation, hue, as torchvision's
//      ColorJitter.get_params does (factors are drawn in fixed order, applied permuted).
//   5. RandomGrayscale: one bernoulli(p), only if p > 0; then GaussianBlur's
//      sigma, one uniform in [sigma_min, sigma_max], only if enabled; then one bernoulli(p) per
//      colour operation with p > 0 (RandomInvert ... RandomEqualize, ColorOp's order).
//   6. RandomErasing, only if p > 0 (random_erasing.h lists its draws).
// A transform inside RandomApply (apply_p < 1: ColorJitter, GaussianBlur, RandomRotation,
// RandomAffine, ElasticTransform) first draws one bernoulli(apply_p) at its place above; when
// that is false it draws nothing more and does not run for the sample. A member of a
// RandomChoice that was not chosen draws nothing at all.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "data/transform/auto_augment.h"
#include "data/transform/random_box.h"
#include "data/transform/random_erasing.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

// RandomApply's draw: `if self.p < torch.rand(1): return img`. None for p = 1 (no RandomApply).
bool applied(double apply_p, SampleRng& rng) { return apply_p >= 1 || rng.bernoulli(apply_p); }

// torchvision's RandomPerspective.get_params(width, height, distortion_scale): randint(lo, hi)
// is lo + below(hi - lo).
void draw_perspective(double distortion_scale, int width, int height, SampleRng& rng, SampleParams* params) {
  const auto dx = static_cast<int>(distortion_scale * (width / 2));
  const auto dy = static_cast<int>(distortion_scale * (height / 2));
  const auto randint = [&rng](int lo, int hi) {
    return lo + static_cast<int>(rng.below(static_cast<uint64_t>(hi - lo)));
  };
  std::array<int, 8>& c = params->corners;
  c[0] = randint(0, dx + 1);  // top-left
  c[1] = randint(0, dy + 1);
  c[2] = randint(width - dx - 1, width);  // top-right
  c[3] = randint(0, dy + 1);
  c[4] = randint(width - dx - 1, width);  // bottom-right
  c[5] = randint(height - dy - 1, height);
  c[6] = randint(0, dx + 1);  // bottom-left
  c[7] = randint(height - dy - 1, height);
  params->perspective = true;
}

// RandomChoice's member and RandomOrder's order.
void draw_groups(const TransformSpec& spec, SampleRng& rng, SampleParams* params) {
  if (spec.choice.enabled()) {
    double total = 0;
    int last = 0;
    for (int s = 0; s < kSteps; ++s) {
      if (spec.choice.has(static_cast<Step>(s))) total += spec.choice.weight[static_cast<size_t>(s)];
    }
    const double x = rng.uniform() * total;
    double cumulative = 0;
    params->chosen = kSteps;
    for (int s = 0; s < kSteps && params->chosen == kSteps; ++s) {
      if (!spec.choice.has(static_cast<Step>(s))) continue;
      last = s;
      cumulative += spec.choice.weight[static_cast<size_t>(s)];
      if (x < cumulative) params->chosen = static_cast<uint8_t>(s);
    }
    if (params->chosen == kSteps) params->chosen = static_cast<uint8_t>(last);  // rounding at the top end
  }
  if (spec.order.enabled()) {
    int n = 0;
    for (int s = 0; s < kSteps; ++s) {
      if (spec.order.has(static_cast<Step>(s))) params->order[static_cast<size_t>(n++)] = static_cast<uint8_t>(s);
    }
    for (int i = n - 1; i > 0; --i) {
      const auto j = static_cast<int>(rng.below(static_cast<uint64_t>(i + 1)));
      std::swap(params->order[static_cast<size_t>(i)], params->order[static_cast<size_t>(j)]);
    }
    params->order_size = n;
  }
}

// Whether `step` may run for this sample as far as RandomChoice is concerned: it is not in
// one, or it was chosen.
bool chosen(const TransformSpec& spec, const SampleParams& params, Step step) {
  return !spec.choice.has(step) || params.chosen == static_cast<uint8_t>(step);
}

// Python's round(): half to even. nearbyint uses the current rounding mode, which is
// round-to-nearest-even unless someone changed it.
int round_half_even(double x) { return static_cast<int>(std::nearbyint(x)); }

void draw_affine(const AffineSpec& a, int out_w, int out_h, SampleRng& rng, SampleParams* params) {
  params->affine = true;
  params->affine_angle = static_cast<float>(rng.uniform(a.min_degrees, a.max_degrees));
  if (a.translate) {
    // int(round(uniform(-max_dx, max_dx))).
    const double max_dx = a.translate_x * out_w, max_dy = a.translate_y * out_h;
    params->translate_x = round_half_even(rng.uniform(-max_dx, max_dx));
    params->translate_y = round_half_even(rng.uniform(-max_dy, max_dy));
  }
  if (a.scale) params->affine_scale = static_cast<float>(rng.uniform(a.scale_min, a.scale_max));
  if (a.shear) params->shear_x = static_cast<float>(rng.uniform(a.shear_x_min, a.shear_x_max));
  if (a.shear_y) params->shear_y = static_cast<float>(rng.uniform(a.shear_y_min, a.shear_y_max));
}

// torchvision.transforms.RandomResizedCrop.get_params (0.14). Integer pixel rectangle.
CropRect random_resized_crop(const TransformSpec& spec, int width, int height, SampleRng& rng) {
  const RandomResizedCropSpec& rrc = spec.random_resized_crop;
  const double area = static_cast<double>(width) * height;
  const double log_ratio_min = std::log(rrc.ratio_min);
  const double log_ratio_max = std::log(rrc.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const auto [w, h] = draw_box_sides(rng, area, rrc.scale_min, rrc.scale_max, log_ratio_min, log_ratio_max);
    if (0 < w && w <= width && 0 < h && h <= height) {
      const auto top = static_cast<int>(rng.below(static_cast<uint64_t>(height - h + 1)));
      const auto left = static_cast<int>(rng.below(static_cast<uint64_t>(width - w + 1)));
      return {static_cast<double>(left), static_cast<double>(top), static_cast<double>(w), static_cast<double>(h)};
    }
  }
  // Fallback: a central crop with the aspect ratio clamped into [ratio_min, ratio_max].
  const double in_ratio = static_cast<double>(width) / height;
  int w = width;
  int h = height;
  if (in_ratio < rrc.ratio_min) {
    h = round_half_even(w / rrc.ratio_min);
  } else if (in_ratio > rrc.ratio_max) {
    w = round_half_even(h * rrc.ratio_max);
  }
  // Rounding can give 0 for extreme shapes (torchvision would then fail); keep one pixel.
  w = std::clamp(w, 1, width);
  h = std::clamp(h, 1, height);
  return {static_cast<double>((width - w) / 2), static_cast<double>((height - h) / 2), static_cast<double>(w),
          static_cast<double>(h)};
}

// A rectangle of the resized_w x resized_h image as one of the width x height source.
CropRect to_source(const CropRect& r, int width, int height, int resized_w, int resized_h) {
  const double sx = static_cast<double>(width) / resized_w;
  const double sy = static_cast<double>(height) / resized_h;
  return {r.x * sx, r.y * sy, r.width * sx, r.height * sy};
}

// Resize then CenterCrop(out_height, out_width), as a rectangle of the source: the crop in
// resized coordinates scaled back by source/resized per axis.
CropRect resize_center_crop(const TransformSpec& spec, int width, int height) {
  const auto [resized_w, resized_h] = resized_size(spec.resize, width, height);
  // torchvision pads a crop larger than the image; we clamp it to the image instead, so the
  // output then shows the whole resized axis stretched to the output size.
  const int crop_w = std::min(spec.out_width, resized_w);
  const int crop_h = std::min(spec.out_height, resized_h);
  const int left = round_half_even((resized_w - crop_w) / 2.0);
  const int top = round_half_even((resized_h - crop_h) / 2.0);
  return to_source(
      {static_cast<double>(left), static_cast<double>(top), static_cast<double>(crop_w), static_cast<double>(crop_h)},
      width, height, resized_w, resized_h);
}

// RandomCrop (torchvision's RandomCrop.forward: padding, then pad_if_needed's shortfall on both
// sides, then get_params's top and left, not drawn when the padded image is the crop's size)
// or the 1:1 CenterCrop (functional.center_crop): params->crop in the padded image's
// coordinates and pad_x / pad_y (see SampleParams); width 0 when the padded image is smaller
// than the crop.
void draw_one_to_one(const TransformSpec& spec, int width, int height, SampleRng& rng, SampleParams* params) {
  const int th = spec.out_height;
  const int tw = spec.out_width;
  params->pad_x = 0;
  params->pad_y = 0;
  if (spec.geometry == Geometry::kCenterCrop) {
    // functional.center_crop: pad with zeros to the crop's size where the image is smaller
    // ((crop - size) // 2 before), then round((size - crop) / 2).
    if (tw > width) params->pad_x = (tw - width) / 2;
    if (th > height) params->pad_y = (th - height) / 2;
    const int left = tw > width ? 0 : round_half_even((width - tw) / 2.0);
    const int top = th > height ? 0 : round_half_even((height - th) / 2.0);
    params->crop = {static_cast<double>(left), static_cast<double>(top), static_cast<double>(tw),
                    static_cast<double>(th)};
    return;
  }
  const PadSpec& pad = spec.pad;
  int padded_w = width + pad.left + pad.right;
  int padded_h = height + pad.top + pad.bottom;
  if (pad.if_needed && padded_w < tw) {  // padding=[size - width, 0]: both sides
    params->pad_x = tw - padded_w;
    padded_w += 2 * params->pad_x;
  }
  if (pad.if_needed && padded_h < th) {
    params->pad_y = th - padded_h;
    padded_h += 2 * params->pad_y;
  }
  if (padded_w < tw || padded_h < th) {
    params->crop = {0, 0, 0, 0};
    return;
  }
  int top = 0;
  int left = 0;
  if (padded_w != tw || padded_h != th) {  // get_params returns (0, 0, h, w) without a draw
    top = static_cast<int>(rng.below(static_cast<uint64_t>(padded_h - th + 1)));
    left = static_cast<int>(rng.below(static_cast<uint64_t>(padded_w - tw + 1)));
  }
  params->crop = {static_cast<double>(left), static_cast<double>(top), static_cast<double>(tw),
                  static_cast<double>(th)};
}

// A 1:1 window drawn in the resized_w x resized_h image (params->crop in its padded
// coordinates): inside the image, the box of the source it covers, resampled in one pass as
// Resize+CenterCrop's; reaching into the padding, the whole image is resized first.
void place_resized_window(const TransformSpec& spec, int width, int height, int resized_w, int resized_h,
                          SampleParams* params) {
  const CropRect& c = params->crop;
  const double x = c.x - spec.pad.left - params->pad_x;
  const double y = c.y - spec.pad.top - params->pad_y;
  if (x >= 0 && y >= 0 && x + c.width <= resized_w && y + c.height <= resized_h) {
    params->crop = to_source({x, y, c.width, c.height}, width, height, resized_w, resized_h);
    params->pad_x = params->pad_y = 0;
    params->copy = false;
    return;
  }
  params->resized_width = resized_w;
  params->resized_height = resized_h;
}

}  // namespace

std::array<int, 2> resized_size(const ResizeSpec& resize, int width, int height) {
  if (width <= 0 || height <= 0) return {width, height};  // nothing to resize
  if (resize.shorter > 0) {
    // torchvision's _compute_resized_output_size: the long side is int(size * long / short).
    const int64_t shorter = std::min(width, height);
    const int64_t longer = std::max(width, height);
    const int64_t size = resize.shorter;
    int resized_short = resize.shorter;
    int resized_long = static_cast<int>(static_cast<double>(size * longer) / shorter);
    if (resize.max_size > 0 && resized_long > resize.max_size) {
      resized_short = static_cast<int>(static_cast<double>(int64_t{resize.max_size} * resized_short) / resized_long);
      resized_long = resize.max_size;
    }
    if (width <= height) return {resized_short, resized_long};
    return {resized_long, resized_short};
  }
  if (resize.width > 0 && resize.height > 0) return {resize.width, resize.height};
  return {width, height};
}

CropRect resampled_region(const SampleParams& params, int width, int height) {
  if (params.copy && params.resized_width > 0) {
    return {0, 0, static_cast<double>(width), static_cast<double>(height)};
  }
  return params.crop;
}

SampleParams draw_params(const TransformSpec& spec, int width, int height, SampleRng& rng) {
  SampleParams params;
  const CropRect whole{0, 0, static_cast<double>(width), static_cast<double>(height)};
  if (width <= 0 || height <= 0) {
    params.crop = whole;
  } else if (spec.geometry == Geometry::kRandomResizedCrop) {
    // Drawn in the resized image, as torchvision draws it after a Resize.
    const auto [resized_w, resized_h] = resized_size(spec.resize, width, height);
    params.crop = to_source(random_resized_crop(spec, resized_w, resized_h, rng), width, height, resized_w, resized_h);
  } else if (spec.geometry == Geometry::kResizeCenterCrop) {
    params.crop = resize_center_crop(spec, width, height);
  } else if (copies_pixels(spec.geometry)) {
    const auto [resized_w, resized_h] = resized_size(spec.resize, width, height);
    params.copy = true;
    draw_one_to_one(spec, resized_w, resized_h, rng, &params);
    // A Resize to the image's own size changes nothing: the window is copied from it.
    if (params.crop.width > 0 && (resized_w != width || resized_h != height)) {
      place_resized_window(spec, width, height, resized_w, resized_h, &params);
    }
  } else {
    // none: the image as it is, or padded by Pad (crop is then the padded image, as for
    // RandomCrop, and the output its size).
    const PadSpec& pad = spec.pad;
    params.crop = {0, 0, static_cast<double>(width + pad.left + pad.right),
                   static_cast<double>(height + pad.top + pad.bottom)};
    params.copy = true;
  }

  if (spec.hflip.enabled()) params.flip = rng.bernoulli(spec.hflip.p);
  if (spec.vflip.enabled()) params.vflip = rng.bernoulli(spec.vflip.p);
  draw_groups(spec, rng, &params);
  const auto runs = [&](Step step) { return chosen(spec, params, step); };
  if (spec.rotation.enabled() && runs(Step::kRotation) && applied(spec.rotation.apply_p, rng)) {
    params.rotate = true;
    params.angle = static_cast<float>(rng.uniform(spec.rotation.min_degrees, spec.rotation.max_degrees));
  }
  if (spec.affine.enabled() && runs(Step::kAffine) && applied(spec.affine.apply_p, rng)) {
    draw_affine(spec.affine, spec.out_width, spec.out_height, rng, &params);
  }
  if (spec.perspective.enabled() && runs(Step::kPerspective) && rng.bernoulli(spec.perspective.p)) {
    draw_perspective(spec.perspective.distortion_scale, spec.out_width, spec.out_height, rng, &params);
  }
  if (spec.elastic.enabled() && runs(Step::kElastic) && applied(spec.elastic.apply_p, rng)) {
    params.elastic = true;
    params.elastic_seed = rng.next_u64();
  }
  draw_auto_augment(spec.auto_augment, spec.out_width, spec.out_height, rng, &params);

  const ColorJitterSpec& jitter = spec.jitter;
  if (jitter.enabled() && (!runs(Step::kColorJitter) || !applied(jitter.apply_p, rng))) params.jitter_skipped = true;
  if (jitter.enabled() && !params.jitter_skipped) {
    for (int i = 3; i > 0; --i) {
      const auto j = static_cast<int>(rng.below(static_cast<uint64_t>(i + 1)));
      std::swap(params.jitter_order[i], params.jitter_order[j]);
    }
    double* const drawn[] = {&params.brightness, &params.contrast, &params.saturation, &params.hue};
    for (int i = 0; i < 4; ++i) {
      if (!jitter.on(i)) continue;
      const auto [lo, hi] = jitter.bounds(i);
      *drawn[i] = rng.uniform(lo, hi);
    }
  }
  if (spec.random_grayscale.enabled()) params.grayscale = rng.bernoulli(spec.random_grayscale.p);
  if (spec.blur.enabled() && runs(Step::kGaussianBlur) && applied(spec.blur.apply_p, rng)) {
    params.blur_sigma = static_cast<float>(rng.uniform(spec.blur.sigma_min, spec.blur.sigma_max));
  }
  for (size_t i = 0; i < spec.color_ops.size(); ++i) {
    const ColorOpSpec& op = spec.color_ops[i];
    if (op.enabled() && runs(color_step(static_cast<ColorOp>(i))) && rng.bernoulli(op.p)) {
      params.color_ops = static_cast<uint8_t>(params.color_ops | (1u << i));
    }
  }
  draw_random_erasing(spec.erasing, spec.out_width, spec.out_height, rng, &params);
  return params;
}

}  // namespace stoker::data
