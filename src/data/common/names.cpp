#include "stoker/data/image.h"
#include "stoker/data/transform.h"

namespace stoker::data {

const char* to_string(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kWebp:
      return "WebP";
    case ImageFormat::kBmp:
      return "BMP";
    case ImageFormat::kPnm:
      return "PNM";
    case ImageFormat::kTiff:
      return "TIFF";
    case ImageFormat::kGif:
      return "GIF";
    case ImageFormat::kRaw:
      return "raw";
    case ImageFormat::kUnknown:
      break;
  }
  return "unknown";
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::kUint8:
      return "uint8";
    case DType::kFloat32:
      return "float32";
    case DType::kFloat16:
      return "float16";
  }
  return "?";
}

const char* to_string(Layout layout) { return layout == Layout::kNCHW ? "NCHW" : "NHWC"; }

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kUint8:
      return 1;
    case DType::kFloat32:
      return 4;
    case DType::kFloat16:
      return 2;
  }
  return 1;
}

}  // namespace stoker::data
