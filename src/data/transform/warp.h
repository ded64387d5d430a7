// data/transform/warp.h — torchvision's affine()/rotate() on a uint8 tensor: the inverse
// matrix F.affine builds, then its sampling grid and grid_sample, on an image held as planes.
// Used by the automatic augmentations (ShearX/Y, Rotate, TranslateX/Y), RandomRotation and
// RandomAffine.
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

#include "stoker/data/transform.h"

namespace stoker::data {

// _get_inverse_affine_matrix(center, angle, translate, scale, shear) for a centre (cx, cy)
// given relative to the image's centre in pixels, angles in degrees: the 2×3 matrix, row by
// row, that maps an output position to the input position it samples.
std::array<double, 6> inverse_affine(double cx, double cy, double angle, double tx, double ty, double shear_x,
                                     double shear_y, double scale = 1.0);

// Samples `channels` planes of width × height from `in` into `out` (distinct buffers of
// width × height × channels bytes) through `matrix`, with spec.interpolation (nearest or
// bilinear) and, when spec.has_fill, spec.fill for what falls off the image (zeros
// otherwise). The fill's values must be in [0, 255], as the transform parsers check.
void warp(const std::array<double, 6>& matrix, const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out, int width,
          int height, int channels);

// A translation by whole pixels (dx right, dy down): torchvision samples every pixel at an
// integer position then, with either interpolation, so this is a copy with zeros or the fill
// shifted in. `in` and `out` as for warp().
void shift(const AutoAugmentSpec& spec, const uint8_t* in, uint8_t* out, int width, int height, int channels, int dx,
           int dy);

}  // namespace stoker::data
