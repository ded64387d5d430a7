// ImageDecoder: format dispatch. JPEG and PNG decode a window (jpeg_decoder.cpp,
// png_decoder.cpp); BMP, PNM, TIFF, WebP and GIF decode whole (whole_image.h).

#include <fmt/format.h>

#include "crop_window.h"
#include "decode_rules.h"
#include "jpeg_decoder.h"
#include "png_decoder.h"
#include "stoker/data/decode.h"
#include "whole_image.h"

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
  return Status::failure(fmt::format("not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF (looks like {})", what));
}

using ReadInfo = Status (*)(std::span<const uint8_t>, const DecodeOptions&, ImageInfo*);
using DecodeWhole = Status (*)(std::span<const uint8_t>, const DecodeOptions&, Image*);

struct WholeCodec {
  ReadInfo read_info = nullptr;
  DecodeWhole decode = nullptr;
};

// The codec of a format decoded whole; {} for the others.
WholeCodec whole_codec(ImageFormat format) {
  switch (format) {
    case ImageFormat::kWebp:
      return {read_webp_info, decode_webp};
    case ImageFormat::kBmp:
      return {read_bmp_info, decode_bmp};
    case ImageFormat::kPnm:
      return {read_pnm_info, decode_pnm};
    case ImageFormat::kTiff:
      return {read_tiff_info, decode_tiff};
    case ImageFormat::kGif:
      return {read_gif_info, decode_gif};
    default:
      return {};
  }
}

}  // namespace

ImageDecoder::ImageDecoder(DecodeOptions options) : options_(options) {}

ImageDecoder::~ImageDecoder() = default;

Status ImageDecoder::decode_whole(DecodeWhole decode_pixels, std::span<const uint8_t> bytes,
                                  const DecodeRequest& request, DecodedImage* out) {
  Image* rgb = request.channels == 3 ? &out->image : &rgb_;
  Status status = decode_pixels(bytes, options_, rgb);
  if (!status.ok()) return status;
  CropRect crop;
  status = resolve_crop(request.crop, rgb->width(), rgb->height(), &crop);
  if (!status.ok()) return status;
  if (request.channels == 1) {
    out->image.reshape(rgb->width(), rgb->height(), 1);
    for (int y = 0; y < rgb->height(); ++y) {
      rgb_to_gray_row(rgb->row(y), out->image.row(y), static_cast<size_t>(rgb->width()));
    }
  }
  out->crop = crop;
  out->scale_num = 8;
  return Status::ok_status();
}

Status ImageDecoder::read_info(std::span<const uint8_t> bytes, ImageInfo* info) {
  const ImageFormat format = sniff_format(bytes);
  switch (format) {
    case ImageFormat::kJpeg:
      if (!jpeg_) jpeg_ = std::make_unique<JpegState>();
      return jpeg_->decoder.read_info(bytes, options_, info);
    case ImageFormat::kPng:
      if (!png_) png_ = std::make_unique<PngState>();
      return png_->decoder.read_info(bytes, options_, info);
    default:
      if (const WholeCodec codec = whole_codec(format); codec.read_info != nullptr) {
        return codec.read_info(bytes, options_, info);
      }
      return unsupported(bytes);
  }
}

Status ImageDecoder::decode(std::span<const uint8_t> bytes, const DecodeRequest& request, DecodedImage* out) {
  if (request.channels != 1 && request.channels != 3) {
    throw Error(fmt::format("DecodeRequest::channels is {}; it must be 1 (gray) or 3 (RGB)", request.channels));
  }
  out->spliced = false;
  const ImageFormat format = sniff_format(bytes);
  switch (format) {
    case ImageFormat::kJpeg:
      if (!jpeg_) jpeg_ = std::make_unique<JpegState>();
      return jpeg_->decoder.decode(bytes, request, options_, out);
    case ImageFormat::kPng:
      if (!png_) png_ = std::make_unique<PngState>();
      return png_->decoder.decode(bytes, request, options_, out);
    default:
      if (const WholeCodec codec = whole_codec(format); codec.decode != nullptr) {
        return decode_whole(codec.decode, bytes, request, out);
      }
      return unsupported(bytes);
  }
}

}  // namespace stoker::data
