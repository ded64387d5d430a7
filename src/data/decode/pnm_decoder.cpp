// PNM decoding (PBM, PGM, PPM: P1 to P6, ASCII and binary), after Pillow's PpmImagePlugin:
// header tokens of at most 10 characters, '#' comments to the end of their line, one white
// space byte after the last header token. Samples are scaled to 8 bits as Pillow scales them,
// round(value / maxval * 255) with Python's rounding (half to even), maxval 255 read as is.
// Gray with maxval over 255 is read as Pillow reads it, as mode I scaled to 65535, then
// clipped at 255 as its convert("RGB") clips it (so are 16-bit PNGs and TIFFs).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "decode_rules.h"
#include "whole_image.h"

namespace stoker::data {
namespace {

bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

struct PnmHeader {
  char kind = 0;  // '1'..'6'
  int64_t width = 0;
  int64_t height = 0;
  uint32_t maxval = 1;
  size_t data_at = 0;
  bool bitmap() const { return kind == '1' || kind == '4'; }
  bool color() const { return kind == '3' || kind == '6'; }
  bool ascii() const { return kind <= '3'; }
};

// The next header token as Pillow's _read_token reads it; false at the end of the bytes or
// for a token over 10 characters.
bool read_token(std::span<const uint8_t> b, size_t* pos, std::string* token) {
  token->clear();
  while (token->size() <= 10) {
    if (*pos >= b.size()) break;
    const uint8_t c = b[(*pos)++];
    if (is_space(c)) {
      if (token->empty()) continue;
      break;
    }
    if (c == '#') {
      while (*pos < b.size() && b[*pos] != '\r' && b[*pos] != '\n') ++*pos;
      if (*pos < b.size()) ++*pos;
      continue;
    }
    token->push_back(static_cast<char>(c));
  }
  return !token->empty() && token->size() <= 10;
}

bool parse_number(const std::string& token, int64_t* value) {
  if (token.empty() || !std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *value = std::stoll(token);  // at most 10 digits
  return true;
}

Status parse_header(std::span<const uint8_t> b, const DecodeOptions& options, PnmHeader* h) {
  if (b.size() < 3 || b[0] != 'P' || b[1] < '1' || b[1] > '6' || !is_space(b[2])) {
    return Status::failure("corrupt PNM: no P1 to P6 magic number");
  }
  h->kind = static_cast<char>(b[1]);
  size_t pos = 3;
  std::string token;
  int64_t values[3] = {0, 0, 1};
  const int count = h->bitmap() ? 2 : 3;
  constexpr const char* kNames[] = {"width", "height", "maxval"};
  for (int i = 0; i < count; ++i) {
    if (!read_token(b, &pos, &token)) return Status::failure(fmt::format("truncated PNM header (no {})", kNames[i]));
    if (!parse_number(token, &values[i])) {
      return Status::failure(fmt::format("corrupt PNM header: {} is '{}', not a number", kNames[i], token));
    }
  }
  h->width = values[0];
  h->height = values[1];
  if (!h->bitmap() && (values[2] < 1 || values[2] > 65535)) {
    return Status::failure(fmt::format("corrupt PNM header: maxval {} (allowed: 1 to 65535)", values[2]));
  }
  h->maxval = static_cast<uint32_t>(values[2]);
  h->data_at = pos;
  return check_image_size(h->width, h->height, options);
}

// value -> 8 bits for every value up to maxval, as Pillow computes round(v / maxval * top),
// top 255, or 65535 for gray over 255 (mode I), clipped at 255.
std::vector<uint8_t> scale_table(uint32_t maxval, double top) {
  std::vector<uint8_t> table(maxval + 1);
  for (uint32_t v = 0; v <= maxval; ++v) {
    table[v] = static_cast<uint8_t>(std::min(255.0, std::nearbyint(static_cast<double>(v) / maxval * top)));
  }
  return table;
}

// The ASCII raster's bytes with '#' comments taken out, as Pillow's plain decoder reads them.
std::string without_comments(std::span<const uint8_t> b, size_t from) {
  std::string text;
  text.reserve(b.size() - from);
  for (size_t i = from; i < b.size(); ++i) {
    if (b[i] == '#') {
      while (i < b.size() && b[i] != '\r' && b[i] != '\n') ++i;
      continue;
    }
    text.push_back(static_cast<char>(b[i]));
  }
  return text;
}

// Gray or RGB samples, one byte each, into `samples`.
Status read_samples(std::span<const uint8_t> b, const PnmHeader& h, std::vector<uint8_t>* samples) {
  const size_t channels = h.color() ? 3 : 1;
  const size_t total = static_cast<size_t>(h.width) * h.height * channels;
  samples->resize(total);
  uint8_t* out = samples->data();
  if (h.kind == '4') {
    const size_t row_bytes = (static_cast<size_t>(h.width) + 7) / 8;
    if (h.data_at > b.size() || (b.size() - h.data_at) / row_bytes < static_cast<size_t>(h.height)) {
      return Status::failure("truncated PNM (P4 raster shorter than its size)");
    }
    for (int64_t y = 0; y < h.height; ++y) {
      const uint8_t* row = b.data() + h.data_at + y * row_bytes;
      for (int64_t x = 0; x < h.width; ++x) *out++ = (row[x / 8] >> (7 - x % 8)) & 1 ? 0 : 255;
    }
    return Status::ok_status();
  }
  if (h.kind == '1') {
    size_t n = 0;
    for (char c : without_comments(b, h.data_at)) {
      if (n == total) break;
      if (is_space(static_cast<uint8_t>(c))) continue;
      if (c != '0' && c != '1') return Status::failure(fmt::format("corrupt PNM: byte 0x{:02x} in a P1 raster", c));
      out[n++] = c == '1' ? 0 : 255;
    }
    if (n < total) return Status::failure("truncated PNM (P1 raster shorter than its size)");
    return Status::ok_status();
  }
  const std::vector<uint8_t> table = scale_table(h.maxval, !h.color() && h.maxval > 255 ? 65535.0 : 255.0);
  if (h.ascii()) {
    const std::string text = without_comments(b, h.data_at);
    size_t n = 0, i = 0;
    while (n < total) {
      while (i < text.size() && is_space(static_cast<uint8_t>(text[i]))) ++i;
      if (i == text.size()) return Status::failure("truncated PNM (ASCII raster shorter than its size)");
      const size_t start = i;
      while (i < text.size() && !is_space(static_cast<uint8_t>(text[i]))) ++i;
      int64_t value = 0;
      const std::string token = text.substr(start, std::min<size_t>(i - start, 11));
      if (i - start > 10 || !parse_number(token, &value)) {
        return Status::failure(fmt::format("corrupt PNM: '{}' in the raster is not a number", token));
      }
      if (value > h.maxval) {
        return Status::failure(fmt::format("corrupt PNM: sample {} over maxval {}", value, h.maxval));
      }
      out[n++] = table[value];
    }
    return Status::ok_status();
  }
  const size_t sample_bytes = h.maxval < 256 ? 1 : 2;
  if (h.data_at > b.size() || (b.size() - h.data_at) / sample_bytes < total) {
    return Status::failure("truncated PNM (raster shorter than its size)");
  }
  const uint8_t* in = b.data() + h.data_at;
  for (size_t i = 0; i < total; ++i) {
    const uint32_t v = sample_bytes == 1 ? in[i] : (in[2 * i] << 8 | in[2 * i + 1]);
    out[i] = table[std::min(v, h.maxval)];  // over maxval: Pillow clips to 255
  }
  return Status::ok_status();
}

}  // namespace

Status read_pnm_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  PnmHeader h;
  Status status = parse_header(bytes, options, &h);
  if (!status.ok()) return status;
  info->format = ImageFormat::kPnm;
  info->width = static_cast<int>(h.width);
  info->height = static_cast<int>(h.height);
  info->channels = h.color() ? 3 : 1;
  return Status::ok_status();
}

Status decode_pnm(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb) {
  PnmHeader h;
  Status status = parse_header(bytes, options, &h);
  if (!status.ok()) return status;
  std::vector<uint8_t> samples;
  status = read_samples(bytes, h, &samples);
  if (!status.ok()) return status;
  const int width = static_cast<int>(h.width), height = static_cast<int>(h.height);
  rgb->reshape(width, height, 3);
  const size_t pixels = static_cast<size_t>(width) * height;
  if (h.color()) {
    std::memcpy(rgb->data(), samples.data(), pixels * 3);
  } else {
    uint8_t* out = rgb->data();
    for (size_t i = 0; i < pixels; ++i, out += 3) out[0] = out[1] = out[2] = samples[i];
  }
  return Status::ok_status();
}

}  // namespace stoker::data
