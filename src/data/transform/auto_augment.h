// The automatic augmentations (torchvision 0.14's autoaugment.py): their operations on a
// uint8 image held as planes, and the draws that pick them.
//
// Each operation follows torchvision's tensor implementation (functional_tensor.py), so a
// test can hold them to torchvision on the same uint8 image: blends compute in float32 and
// truncate to uint8 (as Tensor.to(uint8) does; Pillow's ImageEnhance truncates too), the
// geometric ones sample the grid torchvision's affine()/rotate() build, with grid_sample's
// nearest (round half to even) or bilinear taps, zero padding and, with a fill, the same
// mask blend; Equalize and AutoContrast are per channel.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/transform.h"

namespace stoker::data {

// In torchvision's order of the augmentation spaces (TrivialAugmentWide and RandAugment draw
// an index into the first 14; Invert is AutoAugment's only).
enum class AugmentOp : uint8_t {
  kIdentity,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kRotate,
  kBrightness,
  kColor,
  kContrast,
  kSharpness,
  kPosterize,
  kSolarize,
  kAutoContrast,
  kEqualize,
  kInvert,
};
inline constexpr int kAugmentSpaceOps = 14;  // Identity..Equalize

const char* augment_op_name(AugmentOp op);
// AugMix's space, in its order: 9 operations, 13 with all_ops (index below aug_mix_ops()).
int aug_mix_ops(bool all_ops);
AugmentOp aug_mix_op(int index);
// Whether torchvision draws a sign for op (the geometric and enhancement operations).
bool augment_op_signed(AugmentOp op);
// An AutoAugment policy's 25 sub-policies as text, "Posterize 0.4 8, Rotate 0.6 9; ..."
// (operation, probability, magnitude bin or -1), for comparison with torchvision's table.
std::string auto_augment_policy_text(AutoAugmentPolicy policy);

// Draws the operations and magnitudes for one sample of out_w x out_h into params->augment
// (RandAugment and AutoAugment scale TranslateX/Y by the width/height). Draws nothing when
// spec.kind is kNone. The order of draws is torchvision's:
//   TrivialAugmentWide: op (below 14); the bin (below num_magnitude_bins) for ops with
//     magnitudes; the sign (below 2, 1 = negative) for signed ops.
//   RandAugment: num_ops times: op (below 14); the sign for signed ops.
//   AutoAugment: the sub-policy (below 25), two uniforms (apply when <= its probability),
//     two signs (below 2, 0 = negative), all drawn whether used or not.
//   AugMix: see draw_aug_mix in auto_augment.cpp (Dirichlet weights, then the chains).
void draw_auto_augment(const AutoAugmentSpec& spec, int out_w, int out_h, SampleRng& rng, SampleParams* params);

// The magnitude torchvision's augmentation space gives op at `bin` (num_bins bins; AutoAugment
// and AugMix use 10), before the sign: torch.linspace in float32, Posterize's bit counts,
// Solarize's thresholds; 0 for operations without magnitudes. `kind` picks TrivialAugmentWide's
// space, AugMix's, or the RandAugment/AutoAugment one.
float augment_magnitude(AutoAugmentKind kind, AugmentOp op, int bin, int num_bins, int width, int height);

// AugMix: each of params.chains chains applied to a copy of `image` (in `chain`), summed with
// the image by params.mix_weight in float32 and truncated back into `image`, as
// AugMix.forward does on a uint8 tensor. `chain`, `scratch` and `mix` are grown as needed.
void apply_aug_mix(const SampleParams& params, const AutoAugmentSpec& spec, std::vector<uint8_t>* image,
                   std::vector<uint8_t>* chain, std::vector<uint8_t>* scratch, std::vector<float>* mix, int width,
                   int height, int channels);

// The warp settings RandomRotation and RandomAffine call F.rotate / F.affine with on a
// tensor: their interpolation and a fill always given (0 by default).
inline AutoAugmentSpec filled_warp(Interpolation interpolation, const std::array<float, 3>& fill) {
  AutoAugmentSpec spec;
  spec.interpolation = interpolation;
  spec.has_fill = true;
  spec.fill = fill;
  return spec;
}

// RandomAffine's warp: F.affine(image, params.affine_angle, [translate_x, translate_y],
// affine_scale, [shear_x, shear_y]) about the centre, with spec's interpolation and fill, in
// place; `scratch` is grown as needed and reused.
void apply_affine(const SampleParams& params, const AutoAugmentSpec& spec, std::vector<uint8_t>* image,
                  std::vector<uint8_t>* scratch, int width, int height, int channels);

// Applies op with its signed magnitude to `image`, `channels` planes of width x height,
// in place; `scratch` is grown as needed and reused.
void apply_augment_op(AugmentOp op, float magnitude, const AutoAugmentSpec& spec, std::vector<uint8_t>* image,
                      std::vector<uint8_t>* scratch, int width, int height, int channels);

// One of the single-operation colour transforms (RandomInvert ... RandomEqualize) with its
// ColorOpSpec::value, on `image` as apply_augment_op: the same operation torchvision's
// functional call does (RandomAdjustSharpness(f) is the Sharpness operation at f - 1).
void apply_color_op(ColorOp op, double value, std::vector<uint8_t>* image, std::vector<uint8_t>* scratch, int width,
                    int height, int channels);

}  // namespace stoker::data
