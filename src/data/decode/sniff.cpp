// Format recognition from magic bytes. Only JPEG and PNG are decoded; the other names exist
// so that a failure can say what the file actually is ("looks like WebP"), which is usually
// the whole diagnosis (a renamed file, an HTML error page saved as .jpg).

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "stoker/data/decode.h"

namespace stoker::data {
namespace {

bool starts_with(std::span<const uint8_t> bytes, const char* magic, size_t magic_size,
                 size_t offset = 0) {
  return bytes.size() >= offset + magic_size &&
         std::memcmp(bytes.data() + offset, magic, magic_size) == 0;
}

template <size_t N>
bool starts_with(std::span<const uint8_t> bytes, const char (&magic)[N], size_t offset = 0) {
  return starts_with(bytes, magic, N - 1, offset);  // N - 1: no terminating NUL
}

// Plain text (ASCII or UTF-8): no control bytes other than whitespace in the first 512.
bool looks_like_text(std::span<const uint8_t> bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 512);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = bytes[i];
    const bool whitespace = c == '\t' || c == '\n' || c == '\r' || c == '\f';
    if (c < 0x20 && !whitespace) return false;
    if (c == 0x7f) return false;
  }
  return true;
}

}  // namespace

ImageFormat sniff_format(std::span<const uint8_t> bytes) {
  if (starts_with(bytes, "\xFF\xD8\xFF")) return ImageFormat::kJpeg;
  if (starts_with(bytes, "\x89PNG")) return ImageFormat::kPng;
  return ImageFormat::kUnknown;
}

std::string describe_content(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return "empty file";
  if (starts_with(bytes, "\xFF\xD8\xFF")) return "JPEG";
  if (starts_with(bytes, "\x89PNG")) return "PNG";
  if (starts_with(bytes, "GIF87a") || starts_with(bytes, "GIF89a")) return "GIF";
  if (starts_with(bytes, "RIFF") && starts_with(bytes, "WEBP", 8)) return "WebP";
  if (starts_with(bytes, "BM")) return "BMP";
  if (starts_with(bytes, "II*\0") || starts_with(bytes, "MM\0*")) return "TIFF";
  // ISO base media (HEIF/AVIF): a box size, then "ftyp" and the brand.
  if (starts_with(bytes, "ftypavif", 4) || starts_with(bytes, "ftypavis", 4)) return "AVIF";
  if (starts_with(bytes, "ftyp", 4)) {
    for (const char* brand : {"heic", "heix", "mif1", "msf1", "hevc"}) {
      if (starts_with(bytes, brand, 4, 8)) return "HEIF";
    }
  }
  if (starts_with(bytes, "\0\0\0\x0CjP  \r\n\x87\n") || starts_with(bytes, "\xFF\x4F\xFF\x51")) {
    return "JPEG 2000";
  }
  if (starts_with(bytes, "\xFF\x0A") || starts_with(bytes, "\0\0\0\x0CJXL \r\n\x87\n")) {
    return "JPEG XL";
  }
  if (starts_with(bytes, "%PDF")) return "PDF";
  if (starts_with(bytes, "\x1F\x8B")) return "gzip";
  if (starts_with(bytes, "PK\x03\x04")) return "ZIP";
  if (looks_like_text(bytes)) return "text";
  return "unknown data";
}

}  // namespace stoker::data
