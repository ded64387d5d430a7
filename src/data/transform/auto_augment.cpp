// The automatic augmentations' operations and draws, after torchvision 0.14's autoaugment.py
// and functional_tensor.py (see auto_augment.h for what "after" means, number by number).
#include "data/transform/auto_augment.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <utility>

namespace stoker::data {
namespace {

constexpr float kBound = 255.0f;

// ---------------------------------------------------------------------------------------
// The augmentation spaces and AutoAugment's policies.

// torch.linspace(start, end, steps)[i] in float32, rounded once from the exact value. torch's
// own kernel (vectorised, with or without FMA by CPU) can land one ulp away; that never moves a
// translation's whole pixels (int(magnitude)) for image sides up to 600 (checked against
// torch 1.13), and Posterize's and Solarize's values are exact either way.
float linspace(float start, float end, int steps, int i) {
  if (steps == 1) return start;
  const double s = start;
  return static_cast<float>(s + (static_cast<double>(end) - s) * i / (steps - 1));
}

bool signed_op(AugmentOp op) {
  switch (op) {
    case AugmentOp::kShearX:
    case AugmentOp::kShearY:
    case AugmentOp::kTranslateX:
    case AugmentOp::kTranslateY:
    case AugmentOp::kRotate:
    case AugmentOp::kBrightness:
    case AugmentOp::kColor:
    case AugmentOp::kContrast:
    case AugmentOp::kSharpness:
      return true;
    default:
      return false;
  }
}

bool has_magnitudes(AugmentOp op) {
  return signed_op(op) || op == AugmentOp::kPosterize || op == AugmentOp::kSolarize;
}

struct PolicyStep {
  AugmentOp op;
  float p;
  int bin;  // magnitude bin of 10; -1 for operations without one
};
using SubPolicy = std::array<PolicyStep, 2>;

constexpr AugmentOp kPosterize = AugmentOp::kPosterize, kRotate = AugmentOp::kRotate,
                    kSolarize = AugmentOp::kSolarize, kAutoContrast = AugmentOp::kAutoContrast,
                    kEqualize = AugmentOp::kEqualize, kColor = AugmentOp::kColor,
                    kInvert = AugmentOp::kInvert, kContrast = AugmentOp::kContrast,
                    kSharpness = AugmentOp::kSharpness, kShearX = AugmentOp::kShearX,
                    kShearY = AugmentOp::kShearY, kTranslateX = AugmentOp::kTranslateX,
                    kTranslateY = AugmentOp::kTranslateY, kBrightness = AugmentOp::kBrightness;

// AutoAugment._get_policies, verbatim.
constexpr std::array<SubPolicy, 25> kImageNetPolicy{{
    {{{kPosterize, 0.4f, 8}, {kRotate, 0.6f, 9}}},
    {{{kSolarize, 0.6f, 5}, {kAutoContrast, 0.6f, -1}}},
    {{{kEqualize, 0.8f, -1}, {kEqualize, 0.6f, -1}}},
    {{{kPosterize, 0.6f, 7}, {kPosterize, 0.6f, 6}}},
    {{{kEqualize, 0.4f, -1}, {kSolarize, 0.2f, 4}}},
    {{{kEqualize, 0.4f, -1}, {kRotate, 0.8f, 8}}},
    {{{kSolarize, 0.6f, 3}, {kEqualize, 0.6f, -1}}},
    {{{kPosterize, 0.8f, 5}, {kEqualize, 1.0f, -1}}},
    {{{kRotate, 0.2f, 3}, {kSolarize, 0.6f, 8}}},
    {{{kEqualize, 0.6f, -1}, {kPosterize, 0.4f, 6}}},
    {{{kRotate, 0.8f, 8}, {kColor, 0.4f, 0}}},
    {{{kRotate, 0.4f, 9}, {kEqualize, 0.6f, -1}}},
    {{{kEqualize, 0.0f, -1}, {kEqualize, 0.8f, -1}}},
    {{{kInvert, 0.6f, -1}, {kEqualize, 1.0f, -1}}},
    {{{kColor, 0.6f, 4}, {kContrast, 1.0f, 8}}},
    {{{kRotate, 0.8f, 8}, {kColor, 1.0f, 2}}},
    {{{kColor, 0.8f, 8}, {kSolarize, 0.8f, 7}}},
    {{{kSharpness, 0.4f, 7}, {kInvert, 0.6f, -1}}},
    {{{kShearX, 0.6f, 5}, {kEqualize, 1.0f, -1}}},
    {{{kColor, 0.4f, 0}, {kEqualize, 0.6f, -1}}},
    {{{kEqualize, 0.4f, -1}, {kSolarize, 0.2f, 4}}},
    {{{kSolarize, 0.6f, 5}, {kAutoContrast, 0.6f, -1}}},
    {{{kInvert, 0.6f, -1}, {kEqualize, 1.0f, -1}}},
    {{{kColor, 0.6f, 4}, {kContrast, 1.0f, 8}}},
    {{{kEqualize, 0.8f, -1}, {kEqualize, 0.6f, -1}}},
}};

constexpr std::array<SubPolicy, 25> kCifar10Policy{{
    {{{kInvert, 0.1f, -1}, {kContrast, 0.2f, 6}}},
    {{{kRotate, 0.7f, 2}, {kTranslateX, 0.3f, 9}}},
    {{{kSharpness, 0.8f, 1}, {kSharpness, 0.9f, 3}}},
    {{{kShearY, 0.5f, 8}, {kTranslateY, 0.7f, 9}}},
    {{{kAutoContrast, 0.5f, -1}, {kEqualize, 0.9f, -1}}},
    {{{kShearY, 0.2f, 7}, {kPosterize, 0.3f, 7}}},
    {{{kColor, 0.4f, 3}, {kBrightness, 0.6f, 7}}},
    {{{kSharpness, 0.3f, 9}, {kBrightness, 0.7f, 9}}},
    {{{kEqualize, 0.6f, -1}, {kEqualize, 0.5f, -1}}},
    {{{kContrast, 0.6f, 7}, {kSharpness, 0.6f, 5}}},
    {{{kColor, 0.7f, 7}, {kTranslateX, 0.5f, 8}}},
    {{{kEqualize, 0.3f, -1}, {kAutoContrast, 0.4f, -1}}},
    {{{kTranslateY, 0.4f, 3}, {kSharpness, 0.2f, 6}}},
    {{{kBrightness, 0.9f, 6}, {kColor, 0.2f, 8}}},
    {{{kSolarize, 0.5f, 2}, {kInvert, 0.0f, -1}}},
    {{{kEqualize, 0.2f, -1}, {kAutoContrast, 0.6f, -1}}},
    {{{kEqualize, 0.2f, -1}, {kEqualize, 0.6f, -1}}},
    {{{kColor, 0.9f, 9}, {kEqualize, 0.6f, -1}}},
    {{{kAutoContrast, 0.8f, -1}, {kSolarize, 0.2f, 8}}},
    {{{kBrightness, 0.1f, 3}, {kColor, 0.7f, 0}}},
    {{{kSolarize, 0.4f, 5}, {kAutoContrast, 0.9f, -1}}},
    {{{kTranslateY, 0.9f, 9}, {kTranslateY, 0.7f, 9}}},
    {{{kAutoContrast, 0.9f, -1}, {kSolarize, 0.8f, 3}}},
    {{{kEqualize, 0.8f, -1}, {kInvert, 0.1f, -1}}},
    {{{kTranslateY, 0.7f, 9}, {kAutoContrast, 0.9f, -1}}},
}};

constexpr std::array<SubPolicy, 25> kSvhnPolicy{{
    {{{kShearX, 0.9f, 4}, {kInvert, 0.2f, -1}}},
    {{{kShearY, 0.9f, 8}, {kInvert, 0.7f, -1}}},
    {{{kEqualize, 0.6f, -1}, {kSolarize, 0.6f, 6}}},
    {{{kInvert, 0.9f, -1}, {kEqualize, 0.6f, -1}}},
    {{{kEqualize, 0.6f, -1}, {kRotate, 0.9f, 3}}},
    {{{kShearX, 0.9f, 4}, {kAutoContrast, 0.8f, -1}}},
    {{{kShearY, 0.9f, 8}, {kInvert, 0.4f, -1}}},
    {{{kShearY, 0.9f, 5}, {kSolarize, 0.2f, 6}}},
    {{{kInvert, 0.9f, -1}, {kAutoContrast, 0.8f, -1}}},
    {{{kEqualize, 0.6f, -1}, {kRotate, 0.9f, 3}}},
    {{{kShearX, 0.9f, 4}, {kSolarize, 0.3f, 3}}},
    {{{kShearY, 0.8f, 8}, {kInvert, 0.7f, -1}}},
    {{{kEqualize, 0.9f, -1}, {kTranslateY, 0.6f, 6}}},
    {{{kInvert, 0.9f, -1}, {kEqualize, 0.6f, -1}}},
    {{{kContrast, 0.3f, 3}, {kRotate, 0.8f, 4}}},
    {{{kInvert, 0.8f, -1}, {kTranslateY, 0.0f, 2}}},
    {{{kShearY, 0.7f, 6}, {kSolarize, 0.4f, 8}}},
    {{{kInvert, 0.6f, -1}, {kRotate, 0.8f, 4}}},
    {{{kShearY, 0.3f, 7}, {kTranslateX, 0.9f, 3}}},
    {{{kShearX, 0.1f, 6}, {kInvert, 0.6f, -1}}},
    {{{kSolarize, 0.7f, 2}, {kTranslateY, 0.6f, 7}}},
    {{{kShearY, 0.8f, 4}, {kInvert, 0.8f, -1}}},
    {{{kShearX, 0.7f, 9}, {kTranslateY, 0.8f, 3}}},
    {{{kShearY, 0.8f, 5}, {kAutoContrast, 0.7f, -1}}},
    {{{kShearX, 0.7f, 2}, {kInvert, 0.1f, -1}}},
}};

const std::array<SubPolicy, 25>& policy_table(AutoAugmentPolicy policy) {
  switch (policy) {
    case AutoAugmentPolicy::kCifar10:
      return kCifar10Policy;
    case AutoAugmentPolicy::kSvhn:
      return kSvhnPolicy;
    case AutoAugmentPolicy::kImageNet:
      break;
  }
  return kImageNetPolicy;
}

void push(SampleParams* params, AugmentOp op, float magnitude) {
  if (params->augment_steps >= AutoAugmentSpec::kMaxOps) return;
  params->augment[static_cast<size_t>(params->augment_steps++)] = {static_cast<uint8_t>(op),
                                                                   magnitude};
}

// ---------------------------------------------------------------------------------------
// Colour operations (functional_tensor.py).

// _blend(img1, img2, ratio) per element: float32 products summed, clamped, truncated.
uint8_t blend(float ratio, float one_minus_ratio, float a, float b) {
  const float v = ratio * a + one_minus_ratio * b;
  return static_cast<uint8_t>(std::clamp(v, 0.0f, kBound));
}

// rgb_to_grayscale: (0.2989 r + 0.587 g + 0.114 b).to(uint8).
void grayscale(const uint8_t* r, const uint8_t* g, const uint8_t* b, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = 0.2989f * r[i] + 0.587f * g[i] + 0.114f * b[i];
    out[i] = static_cast<uint8_t>(v);
  }
}

void blend_with(uint8_t* image, const uint8_t* other, size_t plane, int channels,
                bool other_is_one_plane, double factor) {
  const auto r = static_cast<float>(factor);
  const auto s = static_cast<float>(1.0 - factor);
  for (int c = 0; c < channels; ++c) {
    uint8_t* p = image + c * plane;
    const uint8_t* q = other + (other_is_one_plane ? 0 : c * plane);
    for (size_t i = 0; i < plane; ++i) p[i] = blend(r, s, p[i], q[i]);
  }
}

void brightness(uint8_t* image, size_t n, double factor) {
  const auto r = static_cast<float>(factor);
  const auto s = static_cast<float>(1.0 - factor);
  for (size_t i = 0; i < n; ++i) image[i] = blend(r, s, image[i], 0.0f);
}

void saturation(uint8_t* image, std::vector<uint8_t>* scratch, size_t plane, int channels,
                double factor) {
  if (channels != 3) return;  // torchvision: a one-channel image is returned as is
  scratch->resize(plane);
  grayscale(image, image + plane, image + 2 * plane, scratch->data(), plane);
  blend_with(image, scratch->data(), plane, channels, true, factor);
}

void contrast(uint8_t* image, std::vector<uint8_t>* scratch, size_t plane, int channels,
              double factor) {
  const uint8_t* grey = image;
  if (channels == 3) {
    scratch->resize(plane);
    grayscale(image, image + plane, image + 2 * plane, scratch->data(), plane);
    grey = scratch->data();
  }
  double sum = 0;
  for (size_t i = 0; i < plane; ++i) sum += grey[i];
  const auto mean = static_cast<float>(sum / static_cast<double>(plane));
  const auto r = static_cast<float>(factor);
  const auto s = static_cast<float>(1.0 - factor);
  for (size_t i = 0; i < plane * static_cast<size_t>(channels); ++i)
    image[i] = blend(r, s, image[i], mean);
}

// _blurred_degenerate_image: the 3x3 kernel [1 1 1; 1 5 1; 1 1 1] / 13 on the interior,
// rounded; the border keeps the image. Then blended.
void sharpness(uint8_t* image, std::vector<uint8_t>* scratch, int width, int height, int channels,
               double factor) {
  if (width <= 2 || height <= 2) return;
  const size_t plane = static_cast<size_t>(width) * height;
  scratch->assign(image, image + plane * channels);
  const float edge = 1.0f / 13.0f;
  const float centre = 5.0f / 13.0f;
  for (int c = 0; c < channels; ++c) {
    const uint8_t* in = image + c * plane;
    uint8_t* out = scratch->data() + c * plane;
    for (int y = 1; y < height - 1; ++y) {
      for (int x = 1; x < width - 1; ++x) {
        const uint8_t* p = in + static_cast<size_t>(y) * width + x;
        const int ring = p[-width - 1] + p[-width] + p[-width + 1] + p[-1] + p[1] + p[width - 1] +
                         p[width] + p[width + 1];
        const float v = edge * static_cast<float>(ring) + centre * p[0];
        out[static_cast<size_t>(y) * width + x] =
            static_cast<uint8_t>(std::nearbyint(std::clamp(v, 0.0f, kBound)));
      }
    }
  }
  blend_with(image, scratch->data(), plane, channels, false, factor);
}

void posterize(uint8_t* image, size_t n, int bits) {
  const auto mask = static_cast<uint8_t>(-(1 << (8 - std::clamp(bits, 0, 8))));
  for (size_t i = 0; i < n; ++i) image[i] &= mask;
}

void solarize(uint8_t* image, size_t n, float threshold) {
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<float>(image[i]) >= threshold) image[i] = static_cast<uint8_t>(255 - image[i]);
  }
}

void invert(uint8_t* image, size_t n) {
  for (size_t i = 0; i < n; ++i) image[i] = static_cast<uint8_t>(255 - image[i]);
}

void autocontrast(uint8_t* image, size_t plane, int channels) {
  for (int c = 0; c < channels; ++c) {
    uint8_t* p = image + c * plane;
    const auto [lo, hi] = std::minmax_element(p, p + plane);
    if (*lo == *hi) continue;  // scale not finite: minimum 0, scale 1, the plane unchanged
    const auto minimum = static_cast<float>(*lo);
    const float scale = kBound / (static_cast<float>(*hi) - minimum);
    for (size_t i = 0; i < plane; ++i) {
      p[i] = static_cast<uint8_t>(
          std::clamp((static_cast<float>(p[i]) - minimum) * scale, 0.0f, kBound));
    }
  }
}

// _scale_channel, per plane, in integers.
void equalize(uint8_t* image, size_t plane, int channels) {
  for (int c = 0; c < channels; ++c) {
    uint8_t* p = image + c * plane;
    std::array<int64_t, 256> hist{};
    for (size_t i = 0; i < plane; ++i) ++hist[p[i]];
    int last_nonzero = 255;
    while (last_nonzero > 0 && hist[static_cast<size_t>(last_nonzero)] == 0) --last_nonzero;
    int64_t all_but_last = 0;
    for (int v = 0; v < last_nonzero; ++v) all_but_last += hist[static_cast<size_t>(v)];
    const int64_t step = all_but_last / 255;
    if (step == 0) continue;
    std::array<uint8_t, 256> lut{};
    int64_t cumulative = 0;
    for (size_t v = 0; v < 256; ++v) {
      // lut[v] = (cumsum[v - 1] + step // 2) // step, lut[0] = 0
      lut[v] = static_cast<uint8_t>(
          std::clamp<int64_t>(v == 0 ? 0 : (cumulative + step / 2) / step, 0, 255));
      cumulative += hist[v];
    }
    for (size_t i = 0; i < plane; ++i) p[i] = lut[p[i]];
  }
}

// ---------------------------------------------------------------------------------------
// Geometric operations: torchvision's affine()/rotate() on tensors.

double radians(double degrees) { return degrees * std::numbers::pi / 180.0; }

// _get_inverse_affine_matrix(center, angle, translate, scale=1, shear), inverted.
std::array<double, 6> inverse_affine(double cx, double cy, double angle, double tx, double ty,
                                     double shear_x, double shear_y) {
  const double rot = radians(angle);
  const double sx = radians(shear_x);
  const double sy = radians(shear_y);
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m{d, -b, 0.0, -c, a, 0.0};
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
  return m;
}

// _gen_affine_grid + grid_sample(align_corners=False, padding zeros) + _apply_grid_transform's
// fill, then the round to uint8. `in` and `out` are distinct.
void warp(const std::array<double, 6>& matrix, const AutoAugmentSpec& spec, const uint8_t* in,
          uint8_t* out, int width, int height, int channels) {
  const float half_w = 0.5f * static_cast<float>(width);
  const float half_h = 0.5f * static_cast<float>(height);
  std::array<float, 6> theta{};
  for (size_t i = 0; i < 6; ++i) theta[i] = static_cast<float>(matrix[i]);
  const float r00 = theta[0] / half_w, r10 = theta[1] / half_w, r20 = theta[2] / half_w;
  const float r01 = theta[3] / half_h, r11 = theta[4] / half_h, r21 = theta[5] / half_h;
  const size_t plane = static_cast<size_t>(width) * height;
  const auto w = static_cast<float>(width);
  const auto h = static_cast<float>(height);
  const bool bilinear = spec.interpolation == Interpolation::kBilinear;

  for (int j = 0; j < height; ++j) {
    const float y = -half_h + 0.5f + static_cast<float>(j);
    for (int k = 0; k < width; ++k) {
      const float x = -half_w + 0.5f + static_cast<float>(k);
      const float gx = x * r00 + y * r10 + r20;
      const float gy = x * r01 + y * r11 + r21;
      const float ix = ((gx + 1.0f) * w - 1.0f) / 2.0f;
      const float iy = ((gy + 1.0f) * h - 1.0f) / 2.0f;
      const size_t at = static_cast<size_t>(j) * width + k;
      const auto inside = [&](int xx, int yy) {
        return xx >= 0 && xx < width && yy >= 0 && yy < height;
      };
      if (!bilinear) {
        const int xn = static_cast<int>(std::nearbyint(ix));
        const int yn = static_cast<int>(std::nearbyint(iy));
        const bool in_bounds = inside(xn, yn);
        for (int c = 0; c < channels; ++c) {
          float v = in_bounds ? in[c * plane + static_cast<size_t>(yn) * width + xn] : 0.0f;
          if (spec.has_fill && !in_bounds) v = spec.fill[static_cast<size_t>(c)];
          out[c * plane + at] = static_cast<uint8_t>(std::nearbyint(std::clamp(v, 0.0f, kBound)));
        }
        continue;
      }
      // grid_sample's bilinear weights, formed as its CPU kernel forms them.
      const auto x0 = static_cast<int>(std::floor(ix));
      const auto y0 = static_cast<int>(std::floor(iy));
      const float we = ix - static_cast<float>(x0);
      const float ea = 1.0f - we;
      const float no = iy - static_cast<float>(y0);
      const float so = 1.0f - no;
      const std::array<float, 4> weight{so * ea, so * we, no * ea, no * we};  // nw, ne, sw, se
      const std::array<std::pair<int, int>, 4> taps{
          {{x0, y0}, {x0 + 1, y0}, {x0, y0 + 1}, {x0 + 1, y0 + 1}}};
      float mask = 0;
      for (size_t t = 0; t < 4; ++t) {
        if (inside(taps[t].first, taps[t].second)) mask += weight[t];
      }
      for (int c = 0; c < channels; ++c) {
        float v = 0;
        for (size_t t = 0; t < 4; ++t) {
          if (!inside(taps[t].first, taps[t].second)) continue;
          v += weight[t] *
               in[c * plane + static_cast<size_t>(taps[t].second) * width + taps[t].first];
        }
        if (spec.has_fill) v = v * mask + (1.0f - mask) * spec.fill[static_cast<size_t>(c)];
        out[c * plane + at] = static_cast<uint8_t>(std::nearbyint(std::clamp(v, 0.0f, kBound)));
      }
    }
  }
}

}  // namespace

const char* augment_op_name(AugmentOp op) {
  static constexpr std::array<const char*, 15> kNames{
      "Identity",  "ShearX",     "ShearY",       "TranslateX", "TranslateY",
      "Rotate",    "Brightness", "Color",        "Contrast",   "Sharpness",
      "Posterize", "Solarize",   "AutoContrast", "Equalize",   "Invert"};
  const auto i = static_cast<size_t>(op);
  return i < kNames.size() ? kNames[i] : "?";
}

bool augment_op_signed(AugmentOp op) { return signed_op(op); }

std::string auto_augment_policy_text(AutoAugmentPolicy policy) {
  std::string text;
  for (const SubPolicy& sub : policy_table(policy)) {
    if (!text.empty()) text += "; ";
    text += fmt::format("{} {} {}, {} {} {}", augment_op_name(sub[0].op), sub[0].p, sub[0].bin,
                        augment_op_name(sub[1].op), sub[1].p, sub[1].bin);
  }
  return text;
}

float augment_magnitude(AutoAugmentKind kind, AugmentOp op, int bin, int num_bins, int width,
                        int height) {
  const bool wide = kind == AutoAugmentKind::kTrivialAugmentWide;
  const float strength = wide ? 0.99f : 0.9f;
  switch (op) {
    case AugmentOp::kShearX:
    case AugmentOp::kShearY:
      return linspace(0.0f, wide ? 0.99f : 0.3f, num_bins, bin);
    case AugmentOp::kTranslateX:
      return linspace(0.0f, wide ? 32.0f : static_cast<float>(150.0 / 331.0 * width), num_bins,
                      bin);
    case AugmentOp::kTranslateY:
      return linspace(0.0f, wide ? 32.0f : static_cast<float>(150.0 / 331.0 * height), num_bins,
                      bin);
    case AugmentOp::kRotate:
      return linspace(0.0f, wide ? 135.0f : 30.0f, num_bins, bin);
    case AugmentOp::kBrightness:
    case AugmentOp::kColor:
    case AugmentOp::kContrast:
    case AugmentOp::kSharpness:
      return linspace(0.0f, strength, num_bins, bin);
    case AugmentOp::kPosterize: {
      // 8 - (arange(num_bins) / ((num_bins - 1) / k)).round(), in float32, round half to even
      const auto divisor = static_cast<float>((num_bins - 1) / (wide ? 6.0 : 4.0));
      return 8.0f - std::nearbyint(static_cast<float>(bin) / divisor);
    }
    case AugmentOp::kSolarize:
      return linspace(255.0f, 0.0f, num_bins, bin);
    default:
      return 0.0f;
  }
}

void draw_auto_augment(const AutoAugmentSpec& spec, int out_w, int out_h, SampleRng& rng,
                       SampleParams* params) {
  params->augment_steps = 0;
  switch (spec.kind) {
    case AutoAugmentKind::kNone:
      return;
    case AutoAugmentKind::kTrivialAugmentWide: {
      const auto op = static_cast<AugmentOp>(rng.below(kAugmentSpaceOps));
      float magnitude = 0;
      if (has_magnitudes(op)) {
        const auto bin =
            static_cast<int>(rng.below(static_cast<uint64_t>(spec.num_magnitude_bins)));
        magnitude = augment_magnitude(spec.kind, op, bin, spec.num_magnitude_bins, out_w, out_h);
      }
      if (signed_op(op) && rng.below(2) == 1) magnitude = -magnitude;
      push(params, op, magnitude);
      return;
    }
    case AutoAugmentKind::kRandAugment:
      for (int i = 0; i < spec.num_ops; ++i) {
        const auto op = static_cast<AugmentOp>(rng.below(kAugmentSpaceOps));
        float magnitude =
            augment_magnitude(spec.kind, op, spec.magnitude, spec.num_magnitude_bins, out_w, out_h);
        if (signed_op(op) && rng.below(2) == 1) magnitude = -magnitude;
        push(params, op, magnitude);
      }
      return;
    case AutoAugmentKind::kAutoAugment: {
      const auto& table = policy_table(spec.policy);
      const SubPolicy& sub = table[rng.below(table.size())];
      // torch.rand gives float32 uniforms; compared as such with the policy's probability.
      const std::array<float, 2> probs{static_cast<float>(rng.uniform()),
                                       static_cast<float>(rng.uniform())};
      const std::array<uint64_t, 2> signs{rng.below(2), rng.below(2)};
      for (size_t i = 0; i < 2; ++i) {
        if (!(probs[i] <= sub[i].p)) continue;
        float magnitude =
            sub[i].bin < 0 ? 0.0f
                           : augment_magnitude(spec.kind, sub[i].op, sub[i].bin, 10, out_w, out_h);
        if (signed_op(sub[i].op) && signs[i] == 0) magnitude = -magnitude;
        push(params, sub[i].op, magnitude);
      }
      return;
    }
  }
}

void apply_augment_op(AugmentOp op, float magnitude, const AutoAugmentSpec& spec,
                      std::vector<uint8_t>* image, std::vector<uint8_t>* scratch, int width,
                      int height, int channels) {
  const size_t plane = static_cast<size_t>(width) * height;
  const size_t n = plane * static_cast<size_t>(channels);
  uint8_t* p = image->data();
  const double m = magnitude;
  const auto warp_by = [&](const std::array<double, 6>& matrix) {
    scratch->resize(n);
    warp(matrix, spec, image->data(), scratch->data(), width, height, channels);
    std::swap(*image, *scratch);
  };
  // Shears turn about the top-left corner (center=[0, 0] in pixels, i.e. minus half the size
  // from the image's centre); translations and rotations about the centre.
  const double corner_x = -0.5 * width;
  const double corner_y = -0.5 * height;
  const double shear_degrees = std::atan(m) * 180.0 / std::numbers::pi;
  switch (op) {
    case AugmentOp::kIdentity:
      break;
    case AugmentOp::kShearX:
      warp_by(inverse_affine(corner_x, corner_y, 0, 0, 0, shear_degrees, 0));
      break;
    case AugmentOp::kShearY:
      warp_by(inverse_affine(corner_x, corner_y, 0, 0, 0, 0, shear_degrees));
      break;
    case AugmentOp::kTranslateX:
      warp_by(inverse_affine(0, 0, 0, std::trunc(m), 0, 0, 0));
      break;
    case AugmentOp::kTranslateY:
      warp_by(inverse_affine(0, 0, 0, 0, std::trunc(m), 0, 0));
      break;
    case AugmentOp::kRotate:
      warp_by(inverse_affine(0, 0, -m, 0, 0, 0, 0));  // F.rotate passes -angle to the matrix
      break;
    case AugmentOp::kBrightness:
      brightness(p, n, 1.0 + m);
      break;
    case AugmentOp::kColor:
      saturation(p, scratch, plane, channels, 1.0 + m);
      break;
    case AugmentOp::kContrast:
      contrast(p, scratch, plane, channels, 1.0 + m);
      break;
    case AugmentOp::kSharpness:
      sharpness(p, scratch, width, height, channels, 1.0 + m);
      break;
    case AugmentOp::kPosterize:
      posterize(p, n, static_cast<int>(magnitude));
      break;
    case AugmentOp::kSolarize:
      solarize(p, n, magnitude);
      break;
    case AugmentOp::kAutoContrast:
      autocontrast(p, plane, channels);
      break;
    case AugmentOp::kEqualize:
      equalize(p, plane, channels);
      break;
    case AugmentOp::kInvert:
      invert(p, n);
      break;
  }
}

}  // namespace stoker::data
