// WebP decoding with libwebp: lossy, lossless, with alpha, and the first frame of an animation,
// with the pixels Pillow gives. Pillow reads every WebP through WebPAnimDecoder (RGBA, alpha
// not premultiplied, the first frame not blended with anything): its RGB is what WebPDecode
// gives for a still image, and for an animation the first frame on a canvas of zeros.

#include <fmt/format.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <memory>

#include "decode_rules.h"
#include "whole_image.h"

namespace stoker::data {
namespace {

Status failure_from(VP8StatusCode code) {
  switch (code) {
    case VP8_STATUS_NOT_ENOUGH_DATA:
      return Status::failure("truncated WebP");
    case VP8_STATUS_UNSUPPORTED_FEATURE:
      return Status::failure("unsupported WebP feature");
    case VP8_STATUS_OUT_OF_MEMORY:
      return Status::failure("out of memory decoding a WebP");
    default:
      return Status::failure(fmt::format("corrupt WebP (libwebp status {})", static_cast<int>(code)));
  }
}

Status read_features(std::span<const uint8_t> bytes, const DecodeOptions& options, WebPBitstreamFeatures* f) {
  const VP8StatusCode code = WebPGetFeatures(bytes.data(), bytes.size(), f);
  if (code != VP8_STATUS_OK) return failure_from(code);
  return check_image_size(f->width, f->height, options);
}

struct AnimDecoderDeleter {
  void operator()(WebPAnimDecoder* d) const { WebPAnimDecoderDelete(d); }
};

Status decode_first_frame(std::span<const uint8_t> bytes, Image* rgb) {
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) return Status::failure("libwebp version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData data{bytes.data(), bytes.size()};
  std::unique_ptr<WebPAnimDecoder, AnimDecoderDeleter> decoder(WebPAnimDecoderNew(&data, &options));
  if (!decoder) return Status::failure("corrupt animated WebP (its frames cannot be read)");
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(decoder.get(), &info)) return Status::failure("corrupt animated WebP");
  uint8_t* canvas = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(decoder.get(), &canvas, &timestamp)) {
    return Status::failure("corrupt animated WebP (its first frame does not decode)");
  }
  const int width = static_cast<int>(info.canvas_width), height = static_cast<int>(info.canvas_height);
  rgb->reshape(width, height, 3);
  const size_t pixels = static_cast<size_t>(width) * height;
  uint8_t* out = rgb->data();
  for (size_t i = 0; i < pixels; ++i) std::memcpy(out + 3 * i, canvas + 4 * i, 3);
  return Status::ok_status();
}

}  // namespace

Status read_webp_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  WebPBitstreamFeatures f;
  Status status = read_features(bytes, options, &f);
  if (!status.ok()) return status;
  info->format = ImageFormat::kWebp;
  info->width = f.width;
  info->height = f.height;
  info->channels = f.has_alpha ? 4 : 3;
  return Status::ok_status();
}

Status decode_webp(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb) {
  WebPBitstreamFeatures f;
  Status status = read_features(bytes, options, &f);
  if (!status.ok()) return status;
  if (f.has_animation) return decode_first_frame(bytes, rgb);
  rgb->reshape(f.width, f.height, 3);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) return Status::failure("libwebp version mismatch");
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = rgb->data();
  config.output.u.RGBA.stride = static_cast<int>(rgb->stride());
  config.output.u.RGBA.size = rgb->stride() * static_cast<size_t>(f.height);
  const VP8StatusCode code = WebPDecode(bytes.data(), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (code != VP8_STATUS_OK) return failure_from(code);
  return Status::ok_status();
}

}  // namespace stoker::data
