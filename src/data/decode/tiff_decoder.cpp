// TIFF decoding with libtiff: the first image of the file, in strips or tiles, contiguous or
// separate planes, whatever compression libtiff reads (none, LZW, deflate, PackBits, JPEG,
// ...). Bilevel, 2/4/8/16-bit gray (white or black is zero), 1/2/4/8-bit palette, 8/16-bit
// RGB and YCbCr in JPEG (turned into RGB by libjpeg, as Pillow asks libtiff to). Extra samples
// (alpha) are dropped, 16-bit samples keep their high byte and palette entries theirs, as
// Pillow reads them; 16-bit gray is clipped at 255, as Pillow converts its mode I;16
// (clip_gray16).
// Errors and warnings go to a handler per TIFF handle (libtiff's global ones are untouched).

#include <fmt/format.h>
#include <tiffio.h>

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "decode_rules.h"
#include "whole_image.h"

namespace stoker::data {
namespace {

struct MemoryFile {
  std::span<const uint8_t> bytes;
  uint64_t pos = 0;
  char error[256] = {};
};

tmsize_t read_proc(thandle_t handle, void* buffer, tmsize_t size) {
  auto* f = static_cast<MemoryFile*>(handle);
  if (size < 0 || f->pos >= f->bytes.size()) return 0;
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(size), f->bytes.size() - f->pos);
  std::memcpy(buffer, f->bytes.data() + f->pos, n);
  f->pos += n;
  return static_cast<tmsize_t>(n);
}
tmsize_t write_proc(thandle_t, void*, tmsize_t) { return -1; }
toff_t seek_proc(thandle_t handle, toff_t offset, int whence) {
  auto* f = static_cast<MemoryFile*>(handle);
  const uint64_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->bytes.size() : 0;
  if (offset > UINT64_MAX - base) return static_cast<toff_t>(-1);
  f->pos = base + offset;
  return f->pos;
}
int close_proc(thandle_t) { return 0; }
toff_t size_proc(thandle_t handle) { return static_cast<MemoryFile*>(handle)->bytes.size(); }
int map_proc(thandle_t handle, void** base, toff_t* size) {
  auto* f = static_cast<MemoryFile*>(handle);
  *base = const_cast<uint8_t*>(f->bytes.data());  // libtiff only reads a mapped file
  *size = f->bytes.size();
  return 1;
}
void unmap_proc(thandle_t, void*, toff_t) {}

int on_error(TIFF*, void* user_data, const char* /*module*/, const char* format, va_list args) {
  auto* f = static_cast<MemoryFile*>(user_data);
  if (f->error[0] == '\0') std::vsnprintf(f->error, sizeof(f->error), format, args);
  return 1;
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }  // silent

struct TiffCloser {
  void operator()(TIFF* tif) const { TIFFClose(tif); }
};
using TiffHandle = std::unique_ptr<TIFF, TiffCloser>;

// One allocation of libtiff's is at most this (its default is 256 MiB): room for a strip or
// tile of the largest image max_pixels lets through at 8 bytes a pixel.
constexpr tmsize_t kMaxSingleAlloc = tmsize_t{1} << 30;

TiffHandle open_tiff(MemoryFile* file) {
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  if (options == nullptr) throw std::bad_alloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, file);
  TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, nullptr);
  TIFFOpenOptionsSetMaxSingleMemAlloc(options, kMaxSingleAlloc);
  TIFF* tif = TIFFClientOpenExt("TIFF", "r", file, read_proc, write_proc, seek_proc, close_proc, size_proc, map_proc,
                                unmap_proc, options);
  TIFFOpenOptionsFree(options);
  return TiffHandle(tif);
}

Status failure_from(const MemoryFile& file, std::string_view what) {
  if (file.error[0] == '\0') return Status::failure(fmt::format("corrupt TIFF: {}", what));
  return Status::failure(fmt::format("corrupt TIFF: {} ({})", what, file.error));
}

struct TiffLayout {
  uint32_t width = 0, height = 0;
  uint16_t samples = 1, bits = 1, photometric = PHOTOMETRIC_MINISBLACK, planar = PLANARCONFIG_CONTIG;
  bool color() const { return photometric == PHOTOMETRIC_RGB || photometric == PHOTOMETRIC_YCBCR; }
};

Status read_layout(TIFF* tif, const MemoryFile& file, const DecodeOptions& options, TiffLayout* t) {
  uint16_t format = SAMPLEFORMAT_UINT, compression = COMPRESSION_NONE;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &t->width) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &t->height)) {
    return failure_from(file, "no image size");
  }
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &t->samples);
  TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &t->bits);
  TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &t->planar);
  TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
  if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &t->photometric)) t->photometric = PHOTOMETRIC_MINISWHITE;
  Status status = check_image_size(t->width, t->height, options);
  if (!status.ok()) return status;
  const auto unsupported = [&](std::string_view what) {
    return Status::failure(fmt::format(
        "unsupported TIFF: {} (read: 1/2/4/8/16-bit gray, 1/2/4/8-bit palette, 8/16-bit RGB, JPEG YCbCr)", what));
  };
  if (format != SAMPLEFORMAT_UINT && format != SAMPLEFORMAT_VOID) {
    return unsupported(fmt::format("sample format {} (not unsigned integers)", format));
  }
  if (t->samples < 1 || t->samples > 8) return unsupported(fmt::format("{} samples a pixel", t->samples));
  switch (t->photometric) {
    case PHOTOMETRIC_MINISWHITE:
    case PHOTOMETRIC_MINISBLACK:
      if (t->bits != 1 && t->bits != 2 && t->bits != 4 && t->bits != 8 && t->bits != 16) {
        return unsupported(fmt::format("{}-bit gray", t->bits));
      }
      break;
    case PHOTOMETRIC_PALETTE:
      if (t->bits != 1 && t->bits != 2 && t->bits != 4 && t->bits != 8) {
        return unsupported(fmt::format("{}-bit palette", t->bits));
      }
      break;
    case PHOTOMETRIC_YCBCR:
      if (compression != COMPRESSION_JPEG) return unsupported("YCbCr not in JPEG");
      if (!TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB)) return failure_from(file, "JPEG color mode");
      [[fallthrough]];
    case PHOTOMETRIC_RGB:
      if (t->samples < 3) return failure_from(file, fmt::format("RGB with {} samples a pixel", t->samples));
      if (t->bits != 8 && t->bits != 16) return unsupported(fmt::format("{}-bit RGB", t->bits));
      break;
    case PHOTOMETRIC_SEPARATED:
      return unsupported("CMYK");
    default:
      return unsupported(fmt::format("photometric interpretation {}", t->photometric));
  }
  return Status::ok_status();
}

// The whole image's samples as stored, one buffer per plane (one plane when contiguous), rows
// packed (row_bytes each).
struct Raster {
  int planes = 1;
  int plane_samples = 1;  // samples per pixel in one plane
  size_t row_bytes = 0;
  std::vector<uint8_t> data;
  const uint8_t* row(int plane, uint32_t y, uint32_t height) const {
    return data.data() + (static_cast<size_t>(plane) * height + y) * row_bytes;
  }
};

Status read_raster(TIFF* tif, const MemoryFile& file, const TiffLayout& t, Raster* r) {
  r->planes = t.planar == PLANARCONFIG_SEPARATE ? t.samples : 1;
  r->plane_samples = t.planar == PLANARCONFIG_SEPARATE ? 1 : t.samples;
  const uint64_t bits_per_pixel = static_cast<uint64_t>(r->plane_samples) * t.bits;
  r->row_bytes = static_cast<size_t>((t.width * bits_per_pixel + 7) / 8);
  r->data.assign(r->row_bytes * t.height * r->planes, 0);
  std::vector<uint8_t> chunk;
  if (TIFFIsTiled(tif)) {
    uint32_t tile_width = 0, tile_height = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tile_width);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &tile_height);
    const tmsize_t tile_size = TIFFTileSize(tif);
    const tmsize_t tile_row = TIFFTileRowSize(tif);
    if (tile_width == 0 || tile_height == 0 || tile_size <= 0 || tile_row <= 0 ||
        (tile_width * bits_per_pixel) % 8 != 0 || static_cast<uint64_t>(tile_row) * tile_height > uint64_t(tile_size)) {
      return failure_from(file, "bad tile size");
    }
    chunk.resize(static_cast<size_t>(tile_size));
    for (int p = 0; p < r->planes; ++p) {
      for (uint32_t y0 = 0; y0 < t.height; y0 += tile_height) {
        for (uint32_t x0 = 0; x0 < t.width; x0 += tile_width) {
          const uint32_t tile = TIFFComputeTile(tif, x0, y0, 0, static_cast<uint16_t>(p));
          if (TIFFReadEncodedTile(tif, tile, chunk.data(), tile_size) < 0) return failure_from(file, "damaged tile");
          const size_t x_bytes = static_cast<size_t>(x0 * bits_per_pixel / 8);
          const size_t copy = std::min<size_t>(static_cast<size_t>(tile_row), r->row_bytes - x_bytes);
          for (uint32_t y = y0; y < std::min(t.height, y0 + tile_height); ++y) {
            std::memcpy(const_cast<uint8_t*>(r->row(p, y, t.height)) + x_bytes, chunk.data() + (y - y0) * tile_row,
                        copy);
          }
        }
      }
    }
    return Status::ok_status();
  }
  uint32_t rows_per_strip = t.height;
  TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
  rows_per_strip = std::clamp<uint32_t>(rows_per_strip, 1, t.height);
  const tmsize_t strip_size = TIFFStripSize(tif);
  if (strip_size <= 0) return failure_from(file, "bad strip size");
  chunk.resize(static_cast<size_t>(strip_size));
  for (int p = 0; p < r->planes; ++p) {
    for (uint32_t y0 = 0; y0 < t.height; y0 += rows_per_strip) {
      const uint32_t rows = std::min(rows_per_strip, t.height - y0);
      const tstrip_t strip = TIFFComputeStrip(tif, y0, static_cast<uint16_t>(p));
      const tmsize_t got = TIFFReadEncodedStrip(tif, strip, chunk.data(), strip_size);
      if (got < 0) return failure_from(file, "damaged strip");
      if (static_cast<uint64_t>(got) < static_cast<uint64_t>(rows) * r->row_bytes) {
        return Status::failure(fmt::format("truncated TIFF (strip {} holds {} of its {} bytes)", strip, got,
                                           static_cast<uint64_t>(rows) * r->row_bytes));
      }
      std::memcpy(const_cast<uint8_t*>(r->row(p, y0, t.height)), chunk.data(), rows * r->row_bytes);
    }
  }
  return Status::ok_status();
}

// Sample `s` of pixel `x` in row `y`, as stored (16-bit ones in host order).
uint32_t sample_at(const Raster& r, const TiffLayout& t, uint32_t y, uint32_t x, int s) {
  const int plane = r.planes > 1 ? s : 0;
  const uint64_t index = static_cast<uint64_t>(x) * r.plane_samples + (r.planes > 1 ? 0 : s);
  const uint8_t* row = r.row(plane, y, t.height);
  switch (t.bits) {
    case 8:
      return row[index];
    case 16: {
      uint16_t v;
      std::memcpy(&v, row + 2 * index, 2);
      return v;
    }
    default: {
      const uint64_t bit = index * t.bits;
      return (row[bit / 8] >> (8 - t.bits - bit % 8)) & ((1u << t.bits) - 1);
    }
  }
}

// A gray sample as 8 bits: low depths stretched (Pillow's L;2 and L;4 unpackers), 16 bits
// clipped at 255 (Pillow's I;16 to L or RGB).
uint8_t gray_level(uint32_t v, int bits) {
  switch (bits) {
    case 1:
      return v ? 255 : 0;
    case 2:
      return static_cast<uint8_t>(v * 85);
    case 4:
      return static_cast<uint8_t>(v * 17);
    case 16:
      return clip_gray16(v);
    default:
      return static_cast<uint8_t>(v);
  }
}

// The bytes, libtiff's handle on them and their checked layout: where both entry points start.
// Not movable once opened (libtiff keeps &file); tif closes before file goes.
struct OpenedTiff {
  MemoryFile file;
  TiffHandle tif;
  TiffLayout layout;
};

Status open_checked(std::span<const uint8_t> bytes, const DecodeOptions& options, OpenedTiff* opened) {
  opened->file.bytes = bytes;
  opened->tif = open_tiff(&opened->file);
  if (!opened->tif) return failure_from(opened->file, "unreadable header");
  return read_layout(opened->tif.get(), opened->file, options, &opened->layout);
}

}  // namespace

Status read_tiff_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  OpenedTiff opened;
  Status status = open_checked(bytes, options, &opened);
  if (!status.ok()) return status;
  const TiffLayout& t = opened.layout;
  info->format = ImageFormat::kTiff;
  info->width = static_cast<int>(t.width);
  info->height = static_cast<int>(t.height);
  info->channels = t.samples;
  return Status::ok_status();
}

Status decode_tiff(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb) {
  OpenedTiff opened;
  Status status = open_checked(bytes, options, &opened);
  if (!status.ok()) return status;
  TIFF* tif = opened.tif.get();
  const MemoryFile& file = opened.file;
  const TiffLayout& t = opened.layout;
  Raster raster;
  status = read_raster(tif, file, t, &raster);
  if (!status.ok()) return status;

  std::array<std::array<uint8_t, 3>, 256> palette{};
  if (t.photometric == PHOTOMETRIC_PALETTE) {
    uint16_t *red = nullptr, *green = nullptr, *blue = nullptr;
    if (!TIFFGetField(tif, TIFFTAG_COLORMAP, &red, &green, &blue)) return failure_from(file, "no color map");
    for (uint32_t i = 0; i < (1u << t.bits); ++i) {
      palette[i] = {static_cast<uint8_t>(red[i] >> 8), static_cast<uint8_t>(green[i] >> 8),
                    static_cast<uint8_t>(blue[i] >> 8)};
    }
  }
  rgb->reshape(static_cast<int>(t.width), static_cast<int>(t.height), 3);
  for (uint32_t y = 0; y < t.height; ++y) {
    uint8_t* out = rgb->row(static_cast<int>(y));
    for (uint32_t x = 0; x < t.width; ++x, out += 3) {
      if (t.color()) {
        for (int c = 0; c < 3; ++c) {
          const uint32_t v = sample_at(raster, t, y, x, c);
          out[c] = static_cast<uint8_t>(t.bits == 16 ? v >> 8 : v);
        }
      } else if (t.photometric == PHOTOMETRIC_PALETTE) {
        std::memcpy(out, palette[sample_at(raster, t, y, x, 0)].data(), 3);
      } else {
        uint8_t level = gray_level(sample_at(raster, t, y, x, 0), t.bits);
        if (t.photometric == PHOTOMETRIC_MINISWHITE) level = static_cast<uint8_t>(255 - level);
        out[0] = out[1] = out[2] = level;
      }
    }
  }
  return Status::ok_status();
}

}  // namespace stoker::data
