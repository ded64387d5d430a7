// BMP decoding, hand-written after Pillow's BmpImagePlugin (what torchvision's ImageFolder reads
// through): the info headers of 12, 40, 52, 56, 64, 108 and 124 bytes; 1/4/8-bit palette,
// 16-bit 5-5-5, 24-bit and 32-bit pixels; BI_RGB, BI_BITFIELDS (any contiguous masks) and
// RLE8/RLE4 run-length data; bottom-up and top-down rows. Every read is bounds-checked.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "decode_rules.h"
#include "whole_image.h"

namespace stoker::data {
namespace {

constexpr uint32_t kRgb = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3;

uint32_t u16_at(std::span<const uint8_t> b, size_t at) { return b[at] | (b[at + 1] << 8); }
uint32_t u32_at(std::span<const uint8_t> b, size_t at) {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (static_cast<uint32_t>(b[at + 3]) << 24);
}

// One color channel of a BI_BITFIELDS pixel: where its bits are and their largest value.
struct Channel {
  uint32_t mask = 0;
  int shift = 0;
  uint32_t max = 0;  // 0: the mask is empty, the channel reads 0
};

struct BmpHeader {
  int64_t width = 0;
  int64_t height = 0;
  bool top_down = false;
  int bits = 0;
  uint32_t compression = kRgb;
  std::array<Channel, 3> rgb;  // BI_BITFIELDS masks, red green blue
  size_t palette_at = 0;       // offset of the palette
  size_t palette_entry = 4;    // bytes a palette entry takes (3 in the 12-byte header)
  int64_t colors = 0;          // palette entries
  size_t pixels_at = 0;        // offset of the pixel data
};

Status bad(std::string_view what) { return Status::failure(fmt::format("corrupt BMP: {}", what)); }

bool channel_from_mask(uint32_t mask, Channel* c) {
  c->mask = mask;
  if (mask == 0) return true;
  c->shift = std::countr_zero(mask);
  const uint32_t bits = mask >> c->shift;
  if ((bits & (bits + 1)) != 0) return false;  // not one run of ones
  c->max = bits;
  return true;
}

Status parse_header(std::span<const uint8_t> b, const DecodeOptions& options, BmpHeader* h) {
  if (b.size() < 18) return Status::failure("truncated BMP header");
  const uint32_t header_size = u32_at(b, 14);
  if (header_size != 12 && header_size != 40 && header_size != 52 && header_size != 56 && header_size != 64 &&
      header_size != 108 && header_size != 124) {
    return Status::failure(
        fmt::format("unsupported BMP header size {} (read: 12, 40, 52, 56, 64, 108, 124)", header_size));
  }
  if (b.size() < 14 + header_size) return Status::failure("truncated BMP header");
  size_t cursor = 14 + header_size;
  if (header_size == 12) {
    h->width = u16_at(b, 18);
    h->height = u16_at(b, 20);
    h->bits = static_cast<int>(u16_at(b, 24));
    h->palette_entry = 3;
  } else {
    h->width = u32_at(b, 18);
    const uint32_t height = u32_at(b, 22);
    h->top_down = b[25] == 0xFF;  // a negative height, as Pillow reads it
    h->height = h->top_down ? (int64_t{1} << 32) - height : height;
    h->bits = static_cast<int>(u16_at(b, 28));
    h->compression = u32_at(b, 30);
    h->colors = u32_at(b, 46);
  }
  if (h->bits != 1 && h->bits != 4 && h->bits != 8 && h->bits != 16 && h->bits != 24 && h->bits != 32) {
    return Status::failure(fmt::format("unsupported BMP pixel depth {} (read: 1, 4, 8, 16, 24, 32)", h->bits));
  }
  if (h->compression == kBitfields) {
    if (header_size == 40) cursor += 12;  // the masks follow the header
    if (b.size() < 66) return Status::failure("truncated BMP header");
    const uint32_t r = u32_at(b, 54), g = u32_at(b, 58), bl = u32_at(b, 62);
    const uint32_t a = header_size >= 56 && b.size() >= 70 ? u32_at(b, 66) : 0;
    if (h->bits < 16) return Status::failure(fmt::format("unsupported BMP: bit fields on {}-bit pixels", h->bits));
    if (h->bits == 32 && r == 0 && g == 0 && bl == 0 && a == 0) {
      h->compression = kRgb;  // no masks: BGRA, as Pillow reads it
    } else if (!channel_from_mask(r, &h->rgb[0]) || !channel_from_mask(g, &h->rgb[1]) ||
               !channel_from_mask(bl, &h->rgb[2])) {
      return Status::failure(fmt::format("unsupported BMP bit fields 0x{:x} 0x{:x} 0x{:x}", r, g, bl));
    }
  } else if (h->compression == kRle8 || h->compression == kRle4) {
    if (h->bits > 8) return bad(fmt::format("run-length data on {}-bit pixels", h->bits));
  } else if (h->compression != kRgb) {
    return Status::failure(
        fmt::format("unsupported BMP compression {} (read: none, RLE8, RLE4, bit fields; 4 and 5 hold a JPEG or PNG)",
                    h->compression));
  }
  if (h->colors == 0) h->colors = int64_t{1} << h->bits;
  uint32_t offset = u32_at(b, 10);
  // Pillow's allowance for writers that leave the palette out of the data offset.
  if (offset == 14 + header_size && h->bits <= 8) offset += static_cast<uint32_t>(4 * h->colors);
  h->palette_at = cursor;
  if (h->bits <= 8) {
    if (h->colors > 65536) return bad(fmt::format("palette of {} colors", h->colors));
    cursor += h->palette_entry * static_cast<size_t>(h->colors);
  }
  h->pixels_at = offset != 0 ? offset : cursor;
  return check_image_size(h->width, h->height, options);
}

// The palette as Pillow builds it: 256 entries, gray (i, i, i) where the file gives none.
std::array<std::array<uint8_t, 3>, 256> read_palette(std::span<const uint8_t> b, const BmpHeader& h) {
  std::array<std::array<uint8_t, 3>, 256> palette;
  for (int i = 0; i < 256; ++i)
    palette[i] = {static_cast<uint8_t>(i), static_cast<uint8_t>(i), static_cast<uint8_t>(i)};
  const int64_t given = std::min<int64_t>(h.colors, 256);
  for (int64_t i = 0; i < given; ++i) {
    const size_t at = h.palette_at + i * h.palette_entry;
    if (at + 3 > b.size()) break;
    palette[i] = {b[at + 2], b[at + 1], b[at]};  // stored B, G, R
  }
  return palette;
}

// Pillow's bmp_rle decoder: palette indices, row after row in file order; runs are cut at the
// row's end, absolute runs are not. False when the data ends before the last pixel.
bool expand_rle(std::span<const uint8_t> b, const BmpHeader& h, std::vector<uint8_t>* indices) {
  const size_t total = static_cast<size_t>(h.width) * h.height;
  const size_t w = static_cast<size_t>(h.width);
  const bool rle4 = h.compression == kRle4;
  indices->clear();
  indices->reserve(total);
  size_t pos = h.pixels_at, x = 0;
  const auto push = [&](uint8_t v, size_t n) {
    indices->insert(indices->end(), std::min(n, total - indices->size()), v);
  };
  while (indices->size() < total) {
    if (pos + 2 > b.size()) break;
    size_t count = b[pos];
    const uint8_t value = b[pos + 1];
    pos += 2;
    if (count > 0) {
      if (x + count > w) count = x < w ? w - x : 0;
      if (rle4) {
        for (size_t i = 0; i < count && indices->size() < total; ++i) push(i % 2 == 0 ? value >> 4 : value & 15, 1);
      } else {
        push(value, count);
      }
      x += count;
    } else if (value == 0) {  // end of line
      if (indices->size() % w != 0) push(0, w - indices->size() % w);
      x = 0;
    } else if (value == 1) {  // end of bitmap
      break;
    } else if (value == 2) {  // delta: right, up
      if (pos + 2 > b.size()) break;
      push(0, b[pos] + static_cast<size_t>(b[pos + 1]) * w);
      pos += 2;
      x = indices->size() % w;
    } else {  // absolute run of `value` pixels
      const size_t byte_count = rle4 ? value / 2 : value;
      const size_t available = std::min(byte_count, b.size() - pos);
      for (size_t i = 0; i < available; ++i) {
        if (rle4) {
          push(b[pos + i] >> 4, 1);
          push(b[pos + i] & 15, 1);
        } else {
          push(b[pos + i], 1);
        }
      }
      pos += available;
      if (available < byte_count) break;
      x += value;
      if (pos % 2 != 0) ++pos;  // word alignment, from the file's start
    }
  }
  return indices->size() == total;
}

uint8_t field(uint32_t pixel, const Channel& c) {
  if (c.max == 0) return 0;
  return static_cast<uint8_t>(((pixel & c.mask) >> c.shift) * 255 / c.max);
}

}  // namespace

Status read_bmp_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  BmpHeader h;
  Status status = parse_header(bytes, options, &h);
  if (!status.ok()) return status;
  info->format = ImageFormat::kBmp;
  info->width = static_cast<int>(h.width);
  info->height = static_cast<int>(h.height);
  info->channels = h.bits == 32 ? 4 : 3;
  return Status::ok_status();
}

Status decode_bmp(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb) {
  BmpHeader h;
  Status status = parse_header(bytes, options, &h);
  if (!status.ok()) return status;
  const int width = static_cast<int>(h.width), height = static_cast<int>(h.height);
  const auto palette = read_palette(bytes, h);
  const auto out_row = [&](int file_row) { return rgb->row(h.top_down ? file_row : height - 1 - file_row); };

  if (h.compression == kRle8 || h.compression == kRle4) {
    std::vector<uint8_t> indices;
    if (!expand_rle(bytes, h, &indices)) return Status::failure("truncated BMP (run-length data ends early)");
    rgb->reshape(width, height, 3);
    for (int y = 0; y < height; ++y) {
      uint8_t* out = out_row(y);
      const uint8_t* in = indices.data() + static_cast<size_t>(y) * width;
      for (int x = 0; x < width; ++x, out += 3) std::memcpy(out, palette[in[x]].data(), 3);
    }
    return Status::ok_status();
  }

  const size_t stride = ((static_cast<size_t>(width) * h.bits + 31) >> 3) & ~size_t{3};
  if (h.pixels_at > bytes.size() || (bytes.size() - h.pixels_at) / stride < static_cast<size_t>(height)) {
    return Status::failure(fmt::format("truncated BMP ({} bytes, its {}x{} pixels need {})", bytes.size(), width,
                                       height, h.pixels_at + stride * height));
  }
  rgb->reshape(width, height, 3);
  const size_t pixel_bytes = static_cast<size_t>(h.bits) / 8;
  for (int y = 0; y < height; ++y) {
    const uint8_t* in = bytes.data() + h.pixels_at + static_cast<size_t>(y) * stride;
    uint8_t* out = out_row(y);
    for (int x = 0; x < width; ++x, out += 3) {
      if (h.bits <= 8) {
        const int per_byte = 8 / h.bits;
        const int index = (in[x / per_byte] >> ((per_byte - 1 - x % per_byte) * h.bits)) & ((1 << h.bits) - 1);
        std::memcpy(out, palette[index].data(), 3);
        continue;
      }
      const uint8_t* p = in + x * pixel_bytes;
      if (h.compression == kBitfields) {
        uint32_t pixel = 0;
        for (size_t k = 0; k < pixel_bytes; ++k) pixel |= static_cast<uint32_t>(p[k]) << (8 * k);
        out[0] = field(pixel, h.rgb[0]);
        out[1] = field(pixel, h.rgb[1]);
        out[2] = field(pixel, h.rgb[2]);
      } else if (h.bits == 16) {  // 5-5-5, scaled as Pillow's BGR;15 unpacker does
        const uint32_t pixel = p[0] | (p[1] << 8);
        out[0] = static_cast<uint8_t>(((pixel >> 10) & 31) * 255 / 31);
        out[1] = static_cast<uint8_t>(((pixel >> 5) & 31) * 255 / 31);
        out[2] = static_cast<uint8_t>((pixel & 31) * 255 / 31);
      } else {  // BGR, BGRX
        out[0] = p[2];
        out[1] = p[1];
        out[2] = p[0];
      }
    }
  }
  return Status::ok_status();
}

}  // namespace stoker::data
