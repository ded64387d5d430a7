// PIL's premultiplied and nearest resampling (pil_resample.h), in Pillow's integer arithmetic
// (Convert.c: rgba2rgbA, rgbA2rgba; Geometry.c: ImagingScaleAffine).
#include "data/transform/pil_resample.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "data/transform/u8_cast.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

// Pillow's MULDIV255: a * b / 255, rounded.
inline uint8_t muldiv255(unsigned a, unsigned b) {
  const unsigned t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

inline unsigned divide_by_alpha(unsigned c, unsigned alpha) {
  if (alpha == 0 || alpha == 255) return c;
  return std::min(255u, 255 * c / alpha);
}

// The source indices of `count` outputs along one axis of `size` source pixels, `region` (x0,
// extent) of which is resampled, as Pillow's ImagingScaleAffine tabulates them: a position
// starting at half a step and accumulated step by step in doubles, truncated. `crop_first`: the
// region is an integer box cropped and then resized (RandomResizedCrop); else the whole axis is
// resized to `full` pixels and the outputs are `count` of them from `first` (Resize, then a crop).
void nearest_indices(std::vector<int>* at, double x0, double extent, int count, int size, bool crop_first) {
  at->resize(static_cast<size_t>(count));
  const int full = crop_first ? count : std::max(1, static_cast<int>(std::lround(size * count / extent)));
  const int first = crop_first ? 0 : static_cast<int>(std::lround(x0 * full / size));
  const double step = crop_first ? extent / count : static_cast<double>(size) / full;
  const int base = crop_first ? static_cast<int>(std::lround(x0)) : 0;
  double position = step * 0.5;
  for (int i = 0; i < first + count; ++i, position += step) {
    if (i >= first) (*at)[static_cast<size_t>(i - first)] = std::clamp(base + static_cast<int>(position), 0, size - 1);
  }
}

// An axis as PIL resizes it: `full` outputs over the `size` inputs from `base` (crop_first: the
// region's integer box; else the whole axis), of which `count` from `first` are kept.
struct Axis {
  int base = 0, size = 0, full = 0, first = 0;
};

Axis axis_of(double x0, double extent, int count, int size, bool crop_first) {
  if (crop_first) return {static_cast<int>(std::lround(x0)), static_cast<int>(std::lround(extent)), count, 0};
  const int full = std::max(1, static_cast<int>(std::lround(size * count / extent)));
  return {0, size, full, static_cast<int>(std::lround(x0 * full / size))};
}

// Pillow's 8-bit fixed point (Resample.c): PRECISION_BITS, clip8.
constexpr int kPrecisionBits = 32 - 8 - 2;

inline uint8_t clip8(int64_t v) {
  if (v >= (int64_t{1} << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return static_cast<uint8_t>(v >> kPrecisionBits);
}

double pil_filter(ResampleFilter filter, double x) {
  x = std::fabs(x);
  if (filter == ResampleFilter::kBilinear) return x < 1.0 ? 1.0 - x : 0.0;
  constexpr double a = -0.5;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// Pillow's precompute_coeffs and normalize_coeffs_8bpc for outputs first .. first + count - 1
// of `axis`: each output's first input (in the image, `base` added) and its integer taps.
struct Taps {
  std::vector<int> start, length;
  std::vector<int32_t> weights;  // `stride` a output
  int stride = 0;
};

void pil_taps(const Axis& axis, int count, ResampleFilter filter, Taps* taps) {
  const double scale = static_cast<double>(axis.size) / axis.full;
  const double filterscale = std::max(scale, 1.0);
  const double support = filter_support(filter) * filterscale;
  taps->stride = static_cast<int>(std::ceil(support)) * 2 + 1;
  taps->start.assign(static_cast<size_t>(count), 0);
  taps->length.assign(static_cast<size_t>(count), 0);
  taps->weights.assign(static_cast<size_t>(count) * taps->stride, 0);
  std::vector<double> k(static_cast<size_t>(taps->stride));
  for (int o = 0; o < count; ++o) {
    const double center = (axis.first + o + 0.5) * scale;
    const int xmin = std::max(0, static_cast<int>(center - support + 0.5));
    const int xmax = std::min(axis.size, static_cast<int>(center + support + 0.5)) - xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[static_cast<size_t>(x)] = pil_filter(filter, (x + xmin - center + 0.5) / filterscale);
      ww += k[static_cast<size_t>(x)];
    }
    int32_t* w = &taps->weights[static_cast<size_t>(o) * taps->stride];
    for (int x = 0; x < xmax; ++x) {
      const double v = (ww != 0.0 ? k[static_cast<size_t>(x)] / ww : k[static_cast<size_t>(x)]) * (1 << kPrecisionBits);
      w[x] = static_cast<int32_t>(v < 0 ? v - 0.5 : v + 0.5);
    }
    taps->start[static_cast<size_t>(o)] = axis.base + xmin;
    taps->length[static_cast<size_t>(o)] = std::max(0, xmax);
  }
}

}  // namespace

void premultiply_alpha(const Image& rgba, Image* out) {
  out->reshape(rgba.width(), rgba.height(), 4);
  const size_t pixels = static_cast<size_t>(rgba.width()) * rgba.height();
  const uint8_t* in = rgba.data();
  uint8_t* o = out->data();
  for (size_t p = 0; p < pixels; ++p, in += 4, o += 4) {
    const unsigned alpha = in[3];
    for (int c = 0; c < 3; ++c) o[c] = muldiv255(in[c], alpha);
    o[3] = in[3];
  }
}

void unpremultiply_planes(float* planes, size_t pixels) {
  const float* alpha = planes + 3 * pixels;
  for (size_t p = 0; p < pixels; ++p) {
    const unsigned a = round_half_up_u8(alpha[p]);
    for (int c = 0; c < 3; ++c) {
      float& v = planes[c * pixels + p];
      v = static_cast<float>(divide_by_alpha(round_half_up_u8(v), a));
    }
  }
}

void unpremultiply_alpha(Image* rgba) {
  const size_t pixels = static_cast<size_t>(rgba->width()) * rgba->height();
  uint8_t* p = rgba->data();
  for (size_t i = 0; i < pixels; ++i, p += 4) {
    for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>(divide_by_alpha(p[c], p[3]));
  }
}

void pil_resample_region(std::vector<float>* out, const Image& src, const CropRect& region, int out_w, int out_h,
                         ResampleFilter filter, bool flip, bool planar, bool crop_first) {
  const int channels = src.channels();
  const Axis ax = axis_of(region.x, region.width, out_w, src.width(), crop_first);
  const Axis ay = axis_of(region.y, region.height, out_h, src.height(), crop_first);
  Taps columns, rows;
  pil_taps(ax, out_w, filter, &columns);
  pil_taps(ay, out_h, filter, &rows);
  // Pillow skips the pass of an axis resized to its own size (its pixels as they are).
  const bool horizontal = ax.full != ax.size;
  const bool vertical = ay.full != ay.size;
  const int row_first = rows.start.front();
  const int row_end = rows.start.back() + rows.length.back();
  // The horizontal pass over the rows the vertical one reads, rounded to uint8 as Pillow's.
  const int temp_rows = std::max(0, row_end - row_first);
  std::vector<uint8_t> temp(static_cast<size_t>(temp_rows) * out_w * channels);
  for (int y = 0; y < temp_rows; ++y) {
    const uint8_t* in = src.row(row_first + y);
    uint8_t* t = &temp[static_cast<size_t>(y) * out_w * channels];
    for (int x = 0; x < out_w; ++x) {
      const int start = columns.start[static_cast<size_t>(x)];
      if (!horizontal) {
        std::copy_n(in + static_cast<size_t>(ax.base + ax.first + x) * channels, channels,
                    t + static_cast<size_t>(x) * channels);
        continue;
      }
      const int32_t* w = &columns.weights[static_cast<size_t>(x) * columns.stride];
      for (int c = 0; c < channels; ++c) {
        int64_t ss = int64_t{1} << (kPrecisionBits - 1);
        for (int k = 0; k < columns.length[static_cast<size_t>(x)]; ++k) {
          ss += static_cast<int64_t>(in[static_cast<size_t>(start + k) * channels + c]) * w[k];
        }
        t[static_cast<size_t>(x) * channels + c] = clip8(ss);
      }
    }
  }
  const size_t pixels = static_cast<size_t>(out_w) * out_h;
  out->resize(pixels * static_cast<size_t>(channels));
  float* o = out->data();
  for (int y = 0; y < out_h; ++y) {
    const int start = rows.start[static_cast<size_t>(y)] - row_first;
    const int32_t* w = &rows.weights[static_cast<size_t>(y) * rows.stride];
    for (int x = 0; x < out_w; ++x) {
      const size_t at = static_cast<size_t>(y) * out_w + (flip ? out_w - 1 - x : x);
      for (int c = 0; c < channels; ++c) {
        uint8_t v;
        if (!vertical) {
          v = temp[(static_cast<size_t>(ay.base + ay.first + y - row_first) * out_w + x) * channels + c];
        } else {
          int64_t ss = int64_t{1} << (kPrecisionBits - 1);
          for (int k = 0; k < rows.length[static_cast<size_t>(y)]; ++k) {
            ss += static_cast<int64_t>(temp[(static_cast<size_t>(start + k) * out_w + x) * channels + c]) * w[k];
          }
          v = clip8(ss);
        }
        (planar ? o[c * pixels + at] : o[at * channels + c]) = v;
      }
    }
  }
}

void nearest_region(std::vector<float>* out, const Image& src, const CropRect& region, int out_w, int out_h, bool flip,
                    bool planar, bool crop_first) {
  const int channels = src.channels();
  std::vector<int> columns;
  std::vector<int> rows;
  nearest_indices(&columns, region.x, region.width, out_w, src.width(), crop_first);
  nearest_indices(&rows, region.y, region.height, out_h, src.height(), crop_first);
  if (flip) std::reverse(columns.begin(), columns.end());
  const size_t pixels = static_cast<size_t>(out_w) * out_h;
  out->resize(pixels * static_cast<size_t>(channels));
  float* o = out->data();
  for (int y = 0; y < out_h; ++y) {
    const uint8_t* row = src.row(rows[static_cast<size_t>(y)]);
    for (int x = 0; x < out_w; ++x) {
      const uint8_t* pixel = row + static_cast<size_t>(columns[static_cast<size_t>(x)]) * channels;
      const size_t at = static_cast<size_t>(y) * out_w + x;
      for (int c = 0; c < channels; ++c) {
        (planar ? o[c * pixels + at] : o[at * channels + c]) = pixel[c];
      }
    }
  }
}

}  // namespace stoker::data
