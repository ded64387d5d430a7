// GaussianBlur after torchvision 0.14's functional_tensor.gaussian_blur.
#include "data/transform/gaussian_blur.h"

#include <cmath>
#include <cstddef>
#include <vector>

namespace stoker::data {
namespace {

// torch's "reflect" padding index (the edge not repeated), periodic for any distance.
int reflect(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  int r = i % period;
  if (r < 0) r += period;
  return r < n ? r : period - r;
}

// One pass along lines of `length` elements `step` apart, `lines` of them `line_step` apart:
// out[j] = sum_t kernel[t] * in[reflect(j + t - half)], from `in` (a copy) into `out`.
void convolve(const float* in, float* out, int length, ptrdiff_t step, int lines, ptrdiff_t line_step,
              const std::vector<float>& kernel) {
  const int half = static_cast<int>(kernel.size()) / 2;
  const int taps = static_cast<int>(kernel.size());
  for (int l = 0; l < lines; ++l) {
    const float* src = in + l * line_step;
    float* dst = out + l * line_step;
    for (int j = 0; j < length; ++j) {
      float sum = 0;
      if (j >= half && j + half < length) {  // interior: no reflection
        const float* from = src + (j - half) * step;
        for (int t = 0; t < taps; ++t) sum += kernel[static_cast<size_t>(t)] * from[t * step];
      } else {
        for (int t = 0; t < taps; ++t) sum += kernel[static_cast<size_t>(t)] * src[reflect(j + t - half, length) * step];
      }
      dst[j * step] = sum;
    }
  }
}

}  // namespace

std::vector<float> gaussian_kernel(int size, float sigma) {
  // x = linspace(-(size - 1) / 2, (size - 1) / 2, size): whole numbers for an odd size.
  const float half = static_cast<float>(size - 1) * 0.5f;
  std::vector<float> kernel(static_cast<size_t>(size));
  float sum = 0;
  for (int i = 0; i < size; ++i) {
    const float x = (-half + static_cast<float>(i)) / sigma;  // as torch: (x / sigma).pow(2)
    kernel[static_cast<size_t>(i)] = std::exp(-0.5f * (x * x));
    sum += kernel[static_cast<size_t>(i)];
  }
  for (float& k : kernel) k /= sum;
  return kernel;
}

void gaussian_blur(float* data, int width, int height, int channels, bool planar, int kernel_w,
                   int kernel_h, float sigma, std::vector<float>* scratch) {
  const std::vector<float> kx = gaussian_kernel(kernel_w, sigma);
  const std::vector<float> ky = gaussian_kernel(kernel_h, sigma);
  const size_t n = static_cast<size_t>(width) * height * channels;
  scratch->resize(n);
  const ptrdiff_t px = planar ? 1 : channels;  // between neighbours in a row
  const ptrdiff_t row = static_cast<ptrdiff_t>(width) * px;
  const ptrdiff_t plane = static_cast<ptrdiff_t>(width) * height;
  for (int c = 0; c < channels; ++c) {
    float* image = data + (planar ? c * plane : c);
    float* tmp = scratch->data() + (planar ? c * plane : c);
    convolve(image, tmp, width, px, height, row, kx);   // rows, into scratch
    convolve(tmp, image, height, row, width, px, ky);   // columns, back
  }
}

}  // namespace stoker::data
