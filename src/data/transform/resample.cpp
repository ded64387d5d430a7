// Antialiased bilinear or bicubic resampling, after Pillow's libImaging/Resample.c.
//
// Same filter tables as Pillow's precompute_coeffs (triangle or cubic filter whose support
// grows with the reduction factor, taps normalised to sum 1), but float throughout: Pillow rounds to
// uint8 after each pass, we keep the fractions, so results differ from Pillow by up to about
// one grey level. Two passes:
//  1. horizontal, over just the source rows the vertical pass reads, into `scratch`. The
//     table is padded to one tap count per call so that the kernel can be instantiated per
//     count, and listed in output order (mirrored for a flip, which so costs nothing). For
//     RGB, a tap is a 4-float vector load (the 4th lane, the next pixel's red, is ignored)
//     and each output pixel one 4-float store (its 4th lane overwritten by the next pixel).
//  2. vertical: each output row is a weighted sum of scratch rows, 4 pixels at a time for
//     RGB, deinterleaved into planes on the way out when planar output is asked for.
// Where the CPU has AVX, both RGB passes run twice as wide (two output pixels a step
// horizontally, eight vertically), with bit-identical results.
#include "data/transform/resample.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "data/transform/simd.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

using simd::f32x4;

// Filter taps of one axis, per output position. Output o reads inputs window[o] ..
// window[o] + taps - 1 with weights[o * taps ..]; zero-padded, so a window can start before
// the first real tap (first[o], count[o] of them) to keep it inside the image.
struct FilterTable {
  std::vector<int> window;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;
  // Each weight 4 times, for the RGB kernel's vector multiplies, outputs in pairs: for pair
  // j (outputs 2j, 2j+1) and tap k, 8 floats [w(2j, k) x4 | w(2j+1, k) x4] at 8 (taps j + k),
  // so the 256-bit kernel loads both outputs' weights at once (splat_of()).
  std::vector<float> splat;
  int taps = 0;
};

// Everything a call needs besides its output, kept per thread so that a warm call does not
// allocate. Grow-only: vectors are resized up, never shrunk.
struct ResampleTables {
  FilterTable horizontal;
  FilterTable vertical;
  std::vector<float> row;      // one source row converted to float, plus vector padding
  std::vector<double> kernel;  // weights before normalisation
  std::vector<int> first;      // first real tap and count per output, before reordering
  std::vector<int> count;
};

template <typename T>
void grow(std::vector<T>* v, size_t n) {
  if (v->size() < n) v->resize(n);
}

// Output o's 4-float weight splats (tap k at + 8 k) in FilterTable::splat's pair layout.
inline size_t splat_of(int o, int taps) { return static_cast<size_t>(o / 2) * taps * 8 + (o % 2) * 4; }

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's bicubic_filter: Keys' cubic convolution with a = -0.5.
double cubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// Pillow's precompute_coeffs for the BILINEAR or BICUBIC filter over input [in0, in1) of an
// axis of `in_size` pixels, with taps limited to [lo, hi) (0 <= lo < hi <= in_size). `mirror`
// lists the outputs right to left.
void build_table(FilterTable* table, ResampleTables* work, int in_size, double in0, double in1, int out_size, int lo,
                 int hi, bool mirror, ResampleFilter filter) {
  const bool bicubic = filter == ResampleFilter::kBicubic;
  const double scale = (in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filter_support(filter) * filterscale;  // widened when reducing
  const double ss = 1.0 / filterscale;
  const int max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;

  grow(&work->kernel, static_cast<size_t>(out_size) * max_taps);
  grow(&work->first, out_size);
  grow(&work->count, out_size);
  int taps = 1;
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    // Truncation, not floor, as in Pillow: "(int)(center - support + 0.5)".
    int xmin = std::max(static_cast<int>(center - support + 0.5), lo);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), hi);
    int n = std::min(xmax - xmin, max_taps);
    double* k = work->kernel.data() + static_cast<size_t>(xx) * max_taps;
    double total = 0.0;
    for (int x = 0; x < n; ++x) {
      const double t = (x + xmin - center + 0.5) * ss;
      k[x] = bicubic ? cubic(t) : triangle(t);
      total += k[x];
    }
    if (n <= 0 || total <= 0.0) {
      // Degenerate (empty) region: fall back to the nearest allowed pixel.
      xmin = std::clamp(static_cast<int>(center), lo, hi - 1);
      n = 1;
      k[0] = total = 1.0;
    }
    for (int x = 0; x < n; ++x) k[x] /= total;
    work->first[xx] = xmin;
    work->count[xx] = n;
    taps = std::max(taps, n);
  }

  // Pad every output to `taps` weights; slide windows left where they would leave the image.
  table->taps = taps;
  grow(&table->window, out_size);
  grow(&table->first, out_size);
  grow(&table->count, out_size);
  grow(&table->weights, static_cast<size_t>(out_size) * taps);
  grow(&table->splat, static_cast<size_t>(out_size + 1) / 2 * taps * 8);
  for (int xx = 0; xx < out_size; ++xx) {
    const int o = mirror ? out_size - 1 - xx : xx;
    const int first = work->first[xx];
    const int count = work->count[xx];
    const int start = std::max(0, std::min(first, in_size - taps));
    const double* k = work->kernel.data() + static_cast<size_t>(xx) * max_taps;
    float* w = table->weights.data() + static_cast<size_t>(o) * taps;
    float* splat = table->splat.data() + splat_of(o, taps);
    for (int x = 0; x < taps; ++x) {
      const int real = x - (first - start);
      w[x] = (real >= 0 && real < count) ? static_cast<float>(k[real]) : 0.0f;
      std::fill_n(splat + 8 * x, 4, w[x]);
    }
    table->window[o] = start;
    table->first[o] = first;
    table->count[o] = count;
  }
}

// One RGB row (float, starting at column `in_offset`) through the horizontal filter into
// interleaved `out`, which must have room for one float past the last pixel. kTaps > 0 fixes
// the tap count at compile time (== table.taps); 0 reads it at run time. Pixels from `x` on.
// Always inlined: the AVX kernel ends in it, and as a call from there it would run 128-bit
// (non-VEX) code with the upper YMM halves still dirty (see horizontal_rgb_avx).
template <int kTaps>
inline __attribute__((always_inline)) void horizontal_rgb_from(const float* in, float* out, const FilterTable& table,
                                                               int in_offset, int out_w, int x) {
  const int taps = kTaps > 0 ? kTaps : table.taps;
  const float* splat = table.splat.data();
  const int* window = table.window.data();
  for (; x < out_w; ++x) {
    const float* w = splat + splat_of(x, taps);
    const float* p = in + static_cast<ptrdiff_t>(window[x] - in_offset) * 3;
    f32x4 acc = simd::load4(w) * simd::load4(p);
    for (int k = 1; k < taps; ++k) acc += simd::load4(w + 8 * k) * simd::load4(p + 3 * k);
    simd::store4(out + 3 * x, acc);
  }
}

template <int kTaps>
void horizontal_rgb(const float* in, float* out, const FilterTable& table, int in_offset, int out_w) {
  horizontal_rgb_from<kTaps>(in, out, table, in_offset, out_w, 0);
}

using RgbKernel = void (*)(const float*, float*, const FilterTable&, int, int);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STOKER_RESAMPLE_AVX 1
using f32x8 = float __attribute__((vector_size(32)));

__attribute__((target("avx"))) inline f32x8 load8(const float* p) {
  f32x8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((target("avx"))) inline void store8(float* p, f32x8 v) { std::memcpy(p, &v, sizeof v); }
__attribute__((target("avx"))) inline f32x4 low(f32x8 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3); }
__attribute__((target("avx"))) inline f32x4 high(f32x8 v) { return __builtin_shufflevector(v, v, 4, 5, 6, 7); }
// Clears the upper YMM halves before 128-bit code runs: with them dirty, every SSE
// instruction after the kernel runs several times slower. The compilers add this on an AVX
// function's way out only when optimising (GCC from -O2: -fexpensive-optimizations), so the
// kernels say it themselves and a -O1 or -O0 build behaves the same.
__attribute__((target("avx"))) inline void clean_upper_halves() { __builtin_ia32_vzeroupper(); }

// The 256-bit code below does, lane for lane, the multiplies and adds of the 128-bit code in
// the same order, and target "avx" has no FMA to contract them into: the results are
// bit-identical, so which one runs depends only on the CPU (and ResampleOptions::vector256).
__attribute__((target("avx"))) inline f32x8 concat(f32x4 a, f32x4 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7);
}

// horizontal_rgb two output pixels at a time: one 256-bit load of the pair's weights (the
// splat table's pair layout), the two pixels' taps in the low and high halves.
template <int kTaps>
__attribute__((target("avx"))) void horizontal_rgb_avx(const float* in, float* out, const FilterTable& table,
                                                       int in_offset, int out_w) {
  const int taps = kTaps > 0 ? kTaps : table.taps;
  const float* splat = table.splat.data();
  const int* window = table.window.data();
  int x = 0;
  for (; x + 2 <= out_w; x += 2) {
    const float* w = splat + splat_of(x, taps);
    const float* pa = in + static_cast<ptrdiff_t>(window[x] - in_offset) * 3;
    const float* pb = in + static_cast<ptrdiff_t>(window[x + 1] - in_offset) * 3;
    f32x8 acc = load8(w) * concat(simd::load4(pa), simd::load4(pb));
    for (int k = 1; k < taps; ++k) acc += load8(w + 8 * k) * concat(simd::load4(pa + 3 * k), simd::load4(pb + 3 * k));
    simd::store4(out + 3 * x, low(acc));  // its 4th lane is overwritten by the next store
    simd::store4(out + 3 * x + 3, high(acc));
  }
  // An odd last pixel, inlined (VEX-encoded here). As a tail jump into the 128-bit function,
  // GCC 12 put no vzeroupper before it, and with dirty upper halves every SSE instruction
  // after it (the next row's uint8 -> float conversion) ran several times slower: the whole
  // transform took 187 us per sample instead of 112.
  clean_upper_halves();
  horizontal_rgb_from<kTaps>(in, out, table, in_offset, out_w, x);
}

#endif

// pick(std::integral_constant<int, N>) for N = taps when 1..6 (fixed at compile time), else 0
// (read at run time).
template <typename Pick>
RgbKernel by_taps(int taps, Pick pick) {
  switch (taps) {
    case 1:
      return pick(std::integral_constant<int, 1>{});
    case 2:
      return pick(std::integral_constant<int, 2>{});
    case 3:
      return pick(std::integral_constant<int, 3>{});
    case 4:
      return pick(std::integral_constant<int, 4>{});
    case 5:
      return pick(std::integral_constant<int, 5>{});
    case 6:
      return pick(std::integral_constant<int, 6>{});
    default:
      return pick(std::integral_constant<int, 0>{});
  }
}

// `wide`: the 256-bit kernels (use_avx()).
RgbKernel rgb_kernel(int taps, bool wide) {
#ifdef STOKER_RESAMPLE_AVX
  if (wide) {
    return by_taps(taps, [](auto n) -> RgbKernel { return horizontal_rgb_avx<decltype(n)::value>; });
  }
#endif
  return by_taps(taps, [](auto n) -> RgbKernel { return horizontal_rgb<decltype(n)::value>; });
}

// Any other channel count (1 in practice): interleaved, or row-planar ([c0 ... | c1 ...])
// when the output is planar.
void horizontal_any(const float* in, float* out, const FilterTable& table, int in_offset, int out_w, int channels,
                    bool planar) {
  const int taps = table.taps;
  for (int x = 0; x < out_w; ++x) {
    const float* w = table.weights.data() + static_cast<size_t>(x) * taps;
    const float* p = in + static_cast<ptrdiff_t>(table.window[x] - in_offset) * channels;
    for (int c = 0; c < channels; ++c) {
      float acc = 0.0f;
      for (int k = 0; k < taps; ++k) acc += w[k] * p[k * channels + c];
      out[planar ? c * out_w + x : x * channels + c] = acc;
    }
  }
}

void convert_row(float* __restrict out, const uint8_t* __restrict in, size_t n) {
  simd::for_each_blocked(n, [&](size_t i) { out[i] = in[i]; });
}

void horizontal_pass(const Image& src, const FilterTable& table, int row_begin, int row_end, int out_w, bool planar,
                     bool wide, std::vector<float>* row, float* out) {
  const int channels = src.channels();
  // Columns any window touches: convert just those to float, once per row.
  int col_begin = src.width();
  int col_end = 0;
  for (int x = 0; x < out_w; ++x) {
    col_begin = std::min(col_begin, table.window[x]);
    col_end = std::max(col_end, table.window[x] + table.taps);
  }
  const size_t span = static_cast<size_t>(col_end - col_begin) * channels;
  grow(row, span + 4);  // the RGB kernel's 4-float loads read one float past the last pixel
  float* row_f = row->data();
  std::fill(row_f + span, row_f + span + 4, 0.0f);
  const size_t out_stride = static_cast<size_t>(out_w) * channels;
  const RgbKernel rgb = channels == 3 ? rgb_kernel(table.taps, wide) : nullptr;

  for (int y = row_begin; y < row_end; ++y) {
    convert_row(row_f, src.row(y) + static_cast<size_t>(col_begin) * channels, span);
    float* dst = out + static_cast<size_t>(y - row_begin) * out_stride;
    if (rgb != nullptr) {
      rgb(row_f, dst, table, col_begin, out_w);
    } else {
      horizontal_any(row_f, dst, table, col_begin, out_w, channels, planar);
    }
  }
}

void scale_row(float* __restrict out, const float* __restrict in, float w, size_t n) {
  simd::for_each_blocked(n, [&](size_t i) { out[i] = w * in[i]; });
}

void add_scaled_row(float* __restrict out, const float* __restrict in, float w, size_t n) {
  simd::for_each_blocked(n, [&](size_t i) { out[i] += w * in[i]; });
}

// out[0..n) = sum over k < count of w[k] * in[k * stride + 0..n).
void weighted_sum(float* out, const float* in, size_t stride, const float* w, int count, size_t n) {
  scale_row(out, in, w[0], n);
  for (int k = 1; k < count; ++k) add_scaled_row(out, in + k * stride, w[k], n);
}

#ifdef STOKER_RESAMPLE_AVX
// vertical_rgb_row's loop 8 pixels (24 floats, three 256-bit vectors) at a time. Lane for
// lane the same multiplies and adds in the same order as the 4-pixel loop, and target "avx"
// has no FMA to contract them into, so the results are bit-identical. Returns the pixels
// done; the caller finishes the row with the 4-pixel code.
template <bool kPlanar>
__attribute__((target("avx"))) int vertical_rgb_row_avx(float* out, size_t plane, const float* in, size_t stride,
                                                        const float* w, int count, int out_w) {
  int x = 0;
  for (; x + 8 <= out_w; x += 8) {
    const float* p = in + 3 * x;
    f32x8 a0 = w[0] * load8(p);
    f32x8 a1 = w[0] * load8(p + 8);
    f32x8 a2 = w[0] * load8(p + 16);
    for (int k = 1; k < count; ++k) {
      const float* q = p + k * stride;
      a0 += w[k] * load8(q);
      a1 += w[k] * load8(q + 8);
      a2 += w[k] * load8(q + 16);
    }
    if (kPlanar) {
      // Pixels x..x+3 are floats 0..11 (a0, low a1), x+4..x+7 floats 12..23 (high a1, a2).
      f32x4 r, g, b;
      simd::deinterleave3(low(a0), high(a0), low(a1), &r, &g, &b);
      simd::store4(out + x, r);
      simd::store4(out + plane + x, g);
      simd::store4(out + 2 * plane + x, b);
      simd::deinterleave3(high(a1), low(a2), high(a2), &r, &g, &b);
      simd::store4(out + x + 4, r);
      simd::store4(out + plane + x + 4, g);
      simd::store4(out + 2 * plane + x + 4, b);
    } else {
      store8(out + 3 * x, a0);
      store8(out + 3 * x + 8, a1);
      store8(out + 3 * x + 16, a2);
    }
  }
  clean_upper_halves();
  return x;
}

#endif

// One output row of RGB from interleaved scratch rows `in` (`stride` floats apart), 4 pixels
// (12 floats) at a time, into interleaved `out` or into planes out, out + plane,
// out + 2 * plane. Pixels from `x` on.
template <bool kPlanar>
void vertical_rgb_row(float* out, size_t plane, const float* in, size_t stride, const float* w, int count, int out_w,
                      int x) {
  for (; x + 4 <= out_w; x += 4) {
    const float* p = in + 3 * x;
    f32x4 a0 = w[0] * simd::load4(p);
    f32x4 a1 = w[0] * simd::load4(p + 4);
    f32x4 a2 = w[0] * simd::load4(p + 8);
    for (int k = 1; k < count; ++k) {
      const float* q = p + k * stride;
      a0 += w[k] * simd::load4(q);
      a1 += w[k] * simd::load4(q + 4);
      a2 += w[k] * simd::load4(q + 8);
    }
    if (kPlanar) {
      f32x4 r, g, b;
      simd::deinterleave3(a0, a1, a2, &r, &g, &b);
      simd::store4(out + x, r);
      simd::store4(out + plane + x, g);
      simd::store4(out + 2 * plane + x, b);
    } else {
      simd::store4(out + 3 * x, a0);
      simd::store4(out + 3 * x + 4, a1);
      simd::store4(out + 3 * x + 8, a2);
    }
  }
  for (; x < out_w; ++x) {
    for (int c = 0; c < 3; ++c) {
      float acc = 0.0f;
      for (int k = 0; k < count; ++k) acc += w[k] * in[k * stride + 3 * x + c];
      (kPlanar ? out[c * plane + x] : out[3 * x + c]) = acc;
    }
  }
}

template <bool kPlanar>
void vertical_rgb(float* out, size_t plane, const float* in, size_t stride, const float* w, int count, int out_w,
                  bool wide) {
  int done = 0;
#ifdef STOKER_RESAMPLE_AVX
  if (wide) done = vertical_rgb_row_avx<kPlanar>(out, plane, in, stride, w, count, out_w);
#endif
  vertical_rgb_row<kPlanar>(out, plane, in, stride, w, count, out_w, done);
}

void vertical_pass(const float* in, const FilterTable& table, int row_begin, int out_w, int out_h, int channels,
                   bool planar, bool wide, float* out) {
  const size_t row_len = static_cast<size_t>(out_w) * channels;
  const size_t plane = static_cast<size_t>(out_w) * out_h;
  for (int yy = 0; yy < out_h; ++yy) {
    const float* w = table.weights.data() + static_cast<size_t>(yy) * table.taps + (table.first[yy] - table.window[yy]);
    const int count = table.count[yy];
    const float* rows = in + static_cast<size_t>(table.first[yy] - row_begin) * row_len;
    if (channels == 3 && planar) {
      vertical_rgb<true>(out + static_cast<size_t>(yy) * out_w, plane, rows, row_len, w, count, out_w, wide);
    } else if (channels == 3) {
      vertical_rgb<false>(out + yy * row_len, plane, rows, row_len, w, count, out_w, wide);
    } else if (planar) {
      for (int c = 0; c < channels; ++c) {
        weighted_sum(out + c * plane + static_cast<size_t>(yy) * out_w, rows + c * out_w, row_len, w, count, out_w);
      }
    } else {
      weighted_sum(out + yy * row_len, rows, row_len, w, count, row_len);
    }
  }
}

// Whether the 256-bit kernels run: asked for, and the CPU has AVX (checked once per process).
bool use_avx(bool vector256) {
#ifdef STOKER_RESAMPLE_AVX
  static const bool has_avx = __builtin_cpu_supports("avx");
  return vector256 && has_avx;
#else
  (void)vector256;
  return false;
#endif
}

// [lo, hi) of pixels an axis may read: the whole axis, or what the region covers.
// Negative lobes overshoot [0, 255]; Pillow's 8-bit passes clip there.
void clamp_pixels(float* v, size_t n) {
  simd::for_each_blocked(n, [&](size_t i) { v[i] = std::min(std::max(v[i], 0.0f), 255.0f); });
}

void tap_limits(double x0, double x1, int size, bool clamp_to_region, int* lo, int* hi) {
  if (!clamp_to_region) {
    *lo = 0;
    *hi = size;
    return;
  }
  *lo = std::clamp(static_cast<int>(std::floor(x0)), 0, size - 1);
  *hi = std::clamp(static_cast<int>(std::ceil(x1)), *lo + 1, size);
}

// [start, start + length) clipped to an axis of `size` pixels, as [*a0, *a1).
void clip_axis(double start, double length, int size, double* a0, double* a1) {
  *a0 = std::clamp(start, 0.0, static_cast<double>(size));
  *a1 = std::clamp(start + length, *a0, static_cast<double>(size));
}

}  // namespace

void filter_taps(int in_size, double start, double length, int out_size, bool clamp_to_region, bool mirror,
                 ResampleFilter filter, FilterTaps* out) {
  static thread_local ResampleTables tables;
  double a0 = 0, a1 = 0;
  clip_axis(start, length, in_size, &a0, &a1);
  int lo = 0, hi = 0;
  tap_limits(a0, a1, in_size, clamp_to_region, &lo, &hi);
  FilterTable& table = tables.horizontal;
  build_table(&table, &tables, in_size, a0, a1, out_size, lo, hi, mirror, filter);
  out->taps = table.taps;
  const size_t n = static_cast<size_t>(out_size) * table.taps;
  out->index.resize(n);
  out->weight.assign(table.weights.begin(), table.weights.begin() + static_cast<ptrdiff_t>(n));
  for (int o = 0; o < out_size; ++o) {
    for (int k = 0; k < table.taps; ++k) {
      out->index[static_cast<size_t>(o) * table.taps + k] = std::min(table.window[o] + k, in_size - 1);
    }
  }
}

void resample_region(std::vector<float>* out, std::vector<float>* scratch, const Image& src, const CropRect& region,
                     int out_w, int out_h, const ResampleOptions& options) {
  const int width = src.width();
  const int height = src.height();
  const int channels = src.channels();
  if (out_w <= 0 || out_h <= 0 || width <= 0 || height <= 0 || channels <= 0) return;

  // Clip the region to the image. A non-finite region is a caller bug; read the whole image
  // rather than index with NaN.
  const CropRect r = std::isfinite(region.x + region.y + region.width + region.height)
                         ? region
                         : CropRect{0, 0, static_cast<double>(width), static_cast<double>(height)};
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
  clip_axis(r.x, r.width, width, &x0, &x1);
  clip_axis(r.y, r.height, height, &y0, &y1);

  static thread_local ResampleTables tables;
  int lo = 0;
  int hi = 0;
  tap_limits(x0, x1, width, options.clamp_to_region, &lo, &hi);
  build_table(&tables.horizontal, &tables, width, x0, x1, out_w, lo, hi, options.flip, options.filter);
  tap_limits(y0, y1, height, options.clamp_to_region, &lo, &hi);
  build_table(&tables.vertical, &tables, height, y0, y1, out_h, lo, hi, false, options.filter);

  // Source rows the vertical pass reads.
  int row_begin = height;
  int row_end = 0;
  for (int yy = 0; yy < out_h; ++yy) {
    row_begin = std::min(row_begin, tables.vertical.first[yy]);
    row_end = std::max(row_end, tables.vertical.first[yy] + tables.vertical.count[yy]);
  }

  const size_t row_len = static_cast<size_t>(out_w) * channels;
  // +4: the RGB kernel's store of the last pixel writes one float past it.
  grow(scratch, static_cast<size_t>(row_end - row_begin) * row_len + 4);
  grow(out, static_cast<size_t>(out_h) * row_len);
  const bool wide = use_avx(options.vector256);
  horizontal_pass(src, tables.horizontal, row_begin, row_end, out_w, options.planar, wide, &tables.row,
                  scratch->data());
  const bool overshoots = options.filter == ResampleFilter::kBicubic;
  if (overshoots) clamp_pixels(scratch->data(), static_cast<size_t>(row_end - row_begin) * row_len);
  vertical_pass(scratch->data(), tables.vertical, row_begin, out_w, out_h, channels, options.planar, wide, out->data());
  if (overshoots) clamp_pixels(out->data(), static_cast<size_t>(out_h) * row_len);
}

void resample_region(std::vector<float>* out, std::vector<float>* scratch, const Image& src, const CropRect& region,
                     int out_w, int out_h) {
  resample_region(out, scratch, src, region, out_w, out_h, ResampleOptions{});
}

}  // namespace stoker::data
