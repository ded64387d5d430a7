// data/transform/warp.h — torchvision's affine()/rotate() on a uint8 tensor: the inverse
// matrix F.affine builds, then its sampling grid and grid_sample, on an image held as planes.
// Used by the automatic augmentations (ShearX/Y, Rotate, TranslateX/Y), RandomRotation and
// RandomAffine; warp_grid() samples any grid, for RandomPerspective (F.perspective's grid) and
// ElasticTransform (the identity grid plus a blurred random displacement).
//
// warp() samples each output pixel where torchvision's _gen_affine_grid puts it, with
// grid_sample(align_corners=False, padding_mode="zeros") and _apply_grid_transform's fill
// (the blend with a mask image) and rounds to uint8 half to even. The float32 arithmetic is
// the one-pixel-at-a-time code in the order torchvision's CPU kernels use; the vector paths
// give the same bytes (tests/unit/data/warp_test.cpp holds them to a per-pixel reference).
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {

// _get_inverse_affine_matrix(center, angle, translate, scale, shear) for a centre (cx, cy)
// given relative to the image's centre in pixels, angles in degrees: the 2×3 matrix, row by
// row, that maps an output position to the input position it samples.
std::array<double, 6> inverse_affine(double cx, double cy, double angle, double tx, double ty, double shear_x,
                                     double shear_y, double scale = 1.0);

// Samples `channels` planes of width × height from `in` into `out` (distinct buffers of
// width × height × channels bytes) through `matrix`, with spec.interpolation (nearest,
// bilinear, or grid_sample's bicubic with its values clamped to [0, 255], one pixel at a time)
// and, when spec.has_fill, spec.fill for what falls off the image (zeros otherwise). The fill's
// values must be in [0, 255], as the transform parsers check.
void warp(const std::array<double, 6>& matrix, const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out, int width,
          int height, int channels);

// warp() for a grid given per pixel: output pixel i samples at (grid_x[i], grid_y[i]), in
// grid_sample's normalised coordinates (-1 and 1 the image's outer edges), with the same
// arithmetic as warp() (per pixel, no vector paths), nearest or bilinear (bicubic is read as
// nearest: the parsers refuse it for these warps). `in` and `out` as for warp().
void warp_grid(const float* grid_x, const float* grid_y, const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out,
               int width, int height, int channels);

// torchvision's _get_perspective_coeffs(startpoints, endpoints) for RandomPerspective's
// corners (SampleParams::corners, the end points; the start points are the image's corners):
// the 8 coefficients mapping an output position to the input position it samples. torch
// solves the system in float32 by least squares; here in double, rounded to float32.
std::array<float, 8> perspective_coeffs(const std::array<int, 8>& corners, int width, int height);

// torchvision's _perspective_grid(coeffs, width, height) in float32, into grid_x and grid_y
// (width * height each, grown as needed).
void perspective_grid(const std::array<float, 8>& coeffs, int width, int height, std::vector<float>* grid_x,
                      std::vector<float>* grid_y);

// ElasticTransform's grid for a sample: the displacement get_params makes (noise uniform in
// [-1, 1) from a SampleRng seeded by `seed`, x's width * height values then y's; each blurred
// with a kernel of int(8 sigma + 1) taps, made odd, and both sigmas; x scaled by alpha_x /
// height, y by alpha_y / width) added to _create_identity_grid's. `scratch` is grown as needed.
void elastic_grid(const ElasticSpec& spec, uint64_t seed, int width, int height, std::vector<float>* grid_x,
                  std::vector<float>* grid_y, std::vector<float>* scratch);

// A translation by whole pixels (dx right, dy down): torchvision samples every pixel at an
// integer position then, with either interpolation, so this is a copy with zeros or the fill
// shifted in. `in` and `out` as for warp().
void shift(const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out, int width, int height, int channels, int dx,
           int dy);

}  // namespace stoker::data
