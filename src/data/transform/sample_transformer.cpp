// SampleTransformer::run: resample (with the flip folded in) -> ColorJitter -> write.
//
// The writer does x * scale[c] + bias[c] per element, folding /255 and Normalize into one
// multiply-add, and is instantiated per output type, layout and channel pair so that every
// loop has compile-time strides and vectorises.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "data/transform/color_jitter.h"
#include "data/transform/half.h"
#include "data/transform/resample.h"
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
    } else if (spec.normalize) {
      // (x / 255 - mean) / std
      f.scale[c] = 1.0f / (255.0f * spec.std[k]);
      f.bias[c] = -spec.mean[k] / spec.std[k];
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
  // Round half up; v >= 0 after the clamp, so truncating v + 0.5 does it.
  return static_cast<uint8_t>(static_cast<int>(std::min(std::max(v, 0.0f), 255.0f) + 0.5f));
}

// SrcC == 1 with OutC == 3 replicates grey into every channel.
template <typename T, int SrcC, int OutC>
void write_planar(T* out, const float* src, size_t pixels, const Affine& f) {
  for (int c = 0; c < OutC; ++c) {
    const int sc = SrcC == 1 ? 0 : c;
    const float a = f.scale[c];
    const float b = f.bias[c];
    T* plane = out + static_cast<size_t>(c) * pixels;
    for (size_t p = 0; p < pixels; ++p) plane[p] = convert<T>(a * src[p * SrcC + sc] + b);
  }
}

template <typename T, int SrcC, int OutC>
void write_interleaved(T* out, const float* src, size_t pixels, const Affine& f) {
  float a[OutC];
  float b[OutC];
  for (int c = 0; c < OutC; ++c) {
    a[c] = f.scale[c];
    b[c] = f.bias[c];
  }
  for (size_t p = 0; p < pixels; ++p) {
    for (int c = 0; c < OutC; ++c) {
      out[p * OutC + c] = convert<T>(a[c] * src[p * SrcC + (SrcC == 1 ? 0 : c)] + b[c]);
    }
  }
}

template <typename T, int SrcC, int OutC>
void write_as(void* out, const float* src, size_t pixels, Layout layout, const Affine& f) {
  T* dst = static_cast<T*>(out);
  if (layout == Layout::kNCHW) {
    write_planar<T, SrcC, OutC>(dst, src, pixels, f);
  } else {
    write_interleaved<T, SrcC, OutC>(dst, src, pixels, f);
  }
}

template <int SrcC, int OutC>
void write_channels(void* out, const float* src, size_t pixels, const TransformSpec& spec) {
  const Affine f = output_affine(spec);
  switch (spec.dtype) {
    case DType::kFloat32: write_as<float, SrcC, OutC>(out, src, pixels, spec.layout, f); break;
    case DType::kFloat16: write_as<uint16_t, SrcC, OutC>(out, src, pixels, spec.layout, f); break;
    case DType::kUint8: write_as<uint8_t, SrcC, OutC>(out, src, pixels, spec.layout, f); break;
  }
}

// Keeps the first `keep` of `channels` interleaved channels, in place.
void keep_channels(float* v, size_t pixels, int channels, int keep) {
  for (size_t p = 0; p < pixels; ++p) {
    for (int c = 0; c < keep; ++c) v[p * keep + c] = v[p * channels + c];
  }
}

// RGB -> L in place (PIL's convert("L") weights), for an RGB decode with a grey spec.
void to_gray(float* v, size_t pixels) {
  for (size_t p = 0; p < pixels; ++p) {
    v[p] = 0.299f * v[3 * p] + 0.587f * v[3 * p + 1] + 0.114f * v[3 * p + 2];
  }
}

}  // namespace

void SampleTransformer::run(void* out, const DecodedImage& decoded, const SampleParams& params,
                            const TransformSpec& spec) {
  const int width = spec.out_width;
  const int height = spec.out_height;
  if (width <= 0 || height <= 0) return;  // sample_bytes() is 0 too
  const Image& image = decoded.image;
  if (image.width() <= 0 || image.height() <= 0 || image.channels() <= 0) {
    std::memset(out, 0, spec.sample_bytes());  // nothing decoded: never leave stale bytes
    return;
  }

  ResampleOptions options;
  options.flip = params.flip;
  options.clamp_to_region = spec.geometry == Geometry::kRandomResizedCrop;
  resample_region(&resized_, &scratch_, image, decoded.crop, width, height, options);

  // The decoder produces the spec's channels; anything else is adapted here rather than
  // trusted: extra channels (alpha) dropped, RGB turned grey, grey replicated when writing.
  const size_t pixels = static_cast<size_t>(width) * height;
  int channels = image.channels();
  if (channels == 2 || channels > 3) {
    const int keep = channels > 3 ? 3 : 1;
    keep_channels(resized_.data(), pixels, channels, keep);
    channels = keep;
  }
  if (channels == 3 && spec.channels == 1) {
    to_gray(resized_.data(), pixels);
    channels = 1;
  }

  if (spec.jitter.enabled()) apply_color_jitter(resized_.data(), width, height, channels, params);

  if (spec.channels == 1) {
    write_channels<1, 1>(out, resized_.data(), pixels, spec);
  } else if (channels == 1) {
    write_channels<1, 3>(out, resized_.data(), pixels, spec);
  } else {
    write_channels<3, 3>(out, resized_.data(), pixels, spec);
  }
}

}  // namespace stoker::data
