// BoxCrop's geometry (BoxCropSpec, stoker/data/transform.h): the box a sample is cropped
// around, the crop its margin makes, and the crop cut from a decoded image with the fill where
// it leaves the image. The transform's entry (ops/box_crop.cpp) draws with it, the loader cuts
// with it (pipeline/sample_loader.cpp) and box_crop_problem() names what went wrong with it.
//
// Thread safety: free functions on their arguments. Errors: none; a sample without a usable
// box comes back as a BoxCropFault.
#pragma once

#include <array>
#include <span>
#include <vector>

#include "stoker/data/image.h"
#include "stoker/data/target_geometry.h"
#include "stoker/data/transform.h"

namespace stoker::data {

enum class BoxCropFault {
  kNone,
  kNoBox,      // no box, and no visible, finite keypoint
  kNotFinite,  // the first box has a NaN or infinite corner
  kEmpty,      // the box, or the crop its margin makes, has no area
  kOutside,    // the crop lies wholly outside the image
  kTooLarge,   // the crop holds more than kMaxBoxCropPixels pixels
};

// A crop larger than this (8192 x 8192) is refused: it would be cut at that size in memory.
inline constexpr double kMaxBoxCropPixels = 8192.0 * 8192.0;

struct BoxCropRegion {
  BoxCropFault fault = BoxCropFault::kNone;
  bool from_box = false;        // the box is the sample's first box, else its keypoints' extent
  int points = 0;               // keypoints the sample has (visible or not)
  std::array<double, 4> box{};  // x1, y1, x2, y2 in source pixels
  CropRect crop;                // whole pixels; width 0 unless fault is kNone
};

// BoxCrop's crop of a width x height source for `targets` (null: none) with margin k.
BoxCropRegion box_crop_region(const BoxCropSpec& spec, const GeometryTargets* targets, double margin, int width,
                              int height);

// BoxCrop on a clip: for each chosen frame k (frame numbers `chosen`, in order), the index in
// `chosen` of the frame whose box it is cropped around: k itself when usable[k], else the
// usable one whose frame number is nearest (the earlier on a tie), into *from. False, *from
// untouched, when no frame is usable.
bool nearest_usable_frames(std::span<const int> chosen, const std::vector<bool>& usable, std::vector<int>* from);

// Cuts the whole-pixel rectangle (x, y, w, h) of `src` into *out (grown as needed, src's
// channels), `fill` where it leaves `src` (a grey image takes fill[0]).
void cut_with_fill(const Image& src, int x, int y, int w, int h, const std::array<float, 3>& fill, Image* out);

}  // namespace stoker::data
