// Deterministic synthetic images and image comparison for the decode/encode/transform tests.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/data/image.h"

namespace stoker::testing {

// A photo-like image: smooth color gradients, a few soft-edged shapes with sharp borders,
// medium-frequency texture and a little pixel noise. Same arguments, same pixels.
data::Image make_photo_like(int width, int height, int channels = 3, uint32_t seed = 1);

// Flat rectangles in at most `colors` distinct colors (palette PNG tests). channels 1..4;
// with 2 or 4 channels the alpha varies per color too.
data::Image make_few_colors(int width, int height, int channels, int colors, uint32_t seed = 1);

// The w x h rectangle at (x, y) of `image`, which must contain it.
data::Image crop_image(const data::Image& image, int x, int y, int w, int h);

// Pillow's convert("L") of an RGB image (ITU-R 601-2 luma, 16-bit fixed point, rounded).
data::Image to_gray(const data::Image& rgb);

// A gray image as RGB (each value three times).
data::Image gray_to_rgb(const data::Image& gray);

// The first `channels` channels of every pixel (drops alpha: RGBA -> RGB, GA -> G).
data::Image keep_channels(const data::Image& image, int channels);

// CMYK whose Pillow-style conversion back to RGB, R = (255 - C) * (255 - K) / 255, gives
// `rgb` (K = 255 - max(R, G, B)). inverted: store 255 - value, as Adobe/Photoshop files do.
data::Image cmyk_from_rgb(const data::Image& rgb, bool inverted);

std::vector<float> to_float(const data::Image& image);

// The image as planes (all of channel 0, then channel 1, ...), as the automatic augmentations
// take it.
std::vector<uint8_t> to_planes(const data::Image& image);

// Absolute differences between two equally long sample arrays.
struct DiffStats {
  double mean = 0;
  double p99 = 0;  // 99th percentile
  double max = 0;
  size_t count = 0;
  std::string str() const;  // "mean 0.81, p99 4, max 9 over 150528 samples"
};
DiffStats diff_stats(std::span<const float> a, std::span<const float> b);
// Both images must have the same shape.
DiffStats diff_stats(const data::Image& a, const data::Image& b);

}  // namespace stoker::testing
