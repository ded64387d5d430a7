// Antialiased bilinear resampling, after Pillow's libImaging/Resample.c.
//
// Same filter tables as Pillow's precompute_coeffs (triangle filter whose support grows with
// the reduction factor, taps normalised to sum 1), but float throughout: Pillow rounds to
// uint8 after each pass, we keep the fractions, so results differ from Pillow by up to about
// one grey level. Two passes: horizontal over just the source rows the vertical pass reads
// (into `scratch`), then vertical. The vertical pass is a weighted sum of whole rows and
// vectorises; the horizontal pass uses tables padded to one tap count per call so its inner
// loop has a fixed trip count.
#include "data/transform/resample.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

// Filter taps of one axis. Output o reads inputs window[o] .. window[o] + taps - 1 with
// weights[o * taps ..]; zero-padded, so a window can start before the first real tap
// (first[o]) to keep it inside the image.
struct FilterTable {
  std::vector<int> window;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;
  int taps = 0;
};

// Everything a call needs besides its output, kept per thread so that a warm call does not
// allocate. Grow-only: vectors are resized up, never shrunk.
struct ResampleTables {
  FilterTable horizontal;
  FilterTable vertical;
  std::vector<float> row;      // one source row converted to float
  std::vector<double> kernel;  // one output's weights before normalisation
};

template <typename T>
void grow(std::vector<T>* v, size_t n) {
  if (v->size() < n) v->resize(n);
}

double triangle(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's precompute_coeffs for the BILINEAR filter over input [in0, in1) of an axis of
// `in_size` pixels, with taps limited to [lo, hi) (0 <= lo < hi <= in_size).
void build_table(FilterTable* table, std::vector<double>* kernel, int in_size, double in0,
                 double in1, int out_size, int lo, int hi) {
  const double scale = (in1 - in0) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;  // bilinear: support 1, widened when reducing
  const double ss = 1.0 / filterscale;
  const int max_taps = static_cast<int>(std::ceil(support)) * 2 + 1;

  grow(&table->window, out_size);
  grow(&table->first, out_size);
  grow(&table->count, out_size);
  grow(kernel, static_cast<size_t>(out_size) * max_taps);

  int taps = 1;
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    // Truncation, not floor, as in Pillow: "(int)(center - support + 0.5)".
    int xmin = std::max(static_cast<int>(center - support + 0.5), lo);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), hi);
    int n = std::min(xmax - xmin, max_taps);
    double* k = kernel->data() + static_cast<size_t>(xx) * max_taps;
    double total = 0.0;
    for (int x = 0; x < n; ++x) {
      k[x] = triangle((x + xmin - center + 0.5) * ss);
      total += k[x];
    }
    if (n <= 0 || total <= 0.0) {
      // Degenerate (empty) region: fall back to the nearest allowed pixel.
      xmin = std::clamp(static_cast<int>(center), lo, hi - 1);
      n = 1;
      k[0] = total = 1.0;
    }
    for (int x = 0; x < n; ++x) k[x] /= total;
    table->first[xx] = xmin;
    table->count[xx] = n;
    taps = std::max(taps, n);
  }

  // Pad every output to `taps` weights; slide windows left where they would leave the image.
  table->taps = taps;
  grow(&table->weights, static_cast<size_t>(out_size) * taps);
  for (int xx = 0; xx < out_size; ++xx) {
    const int start = std::max(0, std::min(table->first[xx], in_size - taps));
    const int offset = table->first[xx] - start;
    const double* k = kernel->data() + static_cast<size_t>(xx) * max_taps;
    float* w = table->weights.data() + static_cast<size_t>(xx) * taps;
    for (int x = 0; x < taps; ++x) {
      const int real = x - offset;
      w[x] = (real >= 0 && real < table->count[xx]) ? static_cast<float>(k[real]) : 0.0f;
    }
    table->window[xx] = start;
  }
}

// C is the channel count, fixed at compile time for the usual 1 and 3 so the per-tap work
// unrolls; C == 0 reads it from `channels` (other counts, which the decoder never produces).
template <int C>
void horizontal_row(const float* in, float* out, const FilterTable& table, int in_offset,
                    int out_w, bool flip, int channels) {
  const int taps = table.taps;
  for (int xx = 0; xx < out_w; ++xx) {
    const float* w = table.weights.data() + static_cast<size_t>(xx) * taps;
    if constexpr (C > 0) {
      const float* p = in + static_cast<ptrdiff_t>(table.window[xx] - in_offset) * C;
      float acc[C] = {};
      for (int k = 0; k < taps; ++k) {
        for (int c = 0; c < C; ++c) acc[c] += w[k] * p[k * C + c];
      }
      float* dst = out + static_cast<ptrdiff_t>(flip ? out_w - 1 - xx : xx) * C;
      for (int c = 0; c < C; ++c) dst[c] = acc[c];
    } else {
      const float* p = in + static_cast<ptrdiff_t>(table.window[xx] - in_offset) * channels;
      float* dst = out + static_cast<ptrdiff_t>(flip ? out_w - 1 - xx : xx) * channels;
      for (int c = 0; c < channels; ++c) {
        float acc = 0.0f;
        for (int k = 0; k < taps; ++k) acc += w[k] * p[k * channels + c];
        dst[c] = acc;
      }
    }
  }
}

void horizontal_pass(const Image& src, const FilterTable& table, int row_begin, int row_end,
                     int out_w, bool flip, std::vector<float>* row, float* out) {
  const int channels = src.channels();
  // Columns any window touches: convert just those to float, once per row.
  int col_begin = src.width();
  int col_end = 0;
  for (int xx = 0; xx < out_w; ++xx) {
    col_begin = std::min(col_begin, table.window[xx]);
    col_end = std::max(col_end, table.window[xx] + table.taps);
  }
  const size_t span = static_cast<size_t>(col_end - col_begin) * channels;
  grow(row, span);
  float* row_f = row->data();
  const size_t out_stride = static_cast<size_t>(out_w) * channels;

  for (int y = row_begin; y < row_end; ++y) {
    const uint8_t* in = src.row(y) + static_cast<size_t>(col_begin) * channels;
    for (size_t i = 0; i < span; ++i) row_f[i] = static_cast<float>(in[i]);
    float* dst = out + static_cast<size_t>(y - row_begin) * out_stride;
    switch (channels) {
      case 3: horizontal_row<3>(row_f, dst, table, col_begin, out_w, flip, 3); break;
      case 1: horizontal_row<1>(row_f, dst, table, col_begin, out_w, flip, 1); break;
      default: horizontal_row<0>(row_f, dst, table, col_begin, out_w, flip, channels); break;
    }
  }
}

void vertical_pass(const float* in, const FilterTable& table, int row_begin, int out_h,
                   size_t row_len, float* out) {
  for (int yy = 0; yy < out_h; ++yy) {
    const float* w = table.weights.data() + static_cast<size_t>(yy) * table.taps +
                     (table.first[yy] - table.window[yy]);
    const float* r = in + static_cast<size_t>(table.first[yy] - row_begin) * row_len;
    float* o = out + static_cast<size_t>(yy) * row_len;
    const float w0 = w[0];
    for (size_t i = 0; i < row_len; ++i) o[i] = w0 * r[i];
    for (int k = 1; k < table.count[yy]; ++k) {
      const float wk = w[k];
      const float* rk = r + static_cast<size_t>(k) * row_len;
      for (size_t i = 0; i < row_len; ++i) o[i] += wk * rk[i];
    }
  }
}

// [lo, hi) of pixels an axis may read: the whole axis, or what the region covers.
void tap_limits(double x0, double x1, int size, bool clamp_to_region, int* lo, int* hi) {
  if (!clamp_to_region) {
    *lo = 0;
    *hi = size;
    return;
  }
  *lo = std::clamp(static_cast<int>(std::floor(x0)), 0, size - 1);
  *hi = std::clamp(static_cast<int>(std::ceil(x1)), *lo + 1, size);
}

}  // namespace

void resample_region(std::vector<float>* out, std::vector<float>* scratch, const Image& src,
                     const CropRect& region, int out_w, int out_h,
                     const ResampleOptions& options) {
  const int width = src.width();
  const int height = src.height();
  const int channels = src.channels();
  if (out_w <= 0 || out_h <= 0 || width <= 0 || height <= 0 || channels <= 0) return;

  // Clip the region to the image. A non-finite region is a caller bug; read the whole axis
  // rather than index with NaN.
  const CropRect r =
      std::isfinite(region.x + region.y + region.width + region.height)
          ? region
          : CropRect{0, 0, static_cast<double>(width), static_cast<double>(height)};
  const double x0 = std::clamp(r.x, 0.0, static_cast<double>(width));
  const double y0 = std::clamp(r.y, 0.0, static_cast<double>(height));
  const double x1 = std::clamp(r.x + r.width, x0, static_cast<double>(width));
  const double y1 = std::clamp(r.y + r.height, y0, static_cast<double>(height));

  static thread_local ResampleTables tables;
  int lo = 0;
  int hi = 0;
  tap_limits(x0, x1, width, options.clamp_to_region, &lo, &hi);
  build_table(&tables.horizontal, &tables.kernel, width, x0, x1, out_w, lo, hi);
  tap_limits(y0, y1, height, options.clamp_to_region, &lo, &hi);
  build_table(&tables.vertical, &tables.kernel, height, y0, y1, out_h, lo, hi);

  // Source rows the vertical pass reads.
  int row_begin = height;
  int row_end = 0;
  for (int yy = 0; yy < out_h; ++yy) {
    row_begin = std::min(row_begin, tables.vertical.first[yy]);
    row_end = std::max(row_end, tables.vertical.first[yy] + tables.vertical.count[yy]);
  }

  const size_t row_len = static_cast<size_t>(out_w) * channels;
  grow(scratch, static_cast<size_t>(row_end - row_begin) * row_len);
  grow(out, static_cast<size_t>(out_h) * row_len);
  horizontal_pass(src, tables.horizontal, row_begin, row_end, out_w, options.flip, &tables.row,
                  scratch->data());
  vertical_pass(scratch->data(), tables.vertical, row_begin, out_h, row_len, out->data());
}

void resample_region(std::vector<float>* out, std::vector<float>* scratch, const Image& src,
                     const CropRect& region, int out_w, int out_h) {
  resample_region(out, scratch, src, region, out_w, out_h, ResampleOptions{});
}

}  // namespace stoker::data
