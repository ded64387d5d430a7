// The image between the geometry and the write (stage_image.h).
#include "data/transform/stage_image.h"

#include "data/transform/simd.h"
#include "data/transform/u8_cast.h"
#include "data/transform/warp.h"

namespace stoker::data {

std::vector<uint8_t>* StageImage::planes() {
  std::vector<uint8_t>* image = &planes_[0];
  if (in_planes_) return image;
  image->resize(pixels_ * static_cast<size_t>(channels_));
  const auto stride = static_cast<size_t>(channels_);
  for (int c = 0; c < channels_; ++c) {
    uint8_t* plane = image->data() + c * pixels_;
    if (planar_) {
      const float* from = data_ + c * pixels_;
      simd::for_each_blocked(pixels_, [&](size_t i) { plane[i] = round_half_up_u8(from[i]); });
    } else {
      for (size_t i = 0; i < pixels_; ++i) plane[i] = round_half_up_u8(data_[i * stride + c]);
    }
  }
  in_planes_ = true;
  return image;
}

float* StageImage::floats() {
  if (!in_planes_) return data_;
  const std::vector<uint8_t>& image = planes_[0];
  const auto stride = static_cast<size_t>(channels_);
  for (int c = 0; c < channels_; ++c) {
    const uint8_t* plane = image.data() + c * pixels_;
    if (planar_) {
      float* to = data_ + c * pixels_;
      simd::for_each_blocked(pixels_, [&](size_t i) { to[i] = static_cast<float>(plane[i]); });
    } else {
      for (size_t i = 0; i < pixels_; ++i) data_[i * stride + c] = static_cast<float>(plane[i]);
    }
  }
  in_planes_ = false;
  return data_;
}

void StageImage::warp_planes(const AutoAugmentSpec& warp) {
  std::vector<uint8_t>& image = *planes();
  std::vector<uint8_t>& out = planes_[1];
  out.resize(image.size());
  warp_grid(grids_[0].data(), grids_[1].data(), warp, image.data(), out.data(), width_, height_, channels_);
  image.swap(out);
}

}  // namespace stoker::data
