// RandomCrop and the 1:1 CenterCrop: torchvision 0.14's transforms.RandomCrop.forward and
// functional.center_crop on a PIL image, as index arithmetic on the unpadded image.
#include "data/transform/pad_crop.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace stoker::data {
namespace {

// One padding step's mapping: a coordinate of the padded axis, already shifted so that the
// unpadded axis starts at 0, to 0..length-1, or -1 for the fill. np.pad's modes, reflections
// repeating periodically for padding wider than the axis (as np.pad's iterated padding does).
int unpad(int x, int length, PaddingMode mode) {
  if (x >= 0 && x < length) return x;
  switch (mode) {
    case PaddingMode::kConstant:
      return -1;
    case PaddingMode::kEdge:
      return std::clamp(x, 0, length - 1);
    case PaddingMode::kReflect:
      return reflect_index(x, length);
    case PaddingMode::kSymmetric: {
      const int period = 2 * length;
      int r = x % period;
      if (r < 0) r += period;
      return r < length ? r : period - 1 - r;
    }
  }
  return -1;
}

}  // namespace

int reflect_index(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  int r = i % period;
  if (r < 0) r += period;
  return r < n ? r : period - r;
}

int padded_source_index(int coord, int pad2, int pad1_before, int pad1_after, int length, PaddingMode mode) {
  const int once = unpad(coord - pad2, length + pad1_before + pad1_after, mode);
  if (once < 0) return -1;
  return unpad(once - pad1_before, length, mode);
}

void copy_padded_crop(std::vector<float>* out, std::vector<int>* columns, const Image& image,
                      const SampleParams& params, const TransformSpec& spec, bool planar) {
  const int out_w = spec.out_width;
  const int out_h = spec.out_height;
  const int channels = image.channels();
  const auto pixels = static_cast<size_t>(out_w) * static_cast<size_t>(out_h);
  out->resize(pixels * static_cast<size_t>(channels));
  const bool center = spec.geometry == Geometry::kCenterCrop || spec.geometry == Geometry::kResizeCenterCrop;
  const PadSpec none;
  const PadSpec& pad = center ? none : spec.pad;  // CenterCrop: zeros, in pad_x / pad_y only
  const auto left = static_cast<int>(params.crop.x);
  const auto top = static_cast<int>(params.crop.y);

  // Source column of each output column (-1: fill), the flip folded in.
  columns->resize(static_cast<size_t>(out_w));
  for (int x = 0; x < out_w; ++x) {
    const int from = left + (params.flip ? out_w - 1 - x : x);
    (*columns)[static_cast<size_t>(x)] =
        padded_source_index(from, params.pad_x, pad.left, pad.right, image.width(), pad.mode);
  }
  // Whole pixel values, as torchvision's _parse_fill makes them for a PIL image (int(x)). A
  // grey image takes an RGB fill as its L (torchvision would refuse three values for it).
  float fill[4] = {std::trunc(pad.fill[0]), std::trunc(pad.fill[1]), std::trunc(pad.fill[2]), 0};
  if (channels == 1 && !(fill[0] == fill[1] && fill[1] == fill[2])) {
    fill[0] = std::nearbyint(0.299f * fill[0] + 0.587f * fill[1] + 0.114f * fill[2]);
  }
  float* data = out->data();
  for (int y = 0; y < out_h; ++y) {
    const int sy = padded_source_index(top + y, params.pad_y, pad.top, pad.bottom, image.height(), pad.mode);
    const uint8_t* row = sy >= 0 ? image.row(sy) : nullptr;
    for (int x = 0; x < out_w; ++x) {
      const int sx = (*columns)[static_cast<size_t>(x)];
      const uint8_t* pixel = row != nullptr && sx >= 0 ? row + static_cast<size_t>(sx) * channels : nullptr;
      const size_t at = static_cast<size_t>(y) * out_w + x;
      for (int c = 0; c < channels; ++c) {
        const float v = pixel != nullptr ? static_cast<float>(pixel[c]) : fill[std::min(c, 3)];
        if (planar) {
          data[c * pixels + at] = v;
        } else {
          data[at * channels + c] = v;
        }
      }
    }
  }
}

}  // namespace stoker::data
