// The automatic augmentations' operations and draws, after torchvision 0.14's autoaugment.py
// and functional_tensor.py (see auto_augment.h for what "after" means, number by number).
#include "data/transform/auto_augment.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <utility>

#include "data/transform/simd.h"
#include "data/transform/u8_cast.h"
#include "data/transform/warp.h"
#include "stoker/core/distributions.h"

namespace stoker::data {
namespace {

// ---------------------------------------------------------------------------------------
// The augmentation spaces and AutoAugment's policies.

// torch.linspace(start, end, steps)[i] in float32, rounded once from the exact value. torch's
// own kernel (vectorised, with or without FMA by CPU and version) can land one ulp away. On
// torch 1.13 that never moves a translation's whole pixels (int(magnitude)) for image sides
// up to 600; torch 2.6 gives 15.999999 for TrivialAugmentWide's bin 15, where this gives 16.
// Posterize's and Solarize's values are exact either way.
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

bool has_magnitudes(AugmentOp op) { return signed_op(op) || op == AugmentOp::kPosterize || op == AugmentOp::kSolarize; }

struct PolicyStep {
  AugmentOp op;
  float p;
  int bin;  // magnitude bin of 10; -1 for operations without one
};
using SubPolicy = std::array<PolicyStep, 2>;

constexpr AugmentOp kPosterize = AugmentOp::kPosterize, kRotate = AugmentOp::kRotate, kSolarize = AugmentOp::kSolarize,
                    kAutoContrast = AugmentOp::kAutoContrast, kEqualize = AugmentOp::kEqualize,
                    kColor = AugmentOp::kColor, kInvert = AugmentOp::kInvert, kContrast = AugmentOp::kContrast,
                    kSharpness = AugmentOp::kSharpness, kShearX = AugmentOp::kShearX, kShearY = AugmentOp::kShearY,
                    kTranslateX = AugmentOp::kTranslateX, kTranslateY = AugmentOp::kTranslateY,
                    kBrightness = AugmentOp::kBrightness;

// AutoAugment._get_policies, verbatim.
constexpr std::array<SubPolicy, 25> kImageNetPolicy{{
    {{{kPosterize, 0.4f, 8}, {kRotate, 0.6f, 9}}},    {{{kSolarize, 0.6f, 5}, {kAutoContrast, 0.6f, -1}}},
    {{{kEqualize, 0.8f, -1}, {kEqualize, 0.6f, -1}}}, {{{kPosterize, 0.6f, 7}, {kPosterize, 0.6f, 6}}},
    {{{kEqualize, 0.4f, -1}, {kSolarize, 0.2f, 4}}},  {{{kEqualize, 0.4f, -1}, {kRotate, 0.8f, 8}}},
    {{{kSolarize, 0.6f, 3}, {kEqualize, 0.6f, -1}}},  {{{kPosterize, 0.8f, 5}, {kEqualize, 1.0f, -1}}},
    {{{kRotate, 0.2f, 3}, {kSolarize, 0.6f, 8}}},     {{{kEqualize, 0.6f, -1}, {kPosterize, 0.4f, 6}}},
    {{{kRotate, 0.8f, 8}, {kColor, 0.4f, 0}}},        {{{kRotate, 0.4f, 9}, {kEqualize, 0.6f, -1}}},
    {{{kEqualize, 0.0f, -1}, {kEqualize, 0.8f, -1}}}, {{{kInvert, 0.6f, -1}, {kEqualize, 1.0f, -1}}},
    {{{kColor, 0.6f, 4}, {kContrast, 1.0f, 8}}},      {{{kRotate, 0.8f, 8}, {kColor, 1.0f, 2}}},
    {{{kColor, 0.8f, 8}, {kSolarize, 0.8f, 7}}},      {{{kSharpness, 0.4f, 7}, {kInvert, 0.6f, -1}}},
    {{{kShearX, 0.6f, 5}, {kEqualize, 1.0f, -1}}},    {{{kColor, 0.4f, 0}, {kEqualize, 0.6f, -1}}},
    {{{kEqualize, 0.4f, -1}, {kSolarize, 0.2f, 4}}},  {{{kSolarize, 0.6f, 5}, {kAutoContrast, 0.6f, -1}}},
    {{{kInvert, 0.6f, -1}, {kEqualize, 1.0f, -1}}},   {{{kColor, 0.6f, 4}, {kContrast, 1.0f, 8}}},
    {{{kEqualize, 0.8f, -1}, {kEqualize, 0.6f, -1}}},
}};

constexpr std::array<SubPolicy, 25> kCifar10Policy{{
    {{{kInvert, 0.1f, -1}, {kContrast, 0.2f, 6}}},         {{{kRotate, 0.7f, 2}, {kTranslateX, 0.3f, 9}}},
    {{{kSharpness, 0.8f, 1}, {kSharpness, 0.9f, 3}}},      {{{kShearY, 0.5f, 8}, {kTranslateY, 0.7f, 9}}},
    {{{kAutoContrast, 0.5f, -1}, {kEqualize, 0.9f, -1}}},  {{{kShearY, 0.2f, 7}, {kPosterize, 0.3f, 7}}},
    {{{kColor, 0.4f, 3}, {kBrightness, 0.6f, 7}}},         {{{kSharpness, 0.3f, 9}, {kBrightness, 0.7f, 9}}},
    {{{kEqualize, 0.6f, -1}, {kEqualize, 0.5f, -1}}},      {{{kContrast, 0.6f, 7}, {kSharpness, 0.6f, 5}}},
    {{{kColor, 0.7f, 7}, {kTranslateX, 0.5f, 8}}},         {{{kEqualize, 0.3f, -1}, {kAutoContrast, 0.4f, -1}}},
    {{{kTranslateY, 0.4f, 3}, {kSharpness, 0.2f, 6}}},     {{{kBrightness, 0.9f, 6}, {kColor, 0.2f, 8}}},
    {{{kSolarize, 0.5f, 2}, {kInvert, 0.0f, -1}}},         {{{kEqualize, 0.2f, -1}, {kAutoContrast, 0.6f, -1}}},
    {{{kEqualize, 0.2f, -1}, {kEqualize, 0.6f, -1}}},      {{{kColor, 0.9f, 9}, {kEqualize, 0.6f, -1}}},
    {{{kAutoContrast, 0.8f, -1}, {kSolarize, 0.2f, 8}}},   {{{kBrightness, 0.1f, 3}, {kColor, 0.7f, 0}}},
    {{{kSolarize, 0.4f, 5}, {kAutoContrast, 0.9f, -1}}},   {{{kTranslateY, 0.9f, 9}, {kTranslateY, 0.7f, 9}}},
    {{{kAutoContrast, 0.9f, -1}, {kSolarize, 0.8f, 3}}},   {{{kEqualize, 0.8f, -1}, {kInvert, 0.1f, -1}}},
    {{{kTranslateY, 0.7f, 9}, {kAutoContrast, 0.9f, -1}}},
}};

constexpr std::array<SubPolicy, 25> kSvhnPolicy{{
    {{{kShearX, 0.9f, 4}, {kInvert, 0.2f, -1}}},        {{{kShearY, 0.9f, 8}, {kInvert, 0.7f, -1}}},
    {{{kEqualize, 0.6f, -1}, {kSolarize, 0.6f, 6}}},    {{{kInvert, 0.9f, -1}, {kEqualize, 0.6f, -1}}},
    {{{kEqualize, 0.6f, -1}, {kRotate, 0.9f, 3}}},      {{{kShearX, 0.9f, 4}, {kAutoContrast, 0.8f, -1}}},
    {{{kShearY, 0.9f, 8}, {kInvert, 0.4f, -1}}},        {{{kShearY, 0.9f, 5}, {kSolarize, 0.2f, 6}}},
    {{{kInvert, 0.9f, -1}, {kAutoContrast, 0.8f, -1}}}, {{{kEqualize, 0.6f, -1}, {kRotate, 0.9f, 3}}},
    {{{kShearX, 0.9f, 4}, {kSolarize, 0.3f, 3}}},       {{{kShearY, 0.8f, 8}, {kInvert, 0.7f, -1}}},
    {{{kEqualize, 0.9f, -1}, {kTranslateY, 0.6f, 6}}},  {{{kInvert, 0.9f, -1}, {kEqualize, 0.6f, -1}}},
    {{{kContrast, 0.3f, 3}, {kRotate, 0.8f, 4}}},       {{{kInvert, 0.8f, -1}, {kTranslateY, 0.0f, 2}}},
    {{{kShearY, 0.7f, 6}, {kSolarize, 0.4f, 8}}},       {{{kInvert, 0.6f, -1}, {kRotate, 0.8f, 4}}},
    {{{kShearY, 0.3f, 7}, {kTranslateX, 0.9f, 3}}},     {{{kShearX, 0.1f, 6}, {kInvert, 0.6f, -1}}},
    {{{kSolarize, 0.7f, 2}, {kTranslateY, 0.6f, 7}}},   {{{kShearY, 0.8f, 4}, {kInvert, 0.8f, -1}}},
    {{{kShearX, 0.7f, 9}, {kTranslateY, 0.8f, 3}}},     {{{kShearY, 0.8f, 5}, {kAutoContrast, 0.7f, -1}}},
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

// AugMix's augmentation space, in its order (its magnitudes: augment_magnitude); the colour
// operations only with all_ops.
constexpr std::array<AugmentOp, 13> kAugMixOps{AugmentOp::kShearX,     AugmentOp::kShearY,       AugmentOp::kTranslateX,
                                               AugmentOp::kTranslateY, AugmentOp::kRotate,       AugmentOp::kPosterize,
                                               AugmentOp::kSolarize,   AugmentOp::kAutoContrast, AugmentOp::kEqualize,
                                               AugmentOp::kBrightness, AugmentOp::kColor,        AugmentOp::kContrast,
                                               AugmentOp::kSharpness};
constexpr int kAugMixBasicOps = 9;  // without all_ops: up to Equalize
constexpr int kAugMixBins = 10;     // AugMix._PARAMETER_MAX

void push(SampleParams* params, AugmentOp op, float magnitude) {
  if (params->augment_steps >= SampleParams::kMaxAugmentSteps) return;
  params->augment[static_cast<size_t>(params->augment_steps++)] = {static_cast<uint8_t>(op), magnitude};
}

// ---------------------------------------------------------------------------------------
// Colour operations (functional_tensor.py).

// _blend(img1, img2, ratio) per element: float32 products summed, clamped, truncated.
inline uint8_t blend(float ratio, float one_minus_ratio, float a, float b) {
  return truncate_u8(ratio * a + one_minus_ratio * b);
}

// Operations of one pixel value at a time go through a table of its 256 results, computed
// with the same arithmetic: exact, and one load per element.
using Lut = std::array<uint8_t, 256>;
template <typename F>
Lut make_lut(F&& f) {
  Lut lut{};
  for (size_t v = 0; v < 256; ++v) lut[v] = f(static_cast<float>(v));
  return lut;
}
void map_values(uint8_t* image, size_t n, const Lut& lut) {
  for (size_t i = 0; i < n; ++i) image[i] = lut[image[i]];
}

// rgb_to_grayscale: (0.2989 r + 0.587 g + 0.114 b).to(uint8).
void grayscale(const uint8_t* r, const uint8_t* g, const uint8_t* b, uint8_t* out, size_t n) {
  simd::for_each_blocked(n, [&](size_t i) {
    const float v =
        0.2989f * static_cast<float>(r[i]) + 0.587f * static_cast<float>(g[i]) + 0.114f * static_cast<float>(b[i]);
    out[i] = static_cast<uint8_t>(static_cast<int>(v));
  });
}

// Blends `n` elements of image with `other` (an image of the same size): the two products
// from tables, as the blend forms them, then the sum.
void blend_planes(uint8_t* image, const uint8_t* other, size_t n, double factor) {
  const auto r = static_cast<float>(factor);
  const auto s = static_cast<float>(1.0 - factor);
  std::array<float, 256> mine{};
  std::array<float, 256> theirs{};
  for (size_t v = 0; v < 256; ++v) {
    mine[v] = r * static_cast<float>(v);
    theirs[v] = s * static_cast<float>(v);
  }
  for (size_t i = 0; i < n; ++i) image[i] = truncate_u8(mine[image[i]] + theirs[other[i]]);
}
void blend_constant(uint8_t* image, float other, size_t n, double factor) {
  const auto r = static_cast<float>(factor);
  const auto s = static_cast<float>(1.0 - factor);
  map_values(image, n, make_lut([&](float v) { return blend(r, s, v, other); }));
}

void saturation(uint8_t* image, std::vector<uint8_t>* scratch, size_t plane, int channels, double factor) {
  if (channels != 3) return;  // torchvision: a one-channel image is returned as is
  scratch->resize(plane);
  grayscale(image, image + plane, image + 2 * plane, scratch->data(), plane);
  for (int c = 0; c < channels; ++c) blend_planes(image + c * plane, scratch->data(), plane, factor);
}

void contrast(uint8_t* image, std::vector<uint8_t>* scratch, size_t plane, int channels, double factor) {
  const uint8_t* grey = image;
  if (channels == 3) {
    scratch->resize(plane);
    grayscale(image, image + plane, image + 2 * plane, scratch->data(), plane);
    grey = scratch->data();
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < plane; ++i) sum += grey[i];
  const auto mean = static_cast<float>(static_cast<double>(sum) / static_cast<double>(plane));
  blend_constant(image, mean, plane * static_cast<size_t>(channels), factor);
}

// _blurred_degenerate_image: the 3x3 kernel [1 1 1; 1 5 1; 1 1 1] / 13 on the interior,
// rounded; the border keeps the image. Then blended.
void sharpness(uint8_t* image, std::vector<uint8_t>* scratch, int width, int height, int channels, double factor) {
  if (width <= 2 || height <= 2) return;
  const size_t plane = static_cast<size_t>(width) * height;
  const auto w = static_cast<size_t>(width);
  scratch->assign(image, image + plane * channels);
  const float edge = 1.0f / 13.0f;
  const float centre = 5.0f / 13.0f;
  for (int c = 0; c < channels; ++c) {
    for (int y = 1; y < height - 1; ++y) {
      // Row y's interior, from x = 1: the rows above, at and below, shifted by -1, 0, +1.
      const uint8_t* up = image + c * plane + (static_cast<size_t>(y) - 1) * w;
      const uint8_t* at = up + w;
      const uint8_t* down = at + w;
      uint8_t* out = scratch->data() + c * plane + static_cast<size_t>(y) * w + 1;
      simd::for_each_blocked(w - 2, [&](size_t x) {
        const int ring = up[x] + up[x + 1] + up[x + 2] + at[x] + at[x + 2] + down[x] + down[x + 1] + down[x + 2];
        out[x] = round_u8(edge * static_cast<float>(ring) + centre * static_cast<float>(at[x + 1]));
      });
    }
  }
  blend_planes(image, scratch->data(), plane * static_cast<size_t>(channels), factor);
}

void posterize(uint8_t* image, size_t n, int bits) {
  const auto mask = static_cast<uint8_t>(-(1 << (8 - std::clamp(bits, 0, 8))));
  map_values(image, n, make_lut([&](float v) { return static_cast<uint8_t>(static_cast<int>(v) & mask); }));
}

void solarize(uint8_t* image, size_t n, float threshold) {
  map_values(image, n, make_lut([&](float v) { return static_cast<uint8_t>(v >= threshold ? 255.0f - v : v); }));
}

void invert(uint8_t* image, size_t n) {
  map_values(image, n, make_lut([](float v) { return static_cast<uint8_t>(255.0f - v); }));
}

void autocontrast(uint8_t* image, size_t plane, int channels) {
  for (int c = 0; c < channels; ++c) {
    uint8_t* p = image + c * plane;
    // The plane's extremes, 16 lanes at a time (pminub / pmaxub), then over the lanes.
    std::array<uint8_t, simd::kBlock> lo;
    std::array<uint8_t, simd::kBlock> hi;
    lo.fill(255);
    hi.fill(0);
    size_t i = 0;
    for (; i + simd::kBlock <= plane; i += simd::kBlock) {
      STOKER_LOOP_INDEPENDENT
      for (size_t j = 0; j < simd::kBlock; ++j) {
        lo[j] = std::min(lo[j], p[i + j]);
        hi[j] = std::max(hi[j], p[i + j]);
      }
    }
    uint8_t least = *std::min_element(lo.begin(), lo.end());
    uint8_t most = *std::max_element(hi.begin(), hi.end());
    for (; i < plane; ++i) {
      least = std::min(least, p[i]);
      most = std::max(most, p[i]);
    }
    if (least == most) continue;  // scale not finite: minimum 0, scale 1, the plane unchanged
    const auto minimum = static_cast<float>(least);
    const float scale = kU8Max / (static_cast<float>(most) - minimum);
    map_values(p, plane, make_lut([&](float v) { return truncate_u8((v - minimum) * scale); }));
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
      lut[v] = static_cast<uint8_t>(std::clamp<int64_t>(v == 0 ? 0 : (cumulative + step / 2) / step, 0, 255));
      cumulative += hist[v];
    }
    map_values(p, plane, lut);
  }
}

}  // namespace

const char* augment_op_name(AugmentOp op) {
  static constexpr std::array<const char*, 15> kNames{
      "Identity", "ShearX",    "ShearY",    "TranslateX", "TranslateY",   "Rotate",   "Brightness", "Color",
      "Contrast", "Sharpness", "Posterize", "Solarize",   "AutoContrast", "Equalize", "Invert"};
  const auto i = static_cast<size_t>(op);
  return i < kNames.size() ? kNames[i] : "?";
}

bool augment_op_signed(AugmentOp op) { return signed_op(op); }

int aug_mix_ops(bool all_ops) { return all_ops ? static_cast<int>(kAugMixOps.size()) : kAugMixBasicOps; }
AugmentOp aug_mix_op(int index) { return kAugMixOps.at(static_cast<size_t>(index)); }

std::string auto_augment_policy_text(AutoAugmentPolicy policy) {
  std::string text;
  for (const SubPolicy& sub : policy_table(policy)) {
    if (!text.empty()) text += "; ";
    text += fmt::format("{} {} {}, {} {} {}", augment_op_name(sub[0].op), sub[0].p, sub[0].bin,
                        augment_op_name(sub[1].op), sub[1].p, sub[1].bin);
  }
  return text;
}

// TrivialAugmentWide's space is the wide one; RandAugment, AutoAugment and AugMix share theirs
// but for two ranges: AugMix translates up to a third of the side (the others 150/331 of it)
// and posterizes down to 0 bits (the others to 4).
float augment_magnitude(AutoAugmentKind kind, AugmentOp op, int bin, int num_bins, int width, int height) {
  const bool wide = kind == AutoAugmentKind::kTrivialAugmentWide;
  const bool mix = kind == AutoAugmentKind::kAugMix;
  const float strength = wide ? 0.99f : 0.9f;
  const auto translate = [&](int side) {
    return wide ? 32.0f : static_cast<float>(mix ? side / 3.0 : 150.0 / 331.0 * side);
  };
  switch (op) {
    case AugmentOp::kShearX:
    case AugmentOp::kShearY:
      return linspace(0.0f, wide ? 0.99f : 0.3f, num_bins, bin);
    case AugmentOp::kTranslateX:
      return linspace(0.0f, translate(width), num_bins, bin);
    case AugmentOp::kTranslateY:
      return linspace(0.0f, translate(height), num_bins, bin);
    case AugmentOp::kRotate:
      return linspace(0.0f, wide ? 135.0f : 30.0f, num_bins, bin);
    case AugmentOp::kBrightness:
    case AugmentOp::kColor:
    case AugmentOp::kContrast:
    case AugmentOp::kSharpness:
      return linspace(0.0f, strength, num_bins, bin);
    case AugmentOp::kPosterize: {
      // b - (arange(num_bins) / ((num_bins - 1) / k)).round(), in float32, round half to even
      const auto divisor = static_cast<float>((num_bins - 1) / (wide ? 6.0 : 4.0));
      return (mix ? 4.0f : 8.0f) - std::nearbyint(static_cast<float>(bin) / divisor);
    }
    case AugmentOp::kSolarize:
      return linspace(255.0f, 0.0f, num_bins, bin);
    default:
      return 0.0f;
  }
}

namespace {

// AugMix.forward's draws, in its order: the image's and the chains' share (Dirichlet of two),
// the chains' weights (Dirichlet of mixture_width) times the chains' share, then per chain its
// depth (1..3 unless chain_depth is set) and per step the operation, the magnitude bin (below
// severity) for operations with magnitudes, and the sign (1 = negative) for signed ones.
// torch samples the Dirichlets in float32, and so are the weights kept.
void draw_aug_mix(const AutoAugmentSpec& spec, int out_w, int out_h, SampleRng& rng, SampleParams* params) {
  double share[2];
  dirichlet_draw(rng, spec.alpha, 2, share);
  double weights[AutoAugmentSpec::kMaxChains];
  const int width = std::clamp(spec.mixture_width, 1, AutoAugmentSpec::kMaxChains);
  dirichlet_draw(rng, spec.alpha, width, weights);
  const auto chains_share = static_cast<float>(share[1]);
  params->mix_weight[0] = static_cast<float>(share[0]);
  const int ops = aug_mix_ops(spec.all_ops);
  params->chains = width;
  for (int i = 0; i < width; ++i) {
    params->mix_weight[static_cast<size_t>(i + 1)] = static_cast<float>(weights[i]) * chains_share;
    const int depth = spec.chain_depth > 0 ? std::min(spec.chain_depth, AutoAugmentSpec::kMaxDepth)
                                           : 1 + static_cast<int>(rng.below(3));
    params->chain_length[static_cast<size_t>(i)] = static_cast<uint8_t>(depth);
    for (int d = 0; d < depth; ++d) {
      const AugmentOp op = kAugMixOps[rng.below(static_cast<uint64_t>(ops))];
      float magnitude = 0;
      if (has_magnitudes(op)) {
        const auto bin = static_cast<int>(rng.below(static_cast<uint64_t>(spec.severity)));
        magnitude = augment_magnitude(spec.kind, op, bin, kAugMixBins, out_w, out_h);
      }
      if (signed_op(op) && rng.below(2) == 1) magnitude = -magnitude;
      push(params, op, magnitude);
    }
  }
}

}  // namespace

void draw_auto_augment(const AutoAugmentSpec& spec, int out_w, int out_h, SampleRng& rng, SampleParams* params) {
  params->augment_steps = 0;
  params->chains = 0;
  switch (spec.kind) {
    case AutoAugmentKind::kNone:
      return;
    case AutoAugmentKind::kTrivialAugmentWide: {
      const auto op = static_cast<AugmentOp>(rng.below(kAugmentSpaceOps));
      float magnitude = 0;
      if (has_magnitudes(op)) {
        const auto bin = static_cast<int>(rng.below(static_cast<uint64_t>(spec.num_magnitude_bins)));
        magnitude = augment_magnitude(spec.kind, op, bin, spec.num_magnitude_bins, out_w, out_h);
      }
      if (signed_op(op) && rng.below(2) == 1) magnitude = -magnitude;
      push(params, op, magnitude);
      return;
    }
    case AutoAugmentKind::kRandAugment:
      for (int i = 0; i < spec.num_ops; ++i) {
        const auto op = static_cast<AugmentOp>(rng.below(kAugmentSpaceOps));
        float magnitude = augment_magnitude(spec.kind, op, spec.magnitude, spec.num_magnitude_bins, out_w, out_h);
        if (signed_op(op) && rng.below(2) == 1) magnitude = -magnitude;
        push(params, op, magnitude);
      }
      return;
    case AutoAugmentKind::kAugMix:
      draw_aug_mix(spec, out_w, out_h, rng, params);
      return;
    case AutoAugmentKind::kAutoAugment: {
      const auto& table = policy_table(spec.policy);
      const SubPolicy& sub = table[rng.below(table.size())];
      // torch.rand gives float32 uniforms; compared as such with the policy's probability.
      const std::array<float, 2> probs{static_cast<float>(rng.uniform()), static_cast<float>(rng.uniform())};
      const std::array<uint64_t, 2> signs{rng.below(2), rng.below(2)};
      for (size_t i = 0; i < 2; ++i) {
        if (!(probs[i] <= sub[i].p)) continue;
        float magnitude = sub[i].bin < 0 ? 0.0f : augment_magnitude(spec.kind, sub[i].op, sub[i].bin, 10, out_w, out_h);
        if (signed_op(sub[i].op) && signs[i] == 0) magnitude = -magnitude;
        push(params, sub[i].op, magnitude);
      }
      return;
    }
  }
}

void apply_affine(const SampleParams& params, const AutoAugmentSpec& spec, std::vector<uint8_t>* image,
                  std::vector<uint8_t>* scratch, int width, int height, int channels) {
  // F.affine with center=None: center_f = [0, 0] (the image's centre) and the translation as
  // given; the grid and fill as F.rotate's.
  scratch->resize(static_cast<size_t>(width) * height * static_cast<size_t>(channels));
  warp(inverse_affine(0, 0, params.affine_angle, params.translate_x, params.translate_y, params.shear_x, params.shear_y,
                      params.affine_scale),
       spec, image->data(), scratch->data(), width, height, channels);
  std::swap(*image, *scratch);
}

void apply_augment_op(AugmentOp op, float magnitude, const AutoAugmentSpec& spec, std::vector<uint8_t>* image,
                      std::vector<uint8_t>* scratch, int width, int height, int channels) {
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
    case AugmentOp::kTranslateY: {
      const auto pixels = static_cast<int>(std::clamp(std::trunc(m), -1e6, 1e6));
      scratch->resize(n);
      shift(spec, image->data(), scratch->data(), width, height, channels, op == AugmentOp::kTranslateX ? pixels : 0,
            op == AugmentOp::kTranslateY ? pixels : 0);
      std::swap(*image, *scratch);
      break;
    }
    case AugmentOp::kRotate:
      warp_by(inverse_affine(0, 0, -m, 0, 0, 0, 0));  // F.rotate passes -angle to the matrix
      break;
    case AugmentOp::kBrightness:
      blend_constant(p, 0.0f, n, 1.0 + m);  // blended with zeros
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

void apply_color_op(ColorOp op, double value, std::vector<uint8_t>* image, std::vector<uint8_t>* scratch, int width,
                    int height, int channels) {
  // In ColorOp's order. _apply_op's Sharpness is adjust_sharpness(1 + magnitude).
  static constexpr std::array<AugmentOp, kColorOps> kOps{AugmentOp::kInvert,       AugmentOp::kPosterize,
                                                         AugmentOp::kSolarize,     AugmentOp::kSharpness,
                                                         AugmentOp::kAutoContrast, AugmentOp::kEqualize};
  const double magnitude = op == ColorOp::kAdjustSharpness ? value - 1 : value;
  apply_augment_op(kOps[static_cast<size_t>(op)], static_cast<float>(magnitude), AutoAugmentSpec{}, image, scratch,
                   width, height, channels);
}

void apply_aug_mix(const SampleParams& params, const AutoAugmentSpec& spec, std::vector<uint8_t>* image,
                   std::vector<uint8_t>* chain, std::vector<uint8_t>* scratch, std::vector<float>* mix, int width,
                   int height, int channels) {
  const size_t n = static_cast<size_t>(width) * height * static_cast<size_t>(channels);
  mix->resize(n);
  float* sum = mix->data();
  const uint8_t* original = image->data();
  const float own = params.mix_weight[0];
  simd::for_each_blocked(n, [&](size_t i) { sum[i] = own * static_cast<float>(original[i]); });
  int step = 0;
  for (int c = 0; c < params.chains; ++c) {
    chain->assign(image->begin(), image->end());
    for (int d = 0; d < params.chain_length[static_cast<size_t>(c)]; ++d, ++step) {
      const SampleParams::AugmentStep& s = params.augment[static_cast<size_t>(step)];
      apply_augment_op(static_cast<AugmentOp>(s.op), s.magnitude, spec, chain, scratch, width, height, channels);
    }
    const float w = params.mix_weight[static_cast<size_t>(c + 1)];
    const uint8_t* augmented = chain->data();
    simd::for_each_blocked(n, [&](size_t i) { sum[i] += w * static_cast<float>(augmented[i]); });
  }
  uint8_t* out = image->data();
  simd::for_each_blocked(n, [&](size_t i) { out[i] = truncate_u8(sum[i]); });  // .to(uint8)
}

}  // namespace stoker::data
