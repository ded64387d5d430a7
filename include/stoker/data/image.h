// stoker/data/image.h — plain image types shared by the decode and transform stages.
//
// Images are interleaved (HWC) 8-bit. An Image owns a grow-only buffer: reusing one Image per
// worker thread means no heap allocation once it has seen the largest sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stoker::data {

enum class ImageFormat { kUnknown, kJpeg, kPng, kWebp, kBmp, kPnm, kTiff, kGif, kRaw };

const char* to_string(ImageFormat format);

// What a header says about an image, before any pixel is decoded.
struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int width = 0;
  int height = 0;
  int channels = 0;  // channels stored in the file (1 gray, 3 color, 4 CMYK/RGBA, ...)
};

// A rectangle in pixel coordinates of some image; fractional values are allowed because a
// crop chosen on the full-size image lands on fractional coordinates of a DCT-scaled decode.
struct CropRect {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
};

// How PIL resamples an image of its mode, for a chain that converts to RGB only after resizing
// (open_clip's: Resize or RandomResizedCrop, then convert("RGB")). kAsStored: the pixels as
// they are (RGB, L, and every image a decoder converted already). kPremultiplied: 4 channels,
// RGB and straight alpha (PIL's RGBA, and LA as RGBA), resampled with the colours premultiplied
// by alpha and divided by the resampled alpha after, alpha then dropped (PIL's resize of RGBA
// and LA). kNearest: resampled nearest whatever the chain's filter (PIL's resize of P and 1).
enum class PilResample { kAsStored, kPremultiplied, kNearest };

// Interleaved 8-bit image with a grow-only buffer. Rows are tightly packed
// (stride = width * channels).
class Image {
 public:
  void reshape(int width, int height, int channels) {
    width_ = width;
    height_ = height;
    channels_ = channels;
    const size_t need = static_cast<size_t>(width) * height * channels;
    if (pixels_.size() < need) pixels_.resize(need);
  }
  uint8_t* data() { return pixels_.data(); }
  const uint8_t* data() const { return pixels_.data(); }
  uint8_t* row(int y) { return pixels_.data() + static_cast<size_t>(y) * stride(); }
  const uint8_t* row(int y) const { return pixels_.data() + static_cast<size_t>(y) * stride(); }
  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  size_t stride() const { return static_cast<size_t>(width_) * channels_; }
  size_t capacity_bytes() const { return pixels_.capacity(); }

 private:
  std::vector<uint8_t> pixels_;
  int width_ = 0;
  int height_ = 0;
  int channels_ = 0;
};

}  // namespace stoker::data
