// SampleTransformer::run: resample (an RGBA image premultiplied, P and 1 nearest, as PIL resizes
// them: pil_resample.h) or the 1:1 padded crop (flip folded in) -> vertical flip ->
// [grey] -> the transforms between the geometry and the write, each entry's run in the
// registry's order (ops/registry.h, on a StageImage: RandomRotation, RandomAffine,
// RandomPerspective, ElasticTransform and the automatic augmentation on uint8 planes,
// ColorJitter, RandomGrayscale, GaussianBlur, then RandomInvert ... RandomEqualize on uint8
// planes; a RandomOrder runs its members at the place of the first of them, in the order drawn)
// -> write -> RandomErasing (on the output).
//
// The float image in between is kept in the output's layout, so that writing is one
// contiguous pass: planes (CHW) for NCHW, interleaved (HWC) for NHWC. The writer computes
// x * scale[c] + bias[c], folding /255 and Normalize into one multiply-add per element.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "data/transform/grey.h"
#include "data/transform/half.h"
#include "data/transform/ops/registry.h"
#include "data/transform/pad_crop.h"
#include "data/transform/pil_resample.h"
#include "data/transform/random_erasing.h"
#include "data/transform/resample.h"
#include "data/transform/simd.h"
#include "data/transform/stage_image.h"
#include "data/transform/u8_cast.h"
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
  return round_half_up_u8(v);
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

}  // namespace

// The transforms between the geometry and the write: each entry's run in run order, on the
// image as a StageImage over this transformer's buffers, ending as floats.
class SampleTransformer::Stages {
 public:
  static void run_all(SampleTransformer& t, float* data, int channels, bool planar, int width, int height,
                      const SampleParams& params, const TransformSpec& spec) {
    StageImage image(data, width, height, channels, planar, t.planes_, t.grid_, t.mix_, t.scratch_);
    ops::for_each_in_run_order(spec, params, [&](const ops::TransformOp& op, const Step* step) {
      if (op.run != nullptr) op.run(spec, params, step, image);
    });
    image.floats();
  }
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
                            const TransformSpec& spec, PilResample pil_resample) {
  const int width = spec.out_width;
  const int height = spec.out_height;
  if (width <= 0 || height <= 0) return;  // sample_bytes() is 0 too
  if (image.width() <= 0 || image.height() <= 0 || image.channels() <= 0) {
    std::memset(out, 0, spec.sample_bytes());  // nothing decoded: never leave stale bytes
    return;
  }

  // Interleaved only when it can be written as is: NHWC RGB from an RGB decode.
  const bool planar = spec.layout == Layout::kNCHW || spec.channels != 3 || image.channels() != 3;
  // PIL resizes RGBA premultiplied, unless the size is the image's own (a copy, as it is). Not
  // BoxCrop's cut, which is no PIL resize's.
  const PilResample as_pil = params.subject.width > 0 ? PilResample::kAsStored : pil_resample;
  const bool whole = params.copy && params.resized_width > 0;
  const int to_width = whole ? params.resized_width : width, to_height = whole ? params.resized_height : height;
  const bool premultiply = as_pil == PilResample::kPremultiplied && image.channels() == 4 &&
                           !(crop.width == to_width && crop.height == to_height && crop.x == std::floor(crop.x) &&
                             crop.y == std::floor(crop.y));
  if (premultiply) premultiply_alpha(image, &premultiplied_);
  // 'none' keeps the source's size (check_size saw to it): the resample would be an identity,
  // so it is the 1:1 copy too (the same values, in a fraction of the time).
  if (params.copy) {
    const Image* from = &image;
    if (params.resized_width > 0) {  // a padded window after a Resize: PIL's resized image first
      resize_whole(premultiply ? premultiplied_ : image, crop, params.resized_width, params.resized_height,
                   spec.resample);
      if (premultiply) unpremultiply_alpha(&resized_image_);
      from = &resized_image_;
    }
    copy_padded_crop(&resized_, &columns_, *from, params, spec, planar);
  } else if (as_pil == PilResample::kNearest) {
    nearest_region(&resized_, image, crop, width, height, params.flip, planar,
                   spec.geometry == Geometry::kRandomResizedCrop);
  } else {
    ResampleOptions options;
    options.flip = params.flip;
    options.clamp_to_region = spec.geometry == Geometry::kRandomResizedCrop;
    options.planar = planar;
    options.filter = spec.resample;
    if (premultiply) {  // in Pillow's arithmetic: the division by alpha magnifies any departure
      pil_resample_region(&resized_, premultiplied_, crop, width, height, spec.resample, params.flip, planar,
                          options.clamp_to_region);
      unpremultiply_planes(resized_.data(), static_cast<size_t>(width) * height);
    } else {
      resample_region(&resized_, &scratch_, image, crop, width, height, options);
    }
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
  Stages::run_all(*this, data, channels, planar, width, height, params, spec);

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
