// Geometric operations: torchvision's affine()/rotate() on tensors (see warp.h).
#include "data/transform/warp.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numbers>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "data/transform/gaussian_blur.h"
#include "data/transform/simd.h"
#include "data/transform/u8_cast.h"
#include "stoker/core/rng.h"

namespace stoker::data {
namespace {

double radians(double degrees) { return degrees * std::numbers::pi / 180.0; }

}  // namespace

// _get_inverse_affine_matrix(center, angle, translate, scale, shear), inverted.
std::array<double, 6> inverse_affine(double cx, double cy, double angle, double tx, double ty, double shear_x,
                                     double shear_y, double scale) {
  const double rot = radians(angle);
  const double sx = radians(shear_x);
  const double sy = radians(shear_y);
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m{d, -b, 0.0, -c, a, 0.0};
  for (double& v : m) v /= scale;
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
  return m;
}

namespace {

// The warp works on four output pixels at a time: their sampling positions in vector lanes,
// the taps gathered per lane. Each lane does the float operations, in the order, that one
// pixel's scalar code would (ISO C++ mode, so GCC contracts nothing into FMAs).
using simd::f32x4;
using simd::i32x4;

// floor() per lane for |v| < 2^31: truncate, then one less where that went up.
inline i32x4 floor4(f32x4 v) {
  const i32x4 t = __builtin_convertvector(v, i32x4);
  return t + (__builtin_convertvector(t, f32x4) > v);  // a true comparison is -1
}
inline f32x4 round_even4(f32x4 v) { return (v + simd::splat4(kRoundMagic)) - simd::splat4(kRoundMagic); }
// Whether every lane / any lane of a comparison's result is true (-1).
inline bool all_lanes(i32x4 m) {
#if defined(__SSE2__)
  return _mm_movemask_ps(reinterpret_cast<__m128>(m)) == 0xF;
#else
  return (m[0] & m[1] & m[2] & m[3]) != 0;
#endif
}
inline bool any_lane(i32x4 m) {
#if defined(__SSE2__)
  return _mm_movemask_ps(reinterpret_cast<__m128>(m)) != 0;
#else
  return (m[0] | m[1] | m[2] | m[3]) != 0;
#endif
}
// Four lanes of values in [0, 255] stored as 4 bytes. SSE2's two saturating packs; GCC
// builds the generic conversion from per-lane shifts and ors.
inline void store_u8(uint8_t* out, i32x4 v) {
#if defined(__SSE2__)
  const __m128i words = _mm_packs_epi32(reinterpret_cast<__m128i>(v), reinterpret_cast<__m128i>(v));
  const int bytes = _mm_cvtsi128_si32(_mm_packus_epi16(words, words));
#else
  using u8x4 = uint8_t __attribute__((vector_size(4)));
  const u8x4 bytes = __builtin_convertvector(v, u8x4);
#endif
  std::memcpy(out, &bytes, sizeof bytes);
}
// round_u8 per lane, stored as 4 bytes, for |v| < 2^31 (a blend of pixels and a fill in
// [0, 255] is): the packs saturate to [0, 255] as round_u8's clamp does.
inline void store_round_u8(uint8_t* out, f32x4 v) {
#if defined(__SSE2__)
  store_u8(out, __builtin_convertvector(round_even4(v), i32x4));
#else
  store_u8(out, __builtin_convertvector(simd::clamp4(round_even4(v), 0.0f, kU8Max), i32x4));
#endif
}
// p[0] | p[1] << 8: two neighbouring pixels of a plane in one 16-bit load (compilers merge
// the two byte loads), whatever the machine's byte order.
inline int pair_u16(const uint8_t* p) { return p[0] | (p[1] << 8); }

// One pixel's bilinear sample with taps outside the image skipped (they would add
// 0 * pixel); `mask` is the in-image weights' sum, grid_sample of a ones image.
struct EdgeTaps {
  std::array<int32_t, 4> index{};
  std::array<float, 4> weight{};
  float mask = 0;
};
EdgeTaps edge_taps(int x0, int y0, const std::array<float, 4>& weight, int width, int height) {
  EdgeTaps taps;
  const std::array<std::array<int, 2>, 4> corner{{{x0, y0}, {x0 + 1, y0}, {x0, y0 + 1}, {x0 + 1, y0 + 1}}};
  for (size_t t = 0; t < 4; ++t) {
    const auto [xx, yy] = corner[t];
    if (xx < 0 || xx >= width || yy < 0 || yy >= height) continue;
    taps.index[t] = yy * width + xx;
    taps.weight[t] = weight[t];
    taps.mask += weight[t];
  }
  return taps;
}

// grid_sample's bicubic weights for a position t in [0, 1) past a tap: taps -1, 0, 1 and 2
// (its get_cubic_upsample_coefficients, A = -0.75).
std::array<float, 4> cubic_coefficients(float t) {
  constexpr float kA = -0.75f;
  const auto near = [](float x) { return ((kA + 2) * x - (kA + 3)) * x * x + 1; };         // |x| <= 1
  const auto far = [](float x) { return ((kA * x - 5 * kA) * x + 8 * kA) * x - 4 * kA; };  // 1 < |x| < 2
  const float rest = 1.0f - t;
  return {far(t + 1.0f), near(t), near(rest), far(rest + 1.0f)};
}

// warp() with grid_sample's bicubic: the 4x4 taps around each position, a tap off the image
// counting 0 (padding zeros), each row interpolated along x and then the rows along y, as its
// CPU kernel does; the fill blended by the in-image taps' weight (grid_sample of a ones image,
// _apply_grid_transform's mask), then rounded half to even and clamped to [0, 255] (the cubic
// overshoots; PIL's bicubic clamps too). `theta` is the inverse matrix over the half sizes.
void warp_bicubic(const std::array<float, 6>& theta, const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out,
                  int width, int height, int channels) {
  const float half_w = 0.5f * static_cast<float>(width);
  const float half_h = 0.5f * static_cast<float>(height);
  const auto w = static_cast<float>(width);
  const auto h = static_cast<float>(height);
  constexpr float kFar = 4194304.0f;  // as warp()'s
  const size_t plane = static_cast<size_t>(width) * height;
  for (int j = 0; j < height; ++j) {
    const float y = -half_h + 0.5f + static_cast<float>(j);
    const float y10 = y * theta[1];
    const float y11 = y * theta[4];
    for (int k = 0; k < width; ++k) {
      const float x = (-half_w + 0.5f) + static_cast<float>(k);
      const float gx = x * theta[0] + y10 + theta[2];
      const float gy = x * theta[3] + y11 + theta[5];
      const float ix = std::clamp(((gx + 1.0f) * w - 1.0f) * 0.5f, -kFar, kFar);
      const float iy = std::clamp(((gy + 1.0f) * h - 1.0f) * 0.5f, -kFar, kFar);
      const float fx = std::floor(ix);
      const float fy = std::floor(iy);
      const auto x0 = static_cast<int>(fx) - 1;
      const auto y0 = static_cast<int>(fy) - 1;
      const std::array<float, 4> cx = cubic_coefficients(ix - fx);
      const std::array<float, 4> cy = cubic_coefficients(iy - fy);
      const auto inside = [](int v, int size) { return v >= 0 && v < size; };
      float mask_rows[4];
      for (int r = 0; r < 4; ++r) {
        float m = 0;
        for (int t = 0; t < 4; ++t) m += inside(x0 + t, width) && inside(y0 + r, height) ? cx[t] : 0.0f;
        mask_rows[r] = m;
      }
      const float mask = mask_rows[0] * cy[0] + mask_rows[1] * cy[1] + mask_rows[2] * cy[2] + mask_rows[3] * cy[3];
      const size_t at = static_cast<size_t>(j) * width + static_cast<size_t>(k);
      for (int c = 0; c < channels; ++c) {
        const uint8_t* src = in + c * plane;
        float rows[4];
        for (int r = 0; r < 4; ++r) {
          float v = 0;
          for (int t = 0; t < 4; ++t) {
            const int xx = x0 + t;
            const int yy = y0 + r;
            const float tap = inside(xx, width) && inside(yy, height) ? static_cast<float>(src[yy * width + xx]) : 0.0f;
            v += tap * cx[t];
          }
          rows[r] = v;
        }
        float v = rows[0] * cy[0] + rows[1] * cy[1] + rows[2] * cy[2] + rows[3] * cy[3];
        if (spec.has_fill) v = v * mask + (1.0f - mask) * spec.fill[static_cast<size_t>(c)];
        out[c * plane + at] = round_u8(v);
      }
    }
  }
}

}  // namespace

// _gen_affine_grid + grid_sample(align_corners=False, padding zeros) + _apply_grid_transform's
// fill, then the round to uint8. `in` and `out` are distinct.
void warp(const std::array<double, 6>& matrix, const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out, int width,
          int height, int channels) {
  const float half_w = 0.5f * static_cast<float>(width);
  const float half_h = 0.5f * static_cast<float>(height);
  std::array<float, 6> theta{};
  for (size_t i = 0; i < 6; ++i) theta[i] = static_cast<float>(matrix[i]);
  const float r00 = theta[0] / half_w, r10 = theta[1] / half_w, r20 = theta[2] / half_w;
  const float r01 = theta[3] / half_h, r11 = theta[4] / half_h, r21 = theta[5] / half_h;
  if (spec.interpolation == Interpolation::kBicubic) {
    warp_bicubic({r00, r10, r20, r01, r11, r21}, spec, in, out, width, height, channels);
    return;
  }
  const size_t plane = static_cast<size_t>(width) * height;
  const bool bilinear = spec.interpolation == Interpolation::kBilinear;
  constexpr float kFar = 4194304.0f;  // 2^22: beyond any image, within round_even's range
  std::array<uint8_t, 3> outside{};   // nearest's value for a tap off the image
  for (size_t c = 0; c < outside.size(); ++c) outside[c] = spec.has_fill ? round_u8(spec.fill[c]) : 0;

  const f32x4 lane{0, 1, 2, 3};
  const f32x4 w = simd::splat4(static_cast<float>(width));
  const f32x4 h = simd::splat4(static_cast<float>(height));
  const f32x4 one = simd::splat4(1.0f);
  const f32x4 half = simd::splat4(0.5f);
  for (int j = 0; j < height; ++j) {
    const float y = -half_h + 0.5f + static_cast<float>(j);
    const f32x4 y10 = simd::splat4(y * r10);
    const f32x4 y11 = simd::splat4(y * r11);
    const size_t row = static_cast<size_t>(j) * width;
    for (int k = 0; k < width; k += 4) {
      const int lanes = std::min(4, width - k);  // the last block may run past the row
      const f32x4 x = simd::splat4(-half_w + 0.5f) + (simd::splat4(static_cast<float>(k)) + lane);
      const f32x4 gx = x * r00 + y10 + r20;
      const f32x4 gy = x * r01 + y11 + r21;
      // (v + 1) * size - 1) / 2, halved by a product: the same rounded value as the division.
      const f32x4 ix = simd::clamp4(((gx + 1.0f) * w - 1.0f) * half, -kFar, kFar);
      const f32x4 iy = simd::clamp4(((gy + 1.0f) * h - 1.0f) * half, -kFar, kFar);
      if (!bilinear) {
        const i32x4 xn = __builtin_convertvector(round_even4(ix), i32x4);
        const i32x4 yn = __builtin_convertvector(round_even4(iy), i32x4);
        const i32x4 ok = (xn >= 0) & (xn < width) & (yn >= 0) & (yn < height);
        if (lanes == 4 && !any_lane(ok)) {  // a corner off the image
          for (int c = 0; c < channels; ++c) std::memset(out + c * plane + row + k, outside[static_cast<size_t>(c)], 4);
          continue;
        }
        if (lanes == 4 && all_lanes(ok)) {  // no lane off the image
          const i32x4 at = yn * width + xn;
          const std::array<int, 4> tap{at[0], at[1], at[2], at[3]};
          for (int c = 0; c < channels; ++c) {
            const uint8_t* src = in + c * plane;
            uint8_t* dst = out + c * plane + row + k;
            dst[0] = src[tap[0]];
            dst[1] = src[tap[1]];
            dst[2] = src[tap[2]];
            dst[3] = src[tap[3]];
          }
          continue;
        }
        for (int c = 0; c < channels; ++c) {
          const uint8_t* src = in + c * plane;
          uint8_t* dst = out + c * plane + row + k;
          for (int l = 0; l < lanes; ++l) {
            dst[l] = ok[l] != 0 ? src[yn[l] * width + xn[l]] : outside[static_cast<size_t>(c)];
          }
        }
        continue;
      }
      // grid_sample's bilinear weights, formed as its CPU kernel forms them.
      const i32x4 x0 = floor4(ix);
      const i32x4 y0 = floor4(iy);
      const f32x4 we = ix - __builtin_convertvector(x0, f32x4);
      const f32x4 ea = one - we;
      const f32x4 no = iy - __builtin_convertvector(y0, f32x4);
      const f32x4 so = one - no;
      const std::array<f32x4, 4> weight{so * ea, so * we, no * ea, no * we};  // nw, ne, sw, se
      const i32x4 all_in = (x0 >= 0) & (y0 >= 0) & (x0 + 1 < width) & (y0 + 1 < height);
      if (lanes == 4 && all_lanes(all_in)) {
        const i32x4 nw = y0 * width + x0;
        const f32x4 mask = ((weight[0] + weight[1]) + weight[2]) + weight[3];
        for (int c = 0; c < channels; ++c) {
          const uint8_t* src = in + c * plane;
          // Each lane's two upper taps in one 16-bit load, and its two lower ones in another.
          const auto pairs = [&](int offset) {
            return i32x4{pair_u16(src + nw[0] + offset), pair_u16(src + nw[1] + offset), pair_u16(src + nw[2] + offset),
                         pair_u16(src + nw[3] + offset)};
          };
          const i32x4 upper = pairs(0);
          const i32x4 lower = pairs(width);
          const auto value = [](i32x4 v) { return __builtin_convertvector(v, f32x4); };
          f32x4 v = weight[0] * value(upper & 0xff);
          v = v + weight[1] * value(upper >> 8);
          v = v + weight[2] * value(lower & 0xff);
          v = v + weight[3] * value(lower >> 8);
          if (spec.has_fill) v = v * mask + (one - mask) * spec.fill[static_cast<size_t>(c)];
          store_round_u8(out + c * plane + row + k, v);
        }
        continue;
      }
      const i32x4 all_out = (x0 < -1) | (y0 < -1) | (x0 >= width) | (y0 >= height);
      if (lanes == 4 && all_lanes(all_out)) {  // a corner off the image
        for (int c = 0; c < channels; ++c) std::memset(out + c * plane + row + k, outside[static_cast<size_t>(c)], 4);
        continue;
      }
      for (int l = 0; l < lanes; ++l) {
        if (all_out[l] != 0) {  // no tap on the image: 0, or the fill blended with weight 1
          for (int c = 0; c < channels; ++c)
            out[c * plane + row + static_cast<size_t>(k + l)] = outside[static_cast<size_t>(c)];
          continue;
        }
        const EdgeTaps taps =
            edge_taps(x0[l], y0[l], {weight[0][l], weight[1][l], weight[2][l], weight[3][l]}, width, height);
        for (int c = 0; c < channels; ++c) {
          const uint8_t* src = in + c * plane;
          float v = 0;
          for (size_t t = 0; t < 4; ++t) v += taps.weight[t] * static_cast<float>(src[taps.index[t]]);
          if (spec.has_fill) v = v * taps.mask + (1.0f - taps.mask) * spec.fill[static_cast<size_t>(c)];
          out[c * plane + row + static_cast<size_t>(k + l)] = round_u8(v);
        }
      }
    }
  }
}

void warp_grid(const float* grid_x, const float* grid_y, const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out,
               int width, int height, int channels) {
  const size_t plane = static_cast<size_t>(width) * height;
  const bool bilinear = spec.interpolation == Interpolation::kBilinear;
  constexpr float kFar = 4194304.0f;  // as warp()'s
  std::array<uint8_t, 3> outside{};
  for (size_t c = 0; c < outside.size(); ++c) outside[c] = spec.has_fill ? round_u8(spec.fill[c]) : 0;
  const auto w = static_cast<float>(width);
  const auto h = static_cast<float>(height);
  // A position off every image, for a grid that is not a number (a perspective's vanishing line).
  const auto position = [&](float g, float size) {
    const float v = ((g + 1.0f) * size - 1.0f) * 0.5f;
    return std::isnan(v) ? kFar : std::clamp(v, -kFar, kFar);
  };
  for (size_t i = 0; i < plane; ++i) {
    const float ix = position(grid_x[i], w);
    const float iy = position(grid_y[i], h);
    if (!bilinear) {
      const auto xn = static_cast<int>(round_even(ix));
      const auto yn = static_cast<int>(round_even(iy));
      const bool ok = xn >= 0 && xn < width && yn >= 0 && yn < height;
      for (int c = 0; c < channels; ++c) {
        out[c * plane + i] =
            ok ? in[c * plane + static_cast<size_t>(yn) * width + xn] : outside[static_cast<size_t>(c)];
      }
      continue;
    }
    const auto x0 = static_cast<int>(std::floor(ix));
    const auto y0 = static_cast<int>(std::floor(iy));
    const float we = ix - static_cast<float>(x0);
    const float ea = 1.0f - we;
    const float no = iy - static_cast<float>(y0);
    const float so = 1.0f - no;
    if (x0 < -1 || y0 < -1 || x0 >= width || y0 >= height) {
      for (int c = 0; c < channels; ++c) out[c * plane + i] = outside[static_cast<size_t>(c)];
      continue;
    }
    const EdgeTaps taps = edge_taps(x0, y0, {so * ea, so * we, no * ea, no * we}, width, height);
    for (int c = 0; c < channels; ++c) {
      const uint8_t* src = in + c * plane;
      float v = 0;
      for (size_t t = 0; t < 4; ++t) v += taps.weight[t] * static_cast<float>(src[taps.index[t]]);
      if (spec.has_fill) v = v * taps.mask + (1.0f - taps.mask) * spec.fill[static_cast<size_t>(c)];
      out[c * plane + i] = round_u8(v);
    }
  }
}

std::array<float, 8> perspective_coeffs(const std::array<int, 8>& corners, int width, int height) {
  const std::array<double, 8> start{0, 0, width - 1.0, 0, width - 1.0, height - 1.0, 0, height - 1.0};
  // Rows as _get_perspective_coeffs builds them, then Gaussian elimination with partial pivoting.
  std::array<std::array<double, 9>, 8> a{};
  for (size_t i = 0; i < 4; ++i) {
    const double x = corners[2 * i], y = corners[2 * i + 1];
    const double u = start[2 * i], v = start[2 * i + 1];
    a[2 * i] = {x, y, 1, 0, 0, 0, -u * x, -u * y, u};
    a[2 * i + 1] = {0, 0, 0, x, y, 1, -v * x, -v * y, v};
  }
  for (size_t col = 0; col < 8; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < 8; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    std::swap(a[col], a[pivot]);
    if (a[col][col] == 0) continue;  // degenerate corners: that coefficient stays 0
    for (size_t r = 0; r < 8; ++r) {
      if (r == col || a[r][col] == 0) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t k = col; k < 9; ++k) a[r][k] -= f * a[col][k];
    }
  }
  std::array<float, 8> coeffs{};
  for (size_t i = 0; i < 8; ++i) coeffs[i] = a[i][i] != 0 ? static_cast<float>(a[i][8] / a[i][i]) : 0.0f;
  return coeffs;
}

void perspective_grid(const std::array<float, 8>& c, int width, int height, std::vector<float>* grid_x,
                      std::vector<float>* grid_y) {
  const size_t plane = static_cast<size_t>(width) * height;
  grid_x->resize(plane);
  grid_y->resize(plane);
  // theta1.transpose(1, 2) / [0.5 * ow, 0.5 * oh]: x's coefficients over half the width, y's
  // over half the height; theta2 is the denominator's.
  const float half_w = 0.5f * static_cast<float>(width);
  const float half_h = 0.5f * static_cast<float>(height);
  const float x0 = c[0] / half_w, x1 = c[1] / half_w, x2 = c[2] / half_w;
  const float y0 = c[3] / half_h, y1 = c[4] / half_h, y2 = c[5] / half_h;
  for (int j = 0; j < height; ++j) {
    const float y = static_cast<float>(j) + 0.5f;  // linspace(0.5, size - 0.5): exact
    for (int i = 0; i < width; ++i) {
      const float x = static_cast<float>(i) + 0.5f;
      const float d = x * c[6] + y * c[7] + 1.0f;
      const size_t at = static_cast<size_t>(j) * width + i;
      (*grid_x)[at] = (x * x0 + y * x1 + x2) / d - 1.0f;
      (*grid_y)[at] = (x * y0 + y * y1 + y2) / d - 1.0f;
    }
  }
}

void elastic_grid(const ElasticSpec& spec, uint64_t seed, int width, int height, std::vector<float>* grid_x,
                  std::vector<float>* grid_y, std::vector<float>* scratch) {
  constexpr uint64_t kNoiseStream = 0x454C4153u;  // "ELAS"
  const size_t plane = static_cast<size_t>(width) * height;
  SampleRng noise(seed, kNoiseStream, 0);
  const std::array<std::vector<float>*, 2> grid{grid_x, grid_y};
  const std::array<double, 2> sigma{spec.sigma_x, spec.sigma_y};
  // x's displacement is scaled by alpha_x / height and y's by alpha_y / width: get_params's
  // size[0] and size[1] with size = [height, width].
  const std::array<float, 2> alpha{static_cast<float>(spec.alpha_x), static_cast<float>(spec.alpha_y)};
  const std::array<float, 2> size{static_cast<float>(height), static_cast<float>(width)};
  for (size_t axis = 0; axis < 2; ++axis) {
    std::vector<float>& g = *grid[axis];
    g.resize(plane);
    for (float& v : g) v = static_cast<float>(noise.uniform()) * 2.0f - 1.0f;  // torch.rand(...) * 2 - 1
    if (sigma[axis] > 0) {
      int k = static_cast<int>(8 * sigma[axis] + 1);
      if (k % 2 == 0) ++k;
      gaussian_blur(g.data(), width, height, 1, true, k, k, static_cast<float>(sigma[0]), static_cast<float>(sigma[1]),
                    scratch);
    }
    for (float& v : g) v = v * alpha[axis] / size[axis];
  }
  // _create_identity_grid: linspace((1 - s) / s, (s - 1) / s, s) per axis, the pixels' centres.
  for (int j = 0; j < height; ++j) {
    const auto y = static_cast<float>((2.0 * j + 1 - height) / height);
    for (int i = 0; i < width; ++i) {
      const size_t at = static_cast<size_t>(j) * width + i;
      (*grid_x)[at] += static_cast<float>((2.0 * i + 1 - width) / width);
      (*grid_y)[at] += y;
    }
  }
}

// A translation by whole pixels (int(magnitude), as torchvision's) samples every pixel at an
// integer position with both interpolations: a copy, with zeros or the fill shifted in.
void shift(const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out, int width, int height, int channels, int dx,
           int dy) {
  const size_t plane = static_cast<size_t>(width) * height;
  for (int c = 0; c < channels; ++c) {
    const uint8_t outside = spec.has_fill ? round_u8(spec.fill[static_cast<size_t>(c)]) : 0;
    for (int y = 0; y < height; ++y) {
      uint8_t* row = out + c * plane + static_cast<size_t>(y) * width;
      const int from_y = y - dy;
      if (from_y < 0 || from_y >= height || std::abs(dx) >= width) {
        std::memset(row, outside, static_cast<size_t>(width));
        continue;
      }
      const uint8_t* src = in + c * plane + static_cast<size_t>(from_y) * width;
      const int begin = std::max(dx, 0);  // first output column that has a source
      const int end = std::min(width, width + dx);
      std::memset(row, outside, static_cast<size_t>(begin));
      std::memcpy(row + begin, src + begin - dx, static_cast<size_t>(end - begin));
      std::memset(row + end, outside, static_cast<size_t>(width - end));
    }
  }
}

}  // namespace stoker::data
