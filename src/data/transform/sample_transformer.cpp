// SampleTransformer::run: resample or the 1:1 padded crop (flip folded in) -> vertical flip ->
// [grey] -> RandomRotation, RandomAffine, RandomPerspective, ElasticTransform and the automatic
// augmentation (on uint8 planes) -> ColorJitter -> RandomGrayscale -> GaussianBlur ->
// RandomInvert ... RandomEqualize (on uint8 planes) -> write -> RandomErasing (on the output).
// A RandomOrder runs its members at the place of the first of them, in the order drawn.
//
// The float image in between is kept in the output's layout, so that writing is one
// contiguous pass: planes (CHW) for NCHW, interleaved (HWC) for NHWC. The writer computes
// x * scale[c] + bias[c], folding /255 and Normalize into one multiply-add per element.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "data/transform/auto_augment.h"
#include "data/transform/color_jitter.h"
#include "data/transform/gaussian_blur.h"
#include "data/transform/half.h"
#include "data/transform/pad_crop.h"
#include "data/transform/random_erasing.h"
#include "data/transform/resample.h"
#include "data/transform/simd.h"
#include "data/transform/warp.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

struct Affine {
  float scale[3];
  float bias[3];
};

Affine output_affine(const TransformSpec& spec) {
  Affine f{};
  for (int c = 0; c < 3; ++c) {
    // Grey output uses the first mean/std element for its one channel.
    const int k = spec.channels == 1 ? 0 : c;
    if (spec.dtype == DType::kUint8) {
      f.scale[c] = 1.0f;  // uint8 keeps [0, 255]; Normalize is left to the consumer
      f.bias[c] = 0.0f;
    } else if (spec.normalize.enabled()) {
      // (x / 255 - mean) / std
      f.scale[c] = 1.0f / (255.0f * spec.normalize.std[k]);
      f.bias[c] = -spec.normalize.mean[k] / spec.normalize.std[k];
    } else {
      f.scale[c] = 1.0f / 255.0f;
      f.bias[c] = 0.0f;
    }
  }
  return f;
}

template <typename T>
T convert(float v);
template <>
float convert<float>(float v) {
  return v;
}
template <>
uint16_t convert<uint16_t>(float v) {
  return float_to_half(v);
}
template <>
uint8_t convert<uint8_t>(float v) {
  // Round half up. v is in [0, 255] give or take float error, so the int conversion is
  // safe; the clamp is on ints, which the vectoriser handles (float selects it does not).
  return static_cast<uint8_t>(std::clamp(static_cast<int>(v + 0.5f), 0, 255));
}

// One channel's plane.
template <typename T>
void write_plane(T* __restrict out, const float* __restrict in, size_t n, float a, float b) {
  simd::for_each_blocked(n, [&](size_t i) { out[i] = convert<T>(a * in[i] + b); });
}

// Interleaved RGB to interleaved RGB: a flat loop whose coefficients repeat every 3
// elements, unrolled to 48 (a multiple of 3 and of the vector width).
template <typename T>
void write_rgb(T* __restrict out, const float* __restrict in, size_t n, const Affine& f) {
  constexpr size_t kPeriod = 48;
  float a[kPeriod];
  float b[kPeriod];
  for (size_t j = 0; j < kPeriod; ++j) {
    a[j] = f.scale[j % 3];
    b[j] = f.bias[j % 3];
  }
  size_t i = 0;
  for (; i + kPeriod <= n; i += kPeriod) {
    STOKER_LOOP_INDEPENDENT
    for (size_t j = 0; j < kPeriod; ++j) out[i + j] = convert<T>(a[j] * in[i + j] + b[j]);
  }
  for (; i < n; ++i) out[i] = convert<T>(a[i % 3] * in[i] + b[i % 3]);
}

// One grey plane to interleaved RGB (a grey decode with an RGB spec; not a hot path).
template <typename T>
void write_grey_as_rgb(T* __restrict out, const float* __restrict in, size_t n, const Affine& f) {
  for (size_t p = 0; p < n; ++p) {
    for (int c = 0; c < 3; ++c) out[3 * p + c] = convert<T>(f.scale[c] * in[p] + f.bias[c]);
  }
}

// `channels` is what `in` holds (planar: 1 or 3 planes; interleaved: 3); the spec says what
// to write.
template <typename T>
void write_as(void* out, const float* in, int channels, bool planar, size_t pixels, const TransformSpec& spec) {
  T* dst = static_cast<T*>(out);
  const Affine f = output_affine(spec);
  if (!planar) {
    write_rgb<T>(dst, in, pixels * 3, f);
  } else if (spec.layout == Layout::kNCHW || spec.channels == 1) {
    for (int c = 0; c < spec.channels; ++c) {
      const float* plane = in + (channels == 1 ? 0 : c * pixels);
      write_plane<T>(dst + c * pixels, plane, pixels, f.scale[c], f.bias[c]);
    }
  } else {
    write_grey_as_rgb<T>(dst, in, pixels, f);
  }
}

// RGB planes -> L (PIL's convert("L") weights), for an RGB decode with a grey spec.
void to_grey(float* __restrict grey, const float* __restrict r, const float* __restrict g, const float* __restrict b,
             size_t n) {
  simd::for_each_blocked(n, [&](size_t i) { grey[i] = 0.299f * r[i] + 0.587f * g[i] + 0.114f * b[i]; });
}

// RandomVerticalFlip: the rows in reverse order, of each plane or of the interleaved image.
void flip_rows(float* data, int width, int height, int channels, bool planar) {
  const size_t row = static_cast<size_t>(width) * (planar ? 1 : channels);
  const size_t plane = row * static_cast<size_t>(height);
  for (int c = 0; c < (planar ? channels : 1); ++c) {
    float* p = data + c * plane;
    for (int y = 0; y < height / 2; ++y) {
      std::swap_ranges(p + y * row, p + (y + 1) * row, p + (height - 1 - y) * row);
    }
  }
}

// RandomGrayscale: L (the weights of PIL's convert("L"), which torchvision uses) in all three
// channels.
void grey_in_rgb(float* data, float* scratch, size_t pixels, bool planar) {
  if (planar) {
    to_grey(scratch, data, data + pixels, data + 2 * pixels, pixels);
    for (int c = 0; c < 3; ++c) std::copy_n(scratch, pixels, data + c * pixels);
    return;
  }
  for (size_t i = 0; i < pixels; ++i) {
    float* px = data + 3 * i;
    px[0] = px[1] = px[2] = 0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2];
  }
}

// The float image rounded into uint8 planes, as torchvision's uint8 image (or PIL's) holds it.
void to_uint8_planes(const float* data, size_t pixels, int channels, bool planar, std::vector<uint8_t>* image) {
  image->resize(pixels * static_cast<size_t>(channels));
  const auto stride = static_cast<size_t>(channels);
  for (int c = 0; c < channels; ++c) {
    uint8_t* plane = image->data() + c * pixels;
    if (planar) {
      const float* from = data + c * pixels;
      simd::for_each_blocked(pixels, [&](size_t i) { plane[i] = convert<uint8_t>(from[i]); });
    } else {
      for (size_t i = 0; i < pixels; ++i) plane[i] = convert<uint8_t>(data[i * stride + c]);
    }
  }
}

void from_uint8_planes(const std::vector<uint8_t>& image, float* data, size_t pixels, int channels, bool planar) {
  const auto stride = static_cast<size_t>(channels);
  for (int c = 0; c < channels; ++c) {
    const uint8_t* plane = image.data() + c * pixels;
    if (planar) {
      float* to = data + c * pixels;
      simd::for_each_blocked(pixels, [&](size_t i) { to[i] = static_cast<float>(plane[i]); });
    } else {
      for (size_t i = 0; i < pixels; ++i) data[i * stride + c] = static_cast<float>(plane[i]);
    }
  }
}

// The steps between the geometry and the write, in the chain's fixed order: the chain's steps
// (Step) and, between them, the automatic augmentation and RandomGrayscale.
enum class Stage : uint8_t {
  kRotation,
  kAffine,
  kPerspective,
  kElastic,
  kAutoAugment,
  kColorJitter,
  kRandomGrayscale,
  kGaussianBlur,
  kInvert,  // ... kEqualize: the colour operations, in ColorOp's order
};
constexpr int kStages = static_cast<int>(Stage::kInvert) + kColorOps;

Stage stage_of(Step step) {
  const int s = static_cast<int>(step);
  if (step <= Step::kElastic) return static_cast<Stage>(s);
  if (step == Step::kColorJitter) return Stage::kColorJitter;
  if (step == Step::kGaussianBlur) return Stage::kGaussianBlur;
  return static_cast<Stage>(static_cast<int>(Stage::kInvert) + s - static_cast<int>(Step::kInvert));
}
bool is_step(Stage stage, Step* step) {
  const int s = static_cast<int>(stage);
  if (stage <= Stage::kElastic) {
    *step = static_cast<Step>(s);
  } else if (stage == Stage::kColorJitter) {
    *step = Step::kColorJitter;
  } else if (stage == Stage::kGaussianBlur) {
    *step = Step::kGaussianBlur;
  } else if (stage >= Stage::kInvert) {
    *step = static_cast<Step>(static_cast<int>(Step::kInvert) + s - static_cast<int>(Stage::kInvert));
  } else {
    return false;
  }
  return true;
}

}  // namespace

// The image between the geometry and the write: float, or rounded into uint8 planes for the
// steps that work on them as torchvision's uint8 image (the warps, the automatic augmentation,
// the colour operations). It moves between the two only where a step needs the other, so
// consecutive uint8 steps share one rounding, and the result is the same bytes whichever
// order the conversions fall in (uint8 values survive the round trip).
class SampleTransformer::Stages {
 public:
  Stages(SampleTransformer& t, float* data, size_t pixels, int channels, bool planar, int width, int height,
         const SampleParams& params, const TransformSpec& spec)
      : t_(t),
        data_(data),
        pixels_(pixels),
        channels_(channels),
        planar_(planar),
        width_(width),
        height_(height),
        params_(params),
        spec_(spec) {}

  // Every stage this sample runs, in the fixed order; a RandomOrder's members one after
  // another at the place of the first, in the order drawn.
  void run_all() {
    bool order_done = false;
    for (int i = 0; i < kStages; ++i) {
      const auto stage = static_cast<Stage>(i);
      Step step{};
      if (is_step(stage, &step) && spec_.order.has(step)) {
        if (order_done) continue;
        order_done = true;
        for (int k = 0; k < params_.order_size; ++k) {
          run(stage_of(static_cast<Step>(params_.order[static_cast<size_t>(k)])));
        }
        continue;
      }
      run(stage);
    }
    floats();
  }

 private:
  std::vector<uint8_t>& image() { return t_.planes_[0]; }

  void planes() {
    if (in_planes_) return;
    to_uint8_planes(data_, pixels_, channels_, planar_, &image());
    in_planes_ = true;
  }
  void floats() {
    if (!in_planes_) return;
    from_uint8_planes(image(), data_, pixels_, channels_, planar_);
    in_planes_ = false;
  }

  void run(Stage stage) {
    const SampleParams& p = params_;
    switch (stage) {
      case Stage::kRotation:
        if (!p.rotate) return;
        planes();
        apply_augment_op(AugmentOp::kRotate, p.angle, filled_warp(spec_.rotation.interpolation, spec_.rotation.fill),
                         &image(), &t_.planes_[1], width_, height_, channels_);
        return;
      case Stage::kAffine:
        if (!p.affine) return;
        planes();
        apply_affine(p, filled_warp(spec_.affine.interpolation, spec_.affine.fill), &image(), &t_.planes_[1], width_,
                     height_, channels_);
        return;
      case Stage::kPerspective:
        if (!p.perspective) return;
        perspective_grid(perspective_coeffs(p.corners, width_, height_), width_, height_, &t_.grid_[0], &t_.grid_[1]);
        warp_planes(filled_warp(spec_.perspective.interpolation, spec_.perspective.fill));
        return;
      case Stage::kElastic:
        if (!p.elastic) return;
        elastic_grid(spec_.elastic, p.elastic_seed, width_, height_, &t_.grid_[0], &t_.grid_[1], &t_.grid_[2]);
        warp_planes(filled_warp(spec_.elastic.interpolation, spec_.elastic.fill));
        return;
      case Stage::kAutoAugment:
        if (p.augment_steps <= 0) return;
        planes();
        if (p.chains > 0) {
          apply_aug_mix(p, spec_.auto_augment, &image(), &t_.planes_[2], &t_.planes_[1], &t_.mix_, width_, height_,
                        channels_);
        } else {
          for (int s = 0; s < p.augment_steps; ++s) {
            const SampleParams::AugmentStep& step = p.augment[static_cast<size_t>(s)];
            apply_augment_op(static_cast<AugmentOp>(step.op), step.magnitude, spec_.auto_augment, &image(),
                             &t_.planes_[1], width_, height_, channels_);
          }
        }
        return;
      case Stage::kColorJitter:
        if (!spec_.jitter.enabled() || p.jitter_skipped) return;
        floats();
        apply_color_jitter(data_, pixels_, channels_, planar_, p);
        return;
      case Stage::kRandomGrayscale:
        if (!p.grayscale || channels_ != 3) return;
        floats();
        if (t_.scratch_.size() < pixels_) t_.scratch_.resize(pixels_);
        grey_in_rgb(data_, t_.scratch_.data(), pixels_, planar_);
        return;
      case Stage::kGaussianBlur:
        if (p.blur_sigma <= 0) return;
        floats();
        gaussian_blur(data_, width_, height_, channels_, planar_, spec_.blur.kernel_w, spec_.blur.kernel_h,
                      p.blur_sigma, &t_.scratch_);
        return;
      default: {
        const int op = static_cast<int>(stage) - static_cast<int>(Stage::kInvert);
        if ((p.color_ops >> op & 1u) == 0) return;
        planes();
        apply_color_op(static_cast<ColorOp>(op), spec_.color_ops[static_cast<size_t>(op)].value, &image(),
                       &t_.planes_[1], width_, height_, channels_);
        return;
      }
    }
  }

  // The uint8 planes sampled through t_.grid_ (x, y) into planes_[1], which becomes the image.
  void warp_planes(const AutoAugmentSpec& warp_spec) {
    planes();
    std::vector<uint8_t>& out = t_.planes_[1];
    out.resize(image().size());
    warp_grid(t_.grid_[0].data(), t_.grid_[1].data(), warp_spec, image().data(), out.data(), width_, height_,
              channels_);
    image().swap(out);
  }

  SampleTransformer& t_;
  float* data_;
  size_t pixels_;
  int channels_;
  bool planar_;
  int width_, height_;
  const SampleParams& params_;
  const TransformSpec& spec_;
  bool in_planes_ = false;
};

void SampleTransformer::resize_whole(const Image& image, const CropRect& whole, int width, int height,
                                     ResampleFilter filter) {
  ResampleOptions options;  // interleaved, as an Image holds its pixels
  options.filter = filter;
  resample_region(&resized_, &scratch_, image, whole, width, height, options);
  resized_image_.reshape(width, height, image.channels());
  const float* from = resized_.data();
  for (int y = 0; y < height; ++y) {
    uint8_t* row = resized_image_.row(y);
    const size_t n = static_cast<size_t>(width) * image.channels();
    simd::for_each_blocked(n, [&](size_t i) {
      row[i] = static_cast<uint8_t>(static_cast<int>(std::min(std::max(from[i], 0.0f), 255.0f) + 0.5f));
    });
    from += n;
  }
}

void SampleTransformer::run(void* out, const Image& image, const CropRect& crop, const SampleParams& params,
                            const TransformSpec& spec) {
  const int width = spec.out_width;
  const int height = spec.out_height;
  if (width <= 0 || height <= 0) return;  // sample_bytes() is 0 too
  if (image.width() <= 0 || image.height() <= 0 || image.channels() <= 0) {
    std::memset(out, 0, spec.sample_bytes());  // nothing decoded: never leave stale bytes
    return;
  }

  // Interleaved only when it can be written as is: NHWC RGB from an RGB decode.
  const bool planar = spec.layout == Layout::kNCHW || spec.channels != 3 || image.channels() != 3;
  // 'none' keeps the source's size (check_size saw to it): the resample would be an identity,
  // so it is the 1:1 copy too (the same values, in a fraction of the time).
  if (params.copy) {
    const Image* from = &image;
    if (params.resized_width > 0) {  // a padded window after a Resize: PIL's resized image first
      resize_whole(image, crop, params.resized_width, params.resized_height, spec.resample);
      from = &resized_image_;
    }
    copy_padded_crop(&resized_, &columns_, *from, params, spec, planar);
  } else {
    ResampleOptions options;
    options.flip = params.flip;
    options.clamp_to_region = spec.geometry == Geometry::kRandomResizedCrop;
    options.planar = planar;
    options.filter = spec.resample;
    resample_region(&resized_, &scratch_, image, crop, width, height, options);
  }

  if (params.vflip) flip_rows(resized_.data(), width, height, image.channels(), planar);

  // The decoder produces the spec's channels; anything else is adapted rather than trusted
  // (on planes): extra planes (alpha) ignored, RGB turned grey, grey replicated when written.
  const size_t pixels = static_cast<size_t>(width) * height;
  float* data = resized_.data();
  int channels = image.channels() >= 3 ? 3 : 1;
  if (channels == 3 && spec.channels == 1) {
    // Into scratch_, which the resampler is done with, then back as the one plane.
    if (scratch_.size() < pixels) scratch_.resize(pixels);
    to_grey(scratch_.data(), data, data + pixels, data + 2 * pixels, pixels);
    std::copy_n(scratch_.data(), pixels, data);
    channels = 1;
  }

  if (spec.grayscale_rgb && channels == 3) {  // Grayscale(num_output_channels=3)
    if (scratch_.size() < pixels) scratch_.resize(pixels);
    grey_in_rgb(data, scratch_.data(), pixels, planar);
  }
  Stages(*this, data, pixels, channels, planar, width, height, params, spec).run_all();

  switch (spec.dtype) {
    case DType::kFloat32:
      write_as<float>(out, data, channels, planar, pixels, spec);
      break;
    case DType::kFloat16:
      write_as<uint16_t>(out, data, channels, planar, pixels, spec);
      break;
    case DType::kUint8:
      write_as<uint8_t>(out, data, channels, planar, pixels, spec);
      break;
  }
  erase_output(out, spec, params);
}

}  // namespace stoker::data
