// data/transform/gaussian_blur.h — torchvision's GaussianBlur(kernel_size, sigma) as its tensor
// implementation computes it (F.gaussian_blur, which PIL images go through too): a float32
// kernel exp(-x^2 / (2 sigma^2)) over x = -k/2..k/2, normalised, applied with reflect padding
// (the edge pixel not repeated); here separably, rows then columns, on the float image.
//
// Thread safety: safe to call from any threads at once (scratch is the caller's, the kernels
// and the line buffer per thread).
#pragma once

#include <cstddef>
#include <vector>

namespace stoker::data {

// torchvision's _get_gaussian_kernel1d(size, sigma) in float32: `size` weights summing to 1.
std::vector<float> gaussian_kernel(int size, float sigma);

// Blurs `channels` planes of width x height (planar) or one interleaved image (planar false)
// in place with kernels of kernel_w x kernel_h taps (odd) and one sigma for both axes. A
// kernel wider than the image reflects periodically (torch refuses such a padding). `scratch`
// is grown as needed.
void gaussian_blur(float* data, int width, int height, int channels, bool planar, int kernel_w, int kernel_h,
                   float sigma, std::vector<float>* scratch);
// The same with a sigma per axis (torchvision's sigma=[sigma_x, sigma_y]), as ElasticTransform
// blurs its displacement.
void gaussian_blur(float* data, int width, int height, int channels, bool planar, int kernel_w, int kernel_h,
                   float sigma_x, float sigma_y, std::vector<float>* scratch);

}  // namespace stoker::data
