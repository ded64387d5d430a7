#include "data/transform/color_jitter.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "data/transform/simd.h"

namespace stoker::data {
namespace {

using simd::f32x4;

// ITU-R 601-2 luma, the weights of PIL's convert("L").
constexpr float kLumaR = 0.299f;
constexpr float kLumaG = 0.587f;
constexpr float kLumaB = 0.114f;

float clamp255(float v) { return std::min(std::max(v, 0.0f), 255.0f); }

void brightness(float* __restrict v, size_t n, float factor) {
  // factor >= 0, so only the top can overflow.
  simd::for_each_blocked(n, [&](size_t i) { v[i] = std::min(v[i] * factor, 255.0f); });
}

// x * scale + bias, clamped.
void affine_clamped(float* __restrict v, size_t n, float scale, float bias) {
  simd::for_each_blocked(n, [&](size_t i) { v[i] = clamp255(scale * v[i] + bias); });
}

// Sum of w[i % period] * v[i], in float vectors over chunks and in double overall (float
// partial sums of at most kChunk values stay accurate to well under one grey level).
// `period` floats of weights must be a multiple of 4 and divide the chunk.
double weighted_sum(const float* v, size_t n, const float* w, size_t period) {
  constexpr size_t kChunk = 1536;  // multiple of 4 and of 12
  double total = 0.0;
  size_t i = 0;
  while (i < n) {
    const size_t end = std::min(n, i + kChunk);
    f32x4 acc = simd::splat4(0.0f);
    for (; i + period <= end; i += period) {
      for (size_t k = 0; k < period; k += 4) acc += simd::load4(w + k) * simd::load4(v + i + k);
    }
    float tail = 0.0f;
    for (; i < end; ++i) tail += w[i % period] * v[i];
    total += static_cast<double>(acc[0]) + acc[1] + acc[2] + acc[3] + tail;
  }
  return total;
}

// Mean of L over the image.
double mean_grey(const float* data, size_t pixels, int channels, bool planar) {
  double sum = 0.0;
  if (channels != 3) {
    static constexpr float kOnes[4] = {1, 1, 1, 1};
    sum = weighted_sum(data, pixels, kOnes, 4);
  } else if (planar) {
    static constexpr float kR[4] = {kLumaR, kLumaR, kLumaR, kLumaR};
    static constexpr float kG[4] = {kLumaG, kLumaG, kLumaG, kLumaG};
    static constexpr float kB[4] = {kLumaB, kLumaB, kLumaB, kLumaB};
    sum = weighted_sum(data, pixels, kR, 4) + weighted_sum(data + pixels, pixels, kG, 4) +
          weighted_sum(data + 2 * pixels, pixels, kB, 4);
  } else {
    static constexpr float kRGB[12] = {kLumaR, kLumaG, kLumaB, kLumaR, kLumaG, kLumaB,
                                       kLumaR, kLumaG, kLumaB, kLumaR, kLumaG, kLumaB};
    sum = weighted_sum(data, 3 * pixels, kRGB, 12);
  }
  return sum / static_cast<double>(pixels);
}

void contrast(float* data, size_t pixels, int channels, bool planar, float factor) {
  // PIL: int(ImageStat.Stat(image.convert("L")).mean[0] + 0.5).
  const auto mean = static_cast<float>(std::floor(mean_grey(data, pixels, channels, planar) + 0.5));
  affine_clamped(data, pixels * channels, factor, (1.0f - factor) * mean);
}

// Runs kernel(&r, &g, &b) on every 4 pixels of an RGB image; the last 1-3 pixels go through
// a zero-padded copy.
template <bool kPlanar, typename Kernel>
void for_each_rgb4(float* data, size_t pixels, Kernel&& kernel) {
  const auto load = [&](const float* base, size_t stride, size_t p, f32x4* r, f32x4* g, f32x4* b) {
    if (kPlanar) {
      *r = simd::load4(base + p);
      *g = simd::load4(base + stride + p);
      *b = simd::load4(base + 2 * stride + p);
    } else {
      const float* q = base + 3 * p;
      simd::deinterleave3(simd::load4(q), simd::load4(q + 4), simd::load4(q + 8), r, g, b);
    }
  };
  const auto store = [&](float* base, size_t stride, size_t p, f32x4 r, f32x4 g, f32x4 b) {
    if (kPlanar) {
      simd::store4(base + p, r);
      simd::store4(base + stride + p, g);
      simd::store4(base + 2 * stride + p, b);
    } else {
      f32x4 v0, v1, v2;
      simd::interleave3(r, g, b, &v0, &v1, &v2);
      float* q = base + 3 * p;
      simd::store4(q, v0);
      simd::store4(q + 4, v1);
      simd::store4(q + 8, v2);
    }
  };

  size_t p = 0;
  f32x4 r, g, b;
  for (; p + 4 <= pixels; p += 4) {
    load(data, pixels, p, &r, &g, &b);
    kernel(&r, &g, &b);
    store(data, pixels, p, r, g, b);
  }
  if (p == pixels) return;
  const size_t rest = pixels - p;
  float tail[12] = {};  // the last pixels in the image's layout, with room for 4
  const auto image_at = [&](size_t k, size_t c) -> float& {
    return kPlanar ? data[c * pixels + p + k] : data[3 * (p + k) + c];
  };
  const auto tail_at = [&](size_t k, size_t c) -> float& { return kPlanar ? tail[c * 4 + k] : tail[3 * k + c]; };
  for (size_t k = 0; k < rest; ++k) {
    for (size_t c = 0; c < 3; ++c) tail_at(k, c) = image_at(k, c);
  }
  load(tail, 4, 0, &r, &g, &b);
  kernel(&r, &g, &b);
  store(tail, 4, 0, r, g, b);
  for (size_t k = 0; k < rest; ++k) {
    for (size_t c = 0; c < 3; ++c) image_at(k, c) = tail_at(k, c);
  }
}

template <typename Kernel>
void for_each_rgb4(float* data, size_t pixels, bool planar, Kernel&& kernel) {
  if (planar) {
    for_each_rgb4<true>(data, pixels, kernel);
  } else {
    for_each_rgb4<false>(data, pixels, kernel);
  }
}

// Per-4-pixel kernels for for_each_rgb4; always inlined so that r, g, b stay in registers.

// Blend with the pixel's grey level: L + f * (x - L).
struct Saturation {
  float factor;

  [[gnu::always_inline]] void operator()(f32x4* r, f32x4* g, f32x4* b) const {
    const f32x4 grey = (1.0f - factor) * (kLumaR * *r + kLumaG * *g + kLumaB * *b);
    *r = simd::clamp4(factor * *r + grey, 0.0f, 255.0f);
    *g = simd::clamp4(factor * *g + grey, 0.0f, 255.0f);
    *b = simd::clamp4(factor * *b + grey, 0.0f, 255.0f);
  }
};

// RGB -> HSV, H += shift (mod 1), -> RGB. V = max and C = max - min are unchanged by a hue
// rotation; channel n (5 = R, 3 = G, 1 = B) comes back as V - C * clamp(min(k, 4 - k), 0, 1)
// with k = (n + 6H) mod 6.
struct Hue {
  float shift6;  // the shift in sixths of a turn, |shift6| <= 3

  [[gnu::always_inline]] void operator()(f32x4* r, f32x4* g, f32x4* b) const {
    const f32x4 max = simd::max4(*r, simd::max4(*g, *b));
    const f32x4 min = simd::min4(*r, simd::min4(*g, *b));
    const f32x4 chroma = max - min;
    // Grey pixels (chroma 0) get some hue; it is multiplied by chroma 0 below.
    const f32x4 inv = 1.0f / simd::max4(chroma, simd::splat4(1e-30f));
    f32x4 h6 = *r >= max ? (*g - *b) * inv : (*g >= max ? (*b - *r) * inv + 2.0f : (*r - *g) * inv + 4.0f);
    // h6 is in [-1, 5] and the shift at most +-3, so one wrap either way lands in [0, 6).
    h6 += shift6;
    h6 = h6 < 0.0f ? h6 + 6.0f : h6;
    h6 = h6 >= 6.0f ? h6 - 6.0f : h6;
    *r = channel(5.0f, h6, max, chroma);
    *g = channel(3.0f, h6, max, chroma);
    *b = channel(1.0f, h6, max, chroma);
  }

  [[gnu::always_inline]] static f32x4 channel(float n, f32x4 h6, f32x4 max, f32x4 chroma) {
    f32x4 k = n + h6;
    k = k >= 6.0f ? k - 6.0f : k;
    const f32x4 ramp = simd::clamp4(simd::min4(k, 4.0f - k), 0.0f, 1.0f);
    return simd::clamp4(max - chroma * ramp, 0.0f, 255.0f);
  }
};

}  // namespace

void apply_color_jitter(float* data, size_t pixels, int channels, bool planar, const SampleParams& params) {
  if (pixels == 0) return;
  const bool color = channels == 3;
  for (const int op : params.jitter_order) {
    switch (op) {
      case 0:
        if (params.brightness != 1.0) {
          brightness(data, pixels * channels, static_cast<float>(params.brightness));
        }
        break;
      case 1:
        if (params.contrast != 1.0) {
          contrast(data, pixels, channels, planar, static_cast<float>(params.contrast));
        }
        break;
      case 2:
        if (color && params.saturation != 1.0) {
          for_each_rgb4(data, pixels, planar, Saturation{static_cast<float>(params.saturation)});
        }
        break;
      case 3:
        if (color && params.hue != 0.0) {
          for_each_rgb4(data, pixels, planar, Hue{6.0f * static_cast<float>(params.hue)});
        }
        break;
      default:
        break;
    }
  }
}

}  // namespace stoker::data
