#include "data/transform/color_jitter.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace stoker::data {
namespace {

// ITU-R 601-2 luma, the weights of PIL's convert("L").
constexpr float kLumaR = 0.299f;
constexpr float kLumaG = 0.587f;
constexpr float kLumaB = 0.114f;

float clamp255(float v) { return std::min(std::max(v, 0.0f), 255.0f); }

float luma(const float* p) { return kLumaR * p[0] + kLumaG * p[1] + kLumaB * p[2]; }

void brightness(float* v, size_t n, float factor) {
  // factor >= 0, so only the top can overflow.
  for (size_t i = 0; i < n; ++i) v[i] = std::min(v[i] * factor, 255.0f);
}

void contrast(float* v, size_t pixels, int channels, float factor) {
  double sum = 0.0;
  if (channels == 3) {
    for (size_t p = 0; p < pixels; ++p) sum += luma(v + 3 * p);
  } else {
    for (size_t p = 0; p < pixels; ++p) sum += v[p * channels];
  }
  // PIL: int(ImageStat.Stat(image.convert("L")).mean[0] + 0.5).
  const auto mean = static_cast<float>(std::floor(sum / static_cast<double>(pixels) + 0.5));
  const float bias = (1.0f - factor) * mean;
  const size_t n = pixels * channels;
  for (size_t i = 0; i < n; ++i) v[i] = clamp255(factor * v[i] + bias);
}

void saturation(float* v, size_t pixels, float factor) {
  for (size_t p = 0; p < pixels; ++p) {
    float* px = v + 3 * p;
    const float gray = (1.0f - factor) * luma(px);
    px[0] = clamp255(factor * px[0] + gray);
    px[1] = clamp255(factor * px[1] + gray);
    px[2] = clamp255(factor * px[2] + gray);
  }
}

// One HSV -> RGB channel: V - C * clamp(min(k, 4 - k), 0, 1), k = (n + 6H) mod 6, where
// n = 5, 3, 1 gives R, G, B and C = max - min is the chroma.
float hsv_channel(float n, float h6, float value, float chroma) {
  float k = n + h6;
  k = k >= 6.0f ? k - 6.0f : k;
  return value - chroma * std::clamp(std::min(k, 4.0f - k), 0.0f, 1.0f);
}

void hue(float* v, size_t pixels, float shift) {
  const float shift6 = 6.0f * shift;  // |shift| <= 0.5
  for (size_t p = 0; p < pixels; ++p) {
    float* px = v + 3 * p;
    const float r = px[0];
    const float g = px[1];
    const float b = px[2];
    const float max = std::max(r, std::max(g, b));
    const float min = std::min(r, std::min(g, b));
    const float chroma = max - min;
    if (chroma <= 0.0f) continue;  // grey: hue undefined, rotation changes nothing
    float h6;                      // hue in sixths of a turn
    if (max == r) {
      h6 = (g - b) / chroma;
    } else if (max == g) {
      h6 = (b - r) / chroma + 2.0f;
    } else {
      h6 = (r - g) / chroma + 4.0f;
    }
    // h6 is in [-1, 5] and the shift at most +-3, so one wrap either way lands in [0, 6).
    h6 += shift6;
    h6 = h6 < 0.0f ? h6 + 6.0f : h6;
    h6 = h6 >= 6.0f ? h6 - 6.0f : h6;
    px[0] = clamp255(hsv_channel(5.0f, h6, max, chroma));
    px[1] = clamp255(hsv_channel(3.0f, h6, max, chroma));
    px[2] = clamp255(hsv_channel(1.0f, h6, max, chroma));
  }
}

}  // namespace

void apply_color_jitter(float* hwc, int width, int height, int channels,
                        const SampleParams& params) {
  const size_t pixels = static_cast<size_t>(width) * height;
  if (pixels == 0) return;
  const size_t n = pixels * channels;
  const bool color = channels == 3;
  for (const int op : params.jitter_order) {
    switch (op) {
      case 0:
        if (params.brightness != 1.0) brightness(hwc, n, static_cast<float>(params.brightness));
        break;
      case 1:
        if (params.contrast != 1.0) {
          contrast(hwc, pixels, channels, static_cast<float>(params.contrast));
        }
        break;
      case 2:
        if (color && params.saturation != 1.0) {
          saturation(hwc, pixels, static_cast<float>(params.saturation));
        }
        break;
      case 3:
        if (color && params.hue != 0.0) hue(hwc, pixels, static_cast<float>(params.hue));
        break;
      default: break;
    }
  }
}

}  // namespace stoker::data
