// Format recognition from magic bytes: what decodes (sniff_format), and a name for the rest
// so that a failure can say what the file actually is ("looks like GIF"), which is usually
// the whole diagnosis (a renamed file, an HTML error page saved as .jpg).

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "stoker/data/decode.h"
#include "stoker/data/image.h"

namespace stoker::data {

using std::string_view_literals::operator""sv;

namespace {

// `magic` at `offset`. Callers pass ""sv literals: several signatures contain NUL bytes.
bool has_at(std::span<const uint8_t> bytes, size_t offset, std::string_view magic) {
  return bytes.size() >= offset + magic.size() && std::memcmp(bytes.data() + offset, magic.data(), magic.size()) == 0;
}

bool starts_with(std::span<const uint8_t> bytes, std::string_view magic) { return has_at(bytes, 0, magic); }

// "P1" to "P6" and white space, as Pillow's PpmImagePlugin reads the magic number.
bool is_pnm(std::span<const uint8_t> bytes) {
  if (bytes.size() < 3 || bytes[0] != 'P' || bytes[1] < '1' || bytes[1] > '6') return false;
  const uint8_t c = bytes[2];
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Plain text: valid UTF-8 (ASCII included) without control bytes other than whitespace, in
// the first 512 bytes. A multi-byte character cut off at byte 512 still counts as text.
bool looks_like_text(std::span<const uint8_t> bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 512);
  for (size_t i = 0; i < n;) {
    const uint8_t c = bytes[i];
    if (c < 0x80) {
      const bool whitespace = c == '\t' || c == '\n' || c == '\r' || c == '\f';
      if ((c < 0x20 && !whitespace) || c == 0x7F) return false;
      ++i;
      continue;
    }
    // Lead byte of a 2-, 3- or 4-byte sequence (C0, C1 and F5..FF never occur in UTF-8).
    const size_t length = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (length == 0) return false;
    for (size_t k = 1; k < length && i + k < n; ++k) {
      if ((bytes[i + k] & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace

ImageFormat sniff_format(std::span<const uint8_t> bytes) {
  if (starts_with(bytes, "\xFF\xD8\xFF"sv)) return ImageFormat::kJpeg;
  if (starts_with(bytes, "\x89PNG"sv)) return ImageFormat::kPng;
  if (starts_with(bytes, "RIFF"sv) && has_at(bytes, 8, "WEBP"sv)) return ImageFormat::kWebp;
  if (starts_with(bytes, "BM"sv)) return ImageFormat::kBmp;
  if (starts_with(bytes, "II*\0"sv) || starts_with(bytes, "MM\0*"sv)) return ImageFormat::kTiff;
  if (is_pnm(bytes)) return ImageFormat::kPnm;
  if (starts_with(bytes, "GIF87a"sv) || starts_with(bytes, "GIF89a"sv)) return ImageFormat::kGif;
  return ImageFormat::kUnknown;
}

std::string describe_content(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return "empty file";
  if (const ImageFormat format = sniff_format(bytes); format != ImageFormat::kUnknown) return to_string(format);
  // ISO base media (HEIF/AVIF): a box size, then "ftyp" and the major brand.
  if (has_at(bytes, 4, "ftyp"sv)) {
    if (has_at(bytes, 8, "avif"sv) || has_at(bytes, 8, "avis"sv)) return "AVIF";
    for (std::string_view brand : {"heic"sv, "heix"sv, "mif1"sv, "msf1"sv, "hevc"sv}) {
      if (has_at(bytes, 8, brand)) return "HEIF";
    }
  }
  if (starts_with(bytes, "\0\0\0\x0CjP  \r\n\x87\n"sv) || starts_with(bytes, "\xFF\x4F\xFF\x51"sv)) {
    return "JPEG 2000";
  }
  if (starts_with(bytes, "\xFF\x0A"sv) || starts_with(bytes, "\0\0\0\x0CJXL \r\n\x87\n"sv)) {
    return "JPEG XL";
  }
  if (starts_with(bytes, "%PDF"sv)) return "PDF";
  if (starts_with(bytes, "\x1F\x8B"sv)) return "gzip";
  if (starts_with(bytes, "PK\x03\x04"sv)) return "ZIP";
  if (looks_like_text(bytes)) return "text";
  return "unknown data";
}

}  // namespace stoker::data
