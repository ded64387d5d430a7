// data/transform/stage_image.h — the sample's image between the geometry and the write, as the
// transforms that run there see it (TransformOp::run, ops/registry.h): float in the output's
// layout (planes for NCHW, interleaved for NHWC RGB), or rounded into uint8 planes for the
// steps that work on them as torchvision's uint8 image (the warps, the automatic augmentation,
// the colour operations). It moves between the two only where a step asks for the other, so
// consecutive uint8 steps share one rounding, and the result is the same bytes whichever order
// the conversions fall in (uint8 values survive the round trip).
//
// Ownership: borrows the float image and the sample transformer's buffers for one sample.
// Thread safety: one sample on one thread. Errors: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {

class StageImage {
 public:
  // `data`: the float image of width x height with `channels` (1 or 3), `planar` or not;
  // `planes`: the uint8 image and two spares; `grids`: three float buffers (a sampling grid's
  // x and y, and scratch); `mix` and `scratch`: float buffers. Each is grown as needed.
  StageImage(float* data, int width, int height, int channels, bool planar, std::vector<uint8_t> (&planes)[3],
             std::vector<float> (&grids)[3], std::vector<float>& mix, std::vector<float>& scratch)
      : data_(data),
        width_(width),
        height_(height),
        channels_(channels),
        planar_(planar),
        pixels_(static_cast<size_t>(width) * static_cast<size_t>(height)),
        planes_(planes),
        grids_(grids),
        mix_(mix),
        scratch_(scratch) {}

  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  bool planar() const { return planar_; }
  size_t pixels() const { return pixels_; }

  // The image as floats, converted back from the uint8 planes if they hold it.
  float* floats();
  // The image as `channels` uint8 planes, rounded from the floats (half up) if they hold it.
  std::vector<uint8_t>* planes();
  // Spare buffers for a step's output or scratch: planes 1 and 2, grids 0..2, AugMix's sum,
  // and `scratch` (not the one the resampler holds until the geometry is done).
  std::vector<uint8_t>* spare_planes(int i) { return &planes_[i]; }
  std::vector<float>* grid(int i) { return &grids_[i]; }
  std::vector<float>* mix() { return &mix_; }
  std::vector<float>* scratch() { return &scratch_; }
  // The planes sampled through grid(0) and grid(1) (warp_grid, with `warp`'s interpolation
  // and fill), the result becoming the image.
  void warp_planes(const AutoAugmentSpec& warp);

 private:
  float* data_;
  int width_, height_, channels_;
  bool planar_;
  size_t pixels_;
  std::vector<uint8_t> (&planes_)[3];
  std::vector<float> (&grids_)[3];
  std::vector<float>& mix_;
  std::vector<float>& scratch_;
  bool in_planes_ = false;
};

}  // namespace stoker::data
