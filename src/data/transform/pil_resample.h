// data/transform/pil_resample.h — PIL's resampling of the modes it does not resize as RGB
// (PilResample, stoker/data/image.h): RGBA premultiplied by its alpha, P and 1 nearest. Used by
// SampleTransformer for a chain that converts to RGB after resizing, as open_clip's does.
// Pure functions on the caller's buffers; thread-safe as those are.
#pragma once

#include <cstddef>
#include <vector>

#include "stoker/data/image.h"
#include "stoker/data/transform.h"

namespace stoker::data {

// `rgba` (4 channels, straight alpha) with each colour multiplied by its alpha as Pillow's
// convert("RGBa") rounds it, into `out` (4 channels, alpha kept).
void premultiply_alpha(const Image& rgba, Image* out);

// The first three of four float planes (`pixels` floats each: premultiplied colours, then
// alpha, as resampled) divided by the alpha, as Pillow's convert("RGBA") from RGBa: each value
// rounded to uint8 first, then 255 * c / a in integers, clipped at 255 (c as it is where a is 0
// or 255). The alpha plane is left as it is.
void unpremultiply_planes(float* planes, size_t pixels);

// The same on an interleaved RGBa image, in place.
void unpremultiply_alpha(Image* rgba);

// `region` of `src` (any channel count) resized to out_w x out_h with `filter` in Pillow's own
// 8-bit arithmetic (Resample.c: double taps normalised and made 22-bit fixed point, the
// horizontal pass rounded to uint8 before the vertical one, a pass that changes nothing
// skipped), so that a premultiplied image's low-alpha pixels, whose colours the division by
// alpha magnifies, come as Pillow's. `crop_first`, `flip`, `planar` and `out` as for
// nearest_region below; the floats are whole numbers.
void pil_resample_region(std::vector<float>* out, const Image& src, const CropRect& region, int out_w, int out_h,
                         ResampleFilter filter, bool flip, bool planar, bool crop_first);

// `region` of `src` (any channel count) sampled nearest to out_w x out_h, as Pillow's resize
// with NEAREST: the source pixel under each output pixel's centre, positions accumulated as
// Pillow's ImagingScaleAffine does (so ties fall its way), clamped to the image. `crop_first`:
// `region` is an integer box cropped, then resized (RandomResizedCrop); else it is the part of
// the image resized whole that a crop of it keeps (Resize, then CenterCrop). Mirrored
// horizontally with `flip`. Floats into `out`, planes (CHW) when `planar`, else interleaved.
void nearest_region(std::vector<float>* out, const Image& src, const CropRect& region, int out_w, int out_h, bool flip,
                    bool planar, bool crop_first);

}  // namespace stoker::data
