// GaussianBlur after torchvision 0.14's functional_tensor.gaussian_blur.
#include "data/transform/gaussian_blur.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "data/transform/pad_crop.h"
#include "data/transform/simd.h"

namespace stoker::data {
namespace {

// The horizontal pass: each row copied once with its reflected margins into `line`, then
// out[i] = sum_t kernel[t] * line[i + t * step] over the row's floats (`step` per pixel: 1 for
// a plane, the channels when interleaved), one tap at a time over the whole row so the inner
// loop is contiguous and vectorises. Each element still sums its taps in order from 0.
void blur_rows(const float* in, float* out, int width, int height, int step, const std::vector<float>& kernel,
               std::vector<float>* line) {
  const int half = static_cast<int>(kernel.size()) / 2;
  const size_t row = static_cast<size_t>(width) * step;
  line->resize(static_cast<size_t>(width + 2 * half) * step);
  for (int y = 0; y < height; ++y) {
    const float* src = in + y * row;
    float* dst = out + y * row;
    for (int x = -half; x < width + half; ++x) {
      std::copy_n(src + static_cast<size_t>(reflect_index(x, width)) * step, step, line->data() + (x + half) * step);
    }
    std::fill_n(dst, row, 0.0f);
    for (size_t t = 0; t < kernel.size(); ++t) {
      const float k = kernel[t];
      const float* from = line->data() + t * step;
      simd::for_each_blocked(row, [&](size_t i) { dst[i] += k * from[i]; });
    }
  }
}

// The vertical pass: each output row the taps' rows (reflected at the top and bottom) times
// their weights, accumulated in order over contiguous rows of `row` floats.
void blur_columns(const float* in, float* out, size_t row, int height, const std::vector<float>& kernel) {
  const int half = static_cast<int>(kernel.size()) / 2;
  for (int y = 0; y < height; ++y) {
    float* dst = out + y * row;
    std::fill_n(dst, row, 0.0f);
    for (int t = 0; t < static_cast<int>(kernel.size()); ++t) {
      const float k = kernel[static_cast<size_t>(t)];
      const float* from = in + static_cast<size_t>(reflect_index(y + t - half, height)) * row;
      simd::for_each_blocked(row, [&](size_t i) { dst[i] += k * from[i]; });
    }
  }
}

// torchvision's _get_gaussian_kernel1d into `kernel` (grown, never shrunk in capacity).
void fill_kernel(int size, float sigma, std::vector<float>* kernel) {
  // x = linspace(-(size - 1) / 2, (size - 1) / 2, size): whole numbers for an odd size.
  const float half = static_cast<float>(size - 1) * 0.5f;
  kernel->resize(static_cast<size_t>(size));
  float sum = 0;
  for (int i = 0; i < size; ++i) {
    const float x = (-half + static_cast<float>(i)) / sigma;  // as torch: (x / sigma).pow(2)
    (*kernel)[static_cast<size_t>(i)] = std::exp(-0.5f * (x * x));
    sum += (*kernel)[static_cast<size_t>(i)];
  }
  for (float& k : *kernel) k /= sum;
}

}  // namespace

std::vector<float> gaussian_kernel(int size, float sigma) {
  std::vector<float> kernel;
  fill_kernel(size, sigma, &kernel);
  return kernel;
}

void gaussian_blur(float* data, int width, int height, int channels, bool planar, int kernel_w, int kernel_h,
                   float sigma, std::vector<float>* scratch) {
  gaussian_blur(data, width, height, channels, planar, kernel_w, kernel_h, sigma, sigma, scratch);
}

void gaussian_blur(float* data, int width, int height, int channels, bool planar, int kernel_w, int kernel_h,
                   float sigma_x, float sigma_y, std::vector<float>* scratch) {
  // Per thread and grow-only, as the rest of a worker's scratch: no allocation once warm.
  thread_local std::vector<float> kx, ky, line;
  fill_kernel(kernel_w, sigma_x, &kx);
  fill_kernel(kernel_h, sigma_y, &ky);
  const size_t pixels = static_cast<size_t>(width) * height;
  scratch->resize(pixels * channels);
  // A plane at a time, or the interleaved image as one plane of `channels` floats per pixel.
  const int planes = planar ? channels : 1;
  const int step = planar ? 1 : channels;
  const size_t plane = pixels * step;
  for (int c = 0; c < planes; ++c) {
    float* image = data + c * plane;
    float* tmp = scratch->data() + c * plane;
    blur_rows(image, tmp, width, height, step, kx, &line);                    // rows, into scratch
    blur_columns(tmp, image, static_cast<size_t>(width) * step, height, ky);  // columns, back
  }
}

}  // namespace stoker::data
