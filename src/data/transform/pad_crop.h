// data/transform/pad_crop.h — the 1:1 geometries: torchvision's RandomCrop (padding,
// pad_if_needed, fill, padding_mode) and its own CenterCrop, as copies of pixels.
//
// torchvision pads a PIL image in two steps, `padding` and then pad_if_needed's shortfall,
// each with the padding mode (np.pad for edge/reflect/symmetric), and crops the result. A
// reflection of a reflection is not one reflection, so the output pixel's source is found
// by undoing the two steps in turn, one axis at a time (padded_source_index). The crop's
// offset and pad_x / pad_y are drawn with the other geometries (random_params.cpp).
#pragma once

#include <vector>

#include "stoker/data/image.h"
#include "stoker/data/transform.h"

namespace stoker::data {

// np.pad's (and torch's) "reflect" index of `i` on an axis of `n` pixels: the edge pixel not
// repeated, periodic for any distance (n = 1: 0).
int reflect_index(int i, int n);

// Where `coord` of an axis padded by `pad2` (pad_if_needed) around an axis padded by
// `pad1_before` / `pad1_after` around `length` source pixels falls in the source: 0..length-1,
// or -1 for the fill (kConstant).
int padded_source_index(int coord, int pad2, int pad1_before, int pad1_after, int length, PaddingMode mode);

// The crop of the padded `image` (the whole image) for `params`, flipped if params.flip, as
// floats in [0, 255]: out_h * out_w * image.channels() values, planes (CHW) when `planar`,
// else interleaved. Grows `out`; `columns` is scratch for the column map.
void copy_padded_crop(std::vector<float>* out, std::vector<int>* columns, const Image& image,
                      const SampleParams& params, const TransformSpec& spec, bool planar);

}  // namespace stoker::data
