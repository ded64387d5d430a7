#include "support/test_images.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace stoker::testing {
namespace {

using data::Image;

uint32_t mix32(uint32_t x) {  // "lowbias32" integer hash
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Deterministic stream of doubles in [0, 1).
class Stream {
 public:
  explicit Stream(uint32_t seed) : state_(mix32(seed * 0x9E3779B9U + 0x1234567U)) {}
  double next() { return (mix32(state_++) >> 8) / double(1 << 24); }
  double range(double lo, double hi) { return lo + (hi - lo) * next(); }

 private:
  uint32_t state_;
};

uint8_t clamp_u8(double v) { return static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

uint8_t luma(int r, int g, int b) { return static_cast<uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16); }

struct Shape {
  double cx, cy, rx, ry, softness;
  bool ellipse;
  double color[3];
};

}  // namespace

Image make_photo_like(int width, int height, int channels, uint32_t seed) {
  constexpr double kTwoPi = 2 * std::numbers::pi;
  Stream rnd(seed);
  double phase[3], freq_x[3], freq_y[3];
  for (int c = 0; c < 3; ++c) {
    phase[c] = rnd.range(0, kTwoPi);
    freq_x[c] = rnd.range(0.3, 1.5);
    freq_y[c] = rnd.range(0.3, 1.5);
  }
  Shape shapes[7];
  for (Shape& s : shapes) {
    s = Shape{rnd.range(0, width),
              rnd.range(0, height),
              rnd.range(0.05, 0.3) * width,
              rnd.range(0.05, 0.3) * height,
              rnd.range(0.4, 3.0),
              rnd.next() < 0.6,
              {rnd.range(10, 245), rnd.range(10, 245), rnd.range(10, 245)}};
  }
  const double period = rnd.range(6, 14), angle = rnd.range(0, std::numbers::pi);
  const double period2 = rnd.range(15, 40), angle2 = rnd.range(0, std::numbers::pi);

  Image image;
  image.reshape(width, height, channels);
  for (int y = 0; y < height; ++y) {
    uint8_t* out = image.row(y);
    for (int x = 0; x < width; ++x) {
      const double u = double(x) / width, v = double(y) / height;
      double rgb[3];
      for (int c = 0; c < 3; ++c) {
        rgb[c] = 128 + 80 * std::sin(kTwoPi * (freq_x[c] * u + freq_y[c] * v) + phase[c]);
      }
      for (const Shape& s : shapes) {
        const double dx = (x + 0.5 - s.cx) / s.rx, dy = (y + 0.5 - s.cy) / s.ry;
        // Approximate distance outside the border, in pixels.
        const double d = s.ellipse ? (std::sqrt(dx * dx + dy * dy) - 1) * std::min(s.rx, s.ry)
                                   : std::max(std::fabs(dx) - 1, std::fabs(dy) - 1) * std::min(s.rx, s.ry);
        const double a = std::clamp(0.5 - d / s.softness, 0.0, 1.0);
        for (int c = 0; c < 3; ++c) rgb[c] += a * (s.color[c] - rgb[c]);
      }
      // Texture in part of the image (like foliage or fabric), plus sensor-like noise.
      const double envelope = 0.5 + 0.5 * std::sin(kTwoPi * (1.3 * u - 0.7 * v));
      const double t1 = std::sin(kTwoPi * (x * std::cos(angle) + y * std::sin(angle)) / period);
      const double t2 = std::sin(kTwoPi * (x * std::cos(angle2) + y * std::sin(angle2)) / period2);
      const double texture = envelope * (14 * t1 + 10 * t2);
      const uint32_t h = mix32(static_cast<uint32_t>(y * 131071 + x) ^ mix32(seed));
      const double noise = ((h & 0xff) / 255.0 - 0.5) * 6;
      uint8_t px[3];
      for (int c = 0; c < 3; ++c) px[c] = clamp_u8(rgb[c] + texture + noise);
      const uint8_t alpha = clamp_u8(255 * (0.2 + 0.8 * u * (1 - v)));
      switch (channels) {
        case 1:
          out[0] = luma(px[0], px[1], px[2]);
          break;
        case 2:
          out[0] = luma(px[0], px[1], px[2]), out[1] = alpha;
          break;
        case 3:
          std::copy(px, px + 3, out);
          break;
        case 4:
          std::copy(px, px + 3, out), out[3] = alpha;
          break;
        default:
          throw std::invalid_argument("make_photo_like: channels must be 1..4");
      }
      out += channels;
    }
  }
  return image;
}

Image make_few_colors(int width, int height, int channels, int colors, uint32_t seed) {
  Stream rnd(seed);
  std::vector<uint8_t> palette(static_cast<size_t>(colors) * 4);
  for (uint8_t& v : palette) v = static_cast<uint8_t>(rnd.range(0, 256));
  Image image;
  image.reshape(width, height, channels);
  const int cell = 7;  // color blocks of 7x7 pixels, chosen by a hash of the block
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const uint32_t h = mix32(static_cast<uint32_t>((y / cell) * 7919 + x / cell) + seed);
      const uint8_t* color = palette.data() + (h % colors) * 4;
      uint8_t* out = image.row(y) + static_cast<size_t>(x) * channels;
      for (int c = 0; c < channels; ++c) out[c] = color[c];
    }
  }
  return image;
}

Image crop_image(const Image& image, int x, int y, int w, int h) {
  if (x < 0 || y < 0 || x + w > image.width() || y + h > image.height()) {
    throw std::invalid_argument("crop_image: rectangle outside the image");
  }
  Image out;
  out.reshape(w, h, image.channels());
  for (int r = 0; r < h; ++r) {
    const uint8_t* src = image.row(y + r) + static_cast<size_t>(x) * image.channels();
    std::copy(src, src + out.stride(), out.row(r));
  }
  return out;
}

Image to_gray(const Image& rgb) {
  Image out;
  out.reshape(rgb.width(), rgb.height(), 1);
  const size_t n = static_cast<size_t>(rgb.width()) * rgb.height();
  const int ch = rgb.channels();
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = rgb.data() + i * ch;
    out.data()[i] = luma(p[0], p[1], p[2]);
  }
  return out;
}

Image gray_to_rgb(const Image& gray) {
  Image out;
  out.reshape(gray.width(), gray.height(), 3);
  const size_t n = static_cast<size_t>(gray.width()) * gray.height();
  for (size_t i = 0; i < n; ++i) {
    std::fill_n(out.data() + i * 3, 3, gray.data()[i * gray.channels()]);
  }
  return out;
}

Image keep_channels(const Image& image, int channels) {
  Image out;
  out.reshape(image.width(), image.height(), channels);
  const size_t n = static_cast<size_t>(image.width()) * image.height();
  for (size_t i = 0; i < n; ++i) {
    for (int c = 0; c < channels; ++c) {
      out.data()[i * channels + c] = image.data()[i * image.channels() + c];
    }
  }
  return out;
}

Image cmyk_from_rgb(const Image& rgb, bool inverted) {
  Image out;
  out.reshape(rgb.width(), rgb.height(), 4);
  const size_t n = static_cast<size_t>(rgb.width()) * rgb.height();
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = rgb.data() + i * 3;
    uint8_t* q = out.data() + i * 4;
    const int max = std::max({p[0], p[1], p[2]});
    const int k = 255 - max;
    for (int c = 0; c < 3; ++c) {
      // (255 - C) = R * 255 / (255 - K); black (max 0) takes C = 0.
      q[c] = max == 0 ? 0 : clamp_u8(255 - p[c] * 255.0 / max);
    }
    q[3] = static_cast<uint8_t>(k);
    if (inverted) {
      for (int c = 0; c < 4; ++c) q[c] = static_cast<uint8_t>(255 - q[c]);
    }
  }
  return out;
}

std::vector<uint8_t> to_planes(const Image& image) {
  const auto w = static_cast<size_t>(image.width());
  const auto h = static_cast<size_t>(image.height());
  const auto channels = static_cast<size_t>(image.channels());
  std::vector<uint8_t> out(w * h * channels);
  for (size_t y = 0; y < h; ++y) {
    const uint8_t* row = image.row(static_cast<int>(y));
    for (size_t x = 0; x < w; ++x) {
      for (size_t c = 0; c < channels; ++c) out[(c * h + y) * w + x] = row[x * channels + c];
    }
  }
  return out;
}

std::vector<float> to_float(const Image& image) {
  const size_t n = static_cast<size_t>(image.width()) * image.height() * image.channels();
  return std::vector<float>(image.data(), image.data() + n);
}

std::string DiffStats::str() const {
  return fmt::format("mean {:.3f}, p99 {:.2f}, max {:.2f} over {} samples", mean, p99, max, count);
}

DiffStats diff_stats(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) throw std::invalid_argument("diff_stats: sizes differ");
  DiffStats stats;
  stats.count = a.size();
  if (a.empty()) return stats;
  std::vector<float> diff(a.size());
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff[i] = std::fabs(a[i] - b[i]);
    sum += diff[i];
  }
  stats.mean = sum / a.size();
  const size_t k = std::min(diff.size() - 1, static_cast<size_t>(0.99 * diff.size()));
  std::nth_element(diff.begin(), diff.begin() + k, diff.end());
  stats.p99 = diff[k];
  stats.max = *std::max_element(diff.begin(), diff.end());
  return stats;
}

DiffStats diff_stats(const Image& a, const Image& b) {
  if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels()) {
    throw std::invalid_argument(fmt::format("diff_stats: shapes differ ({}x{}x{} vs {}x{}x{})", a.width(), a.height(),
                                            a.channels(), b.width(), b.height(), b.channels()));
  }
  const std::vector<float> fa = to_float(a), fb = to_float(b);
  return diff_stats(std::span<const float>(fa), std::span<const float>(fb));
}

}  // namespace stoker::testing
