// BoxCrop's geometry (box_crop.h).
#include "data/transform/box_crop.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace stoker::data {

namespace {

// The box to crop around: the first box, else the extent of the visible, finite keypoints.
BoxCropFault subject_box(const GeometryTargets& targets, BoxCropRegion* r) {
  if (targets.boxes.size() >= 5) {
    r->from_box = true;
    for (int k = 0; k < 4; ++k) r->box[static_cast<size_t>(k)] = targets.boxes[static_cast<size_t>(k)];
    for (const double v : r->box) {
      if (!std::isfinite(v)) return BoxCropFault::kNotFinite;
    }
    return BoxCropFault::kNone;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  r->box = {kInf, kInf, -kInf, -kInf};
  bool any = false;
  const std::vector<float>& p = targets.points;
  r->points = static_cast<int>(p.size() / 3);
  for (size_t k = 0; k + 2 < p.size(); k += 3) {
    if (p[k + 2] == 0 || !std::isfinite(p[k]) || !std::isfinite(p[k + 1])) continue;
    any = true;
    r->box[0] = std::min(r->box[0], static_cast<double>(p[k]));
    r->box[1] = std::min(r->box[1], static_cast<double>(p[k + 1]));
    r->box[2] = std::max(r->box[2], static_cast<double>(p[k]));
    r->box[3] = std::max(r->box[3], static_cast<double>(p[k + 1]));
  }
  return any ? BoxCropFault::kNone : BoxCropFault::kNoBox;
}

}  // namespace

BoxCropRegion box_crop_region(const BoxCropSpec& spec, const GeometryTargets* targets, double margin, int width,
                              int height) {
  BoxCropRegion r;
  r.fault = targets != nullptr ? subject_box(*targets, &r) : BoxCropFault::kNoBox;
  if (r.fault != BoxCropFault::kNone) return r;
  const double w = r.box[2] - r.box[0], h = r.box[3] - r.box[1];
  if (!(w > 0 && h > 0)) {
    r.fault = BoxCropFault::kEmpty;
    return r;
  }
  // Each edge moved out by its side's share of k times the box's side, then truncated toward
  // zero, as int() truncates in the recipes this follows.
  const double left = std::trunc(r.box[0] - spec.sides[0] * margin * w);
  const double top = std::trunc(r.box[1] - spec.sides[1] * margin * h);
  const double right = std::trunc(r.box[2] + spec.sides[2] * margin * w);
  const double bottom = std::trunc(r.box[3] + spec.sides[3] * margin * h);
  if (!(right > left && bottom > top)) {
    r.fault = BoxCropFault::kEmpty;  // a box narrower than a pixel, truncated away
  } else if ((right - left) * (bottom - top) > kMaxBoxCropPixels) {
    r.fault = BoxCropFault::kTooLarge;
  } else if (right <= 0 || bottom <= 0 || left >= width || top >= height) {
    r.fault = BoxCropFault::kOutside;
  }
  // The crop, even when faulty, so that a message can name it; the draw keeps width 0 then.
  r.crop = {left, top, right - left, bottom - top};
  return r;
}

bool nearest_usable_frames(std::span<const int> chosen, const std::vector<bool>& usable, std::vector<int>* from) {
  if (std::find(usable.begin(), usable.end(), true) == usable.end()) return false;
  from->resize(chosen.size());
  for (size_t k = 0; k < chosen.size(); ++k) {
    size_t best = k;
    for (size_t j = 0; j < chosen.size() && !usable[k]; ++j) {
      if (!usable[j]) continue;
      const int distance = std::abs(chosen[j] - chosen[k]);
      if (!usable[best] || distance < std::abs(chosen[best] - chosen[k])) best = j;
    }
    (*from)[k] = static_cast<int>(best);
  }
  return true;
}

void cut_with_fill(const Image& src, int x, int y, int w, int h, const std::array<float, 3>& fill, Image* out) {
  const int channels = src.channels();
  out->reshape(w, h, channels);
  // Whole pixel values, as Pad's fill; a grey image takes an RGB fill as its L.
  uint8_t value[3];
  for (int c = 0; c < 3; ++c) {
    value[c] = static_cast<uint8_t>(std::clamp(std::trunc(fill[static_cast<size_t>(c)]), 0.0f, 255.0f));
  }
  if (channels == 1 && !(value[0] == value[1] && value[1] == value[2])) {
    value[0] = static_cast<uint8_t>(std::nearbyint(0.299f * value[0] + 0.587f * value[1] + 0.114f * value[2]));
  }
  // The columns of the cut that lie in `src`: [x0, x1) of the output.
  const int x0 = std::clamp(-x, 0, w), x1 = std::clamp(src.width() - x, x0, w);
  const size_t pixel = static_cast<size_t>(channels);
  for (int row = 0; row < h; ++row) {
    uint8_t* dst = out->row(row);
    for (int col = 0; col < w; ++col) std::memcpy(dst + static_cast<size_t>(col) * pixel, value, pixel);
    const int sy = y + row;
    if (sy >= 0 && sy < src.height() && x1 > x0) {
      std::memcpy(dst + static_cast<size_t>(x0) * pixel, src.row(sy) + static_cast<size_t>(x + x0) * pixel,
                  static_cast<size_t>(x1 - x0) * pixel);
    }
  }
}

std::string box_crop_problem(const TransformSpec& spec, const SampleParams& params, const GeometryTargets& targets,
                             int width, int height) {
  if (!spec.box_crop.enabled() || params.subject.width > 0) return "";
  const BoxCropRegion r = box_crop_region(spec.box_crop, &targets, params.subject_margin, width, height);
  const std::string box =
      fmt::format("{} ({:g}, {:g}, {:g}, {:g})", r.from_box ? "BoxCrop's box" : "BoxCrop's box around the keypoints",
                  r.box[0], r.box[1], r.box[2], r.box[3]);
  const CropRect& c = r.crop;
  switch (r.fault) {
    case BoxCropFault::kNone:
      return "";
    case BoxCropFault::kNoBox:
      return fmt::format(
          "BoxCrop has no box to crop around: the sample has no box, and none of its {} keypoints is visible and "
          "finite; give it a box or keypoints, or leave it out",
          r.points);
    case BoxCropFault::kNotFinite:
      return box + " is not finite; give the sample a box of numbers, or leave it out";
    case BoxCropFault::kEmpty:
      return box +
             (r.box[2] > r.box[0] && r.box[3] > r.box[1] ? " is thinner than a pixel once its edges are whole pixels"
                                                         : " has no area (x2 <= x1 or y2 <= y1)") +
             "; BoxCrop crops around a box with an area";
    case BoxCropFault::kOutside:
      return fmt::format(
          "{} with margin {:g} makes the crop (x={:g}, y={:g}, w={:g}, h={:g}), wholly outside the {}x{} image", box,
          params.subject_margin, c.x, c.y, c.width, c.height, width, height);
    case BoxCropFault::kTooLarge:
      return fmt::format("{} with margin {:g} makes a {:g}x{:g} crop, more pixels than 8192x8192", box,
                         params.subject_margin, c.width, c.height);
  }
  return "";
}

}  // namespace stoker::data
