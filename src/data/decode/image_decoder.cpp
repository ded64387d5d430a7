// ImageDecoder: format dispatch. The codecs live in jpeg_decoder.cpp and png_decoder.cpp.

#include <fmt/format.h>

#include "jpeg_decoder.h"
#include "png_decoder.h"
#include "stoker/data/decode.h"

namespace stoker::data {

struct ImageDecoder::JpegState {
  JpegDecoder decoder;
};

struct ImageDecoder::PngState {
  PngDecoder decoder;
};

namespace {

Status unsupported(std::span<const uint8_t> bytes) {
  const std::string what = describe_content(bytes);
  if (bytes.empty()) return Status::failure(what);  // "empty file"
  return Status::failure(fmt::format("not a JPEG or PNG (looks like {})", what));
}

}  // namespace

ImageDecoder::ImageDecoder(DecodeOptions options) : options_(options) {}

ImageDecoder::~ImageDecoder() = default;

Status ImageDecoder::read_info(std::span<const uint8_t> bytes, ImageInfo* info) {
  switch (sniff_format(bytes)) {
    case ImageFormat::kJpeg:
      if (!jpeg_) jpeg_ = std::make_unique<JpegState>();
      return jpeg_->decoder.read_info(bytes, options_, info);
    case ImageFormat::kPng:
      if (!png_) png_ = std::make_unique<PngState>();
      return png_->decoder.read_info(bytes, options_, info);
    default:
      return unsupported(bytes);
  }
}

Status ImageDecoder::decode(std::span<const uint8_t> bytes, const DecodeRequest& request, DecodedImage* out) {
  if (request.channels != 1 && request.channels != 3) {
    throw Error(fmt::format("DecodeRequest::channels is {}; it must be 1 (gray) or 3 (RGB)", request.channels));
  }
  out->spliced = false;
  switch (sniff_format(bytes)) {
    case ImageFormat::kJpeg:
      if (!jpeg_) jpeg_ = std::make_unique<JpegState>();
      return jpeg_->decoder.decode(bytes, request, options_, out);
    case ImageFormat::kPng:
      if (!png_) png_ = std::make_unique<PngState>();
      return png_->decoder.decode(bytes, request, options_, out);
    default:
      return unsupported(bytes);
  }
}

}  // namespace stoker::data
