// data/transform/resample.h — the resampler behind resample_region(), with the two choices
// SampleTransformer needs that the public function leaves at Pillow's defaults.
#pragma once

#include <vector>

#include "stoker/data/image.h"
#include "stoker/data/transform.h"

namespace stoker::data {

struct ResampleOptions {
  // Pillow's BILINEAR (triangle, support 1) or BICUBIC (Keys' cubic with a = -0.5, support
  // 2) filter, widened by the reduction factor. Bicubic overshoots: as Pillow's 8-bit
  // resize clips after each pass, both passes clamp to [0, 255].
  ResampleFilter filter = ResampleFilter::kBilinear;
  // Mirror the output horizontally. Done by writing the horizontal pass's columns in reverse
  // order, so RandomHorizontalFlip costs nothing.
  bool flip = false;
  // Where filter taps may reach. false: anywhere in the image, as Pillow's resize(box=...)
  // and torchvision's Resize-then-CenterCrop (the crop is of an image resized as a whole).
  // true: only pixels the region covers (floor(x0)..ceil(x1)), as torchvision's
  // RandomResizedCrop, which crops first and resizes the crop; it also makes the result
  // independent of how much margin the decoder left around the crop.
  bool clamp_to_region = false;
  // Output planes (CHW: out_h * out_w floats per channel) instead of interleaved HWC, the
  // layout the rest of SampleTransformer works in.
  bool planar = false;
  // Let the RGB passes use 256-bit vectors where the CPU has AVX (x86-64). The results are
  // bit-identical either way (same multiplies and adds per lane, no FMA); false forces the
  // 128-bit code, for tests and side-by-side timing.
  bool vector256 = true;
};

// See resample_region() in stoker/data/transform.h. `region` is clipped to the image.
// Grows `out` to out_w * out_h * src.channels() floats (HWC, or CHW when planar) and
// `scratch` as needed; filter tables live in thread-local grow-only storage, so a warm call
// allocates nothing.
void resample_region(std::vector<float>* out, std::vector<float>* scratch, const Image& src, const CropRect& region,
                     int out_w, int out_h, const ResampleOptions& options);

}  // namespace stoker::data
