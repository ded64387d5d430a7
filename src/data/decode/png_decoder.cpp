// PNG decoding with libpng: every PNG flavour becomes 8-bit gray or RGB, alpha dropped, as
// Pillow's convert("RGB") and convert("L") make them.
//
// libpng reports errors by longjmp to png_jmpbuf(png), skipping C++ destructors, so libpng
// calls run inside run_guarded() with only trivially destructible locals, and the
// png_struct is owned by a guard in the caller's frame (which longjmp never unwinds).

#include "png_decoder.h"

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>

#include "crop_window.h"
#include "data/common/libpng_error.h"
#include "decode_rules.h"

namespace stoker::data {
namespace {

// Our side of libpng's callbacks: the bytes being read and the last error message.
struct PngSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
  PngErrorState error = {};
};

// Bounds-checked memory reads: running out of bytes is an error, never a read past the end.
void read_from_memory(png_structp png, png_bytep dest, size_t length) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > source->size - source->pos) png_error(png, "truncated PNG");
  std::memcpy(dest, source->data + source->pos, length);
  source->pos += length;
}

// Owns the png_struct for one call. Lives in a frame above run_guarded, so it is destroyed
// normally after a longjmp.
class PngReadStruct {
 public:
  explicit PngReadStruct(PngSource* source) {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source->error, on_png_error, on_png_warning);
    if (png_ != nullptr) info_ = png_create_info_struct(png_);
    if (png_ == nullptr || info_ == nullptr) {
      png_destroy_read_struct(&png_, &info_, nullptr);
      throw std::bad_alloc();
    }
    png_set_read_fn(png_, source, read_from_memory);
  }
  ~PngReadStruct() { png_destroy_read_struct(&png_, &info_, nullptr); }
  PngReadStruct(const PngReadStruct&) = delete;
  PngReadStruct& operator=(const PngReadStruct&) = delete;

  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

Status failure_from(const PngSource& source) {
  if (std::strcmp(source.error.message, "truncated PNG") == 0) {
    return Status::failure("truncated PNG");
  }
  return Status::failure(fmt::format("corrupt PNG: {}", source.error.message));
}

struct PngHeader {
  png_uint_32 width = 0;
  png_uint_32 height = 0;
  int bit_depth = 0;
  int color_type = 0;
  int interlace = 0;
};

// png_read_info (signature and chunks up to the first IDAT), then the size limit.
Status read_header(const PngReadStruct& s, PngSource* source, const DecodeOptions& options, PngHeader* h) {
  const bool ok = run_guarded(s.png(), [&] {
    png_read_info(s.png(), s.info());
    png_get_IHDR(s.png(), s.info(), &h->width, &h->height, &h->bit_depth, &h->color_type, &h->interlace, nullptr,
                 nullptr);
  });
  if (!ok) return failure_from(*source);
  return check_image_size(h->width, h->height, options);
}

int stored_channels(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY:
      return 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA:
      return 2;
    case PNG_COLOR_TYPE_RGB_ALPHA:
      return 4;
    default:
      return 3;  // RGB, and palette entries are RGB
  }
}

}  // namespace

Status PngDecoder::read_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  PngSource source{bytes.data(), bytes.size()};
  PngReadStruct s(&source);
  PngHeader h;
  Status status = read_header(s, &source, options, &h);
  if (!status.ok()) return status;
  info->format = ImageFormat::kPng;
  info->width = static_cast<int>(h.width);
  info->height = static_cast<int>(h.height);
  info->channels = stored_channels(h.color_type);
  return Status::ok_status();
}

namespace {

// Whether the IEND chunk (its type and its fixed CRC) is in `bytes`. A window's rows end the
// decode early, and png_read_end is never called: without this check a file cut short was
// named bad or not depending on where the random crop fell.
bool has_iend(std::span<const uint8_t> bytes) {
  constexpr std::array<uint8_t, 8> kIend{'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  return std::search(bytes.rbegin(), bytes.rend(), kIend.rbegin(), kIend.rend()) != bytes.rend();
}

}  // namespace

Status PngDecoder::decode(std::span<const uint8_t> bytes, const DecodeRequest& request, const DecodeOptions& options,
                          DecodedImage* out) {
  PngSource source{bytes.data(), bytes.size()};
  PngReadStruct s(&source);
  PngHeader h;
  Status status = read_header(s, &source, options, &h);
  if (!status.ok()) return status;
  const int width = static_cast<int>(h.width);
  const int height = static_cast<int>(h.height);
  CropRect crop;
  status = resolve_crop(request.crop, width, height, &crop);
  if (!status.ok()) return status;

  // Rows to keep. Interlaced images spread every row over all 7 passes: no early stop.
  const bool interlaced = h.interlace != PNG_INTERLACE_NONE;
  PixelRange rows{0, height};
  if (options.crop_window && !interlaced) {
    rows = covering_range(crop.y, crop.y + crop.height,
                          filter_margin(crop.height, request.target_height, request.filter_support), height);
  }
  const int out_rows = rows.end - rows.begin;

  // libpng does everything but color -> gray: its rgb_to_gray linearises with the file's
  // gAMA/sRGB chunks when present, which Pillow's convert("L") does not do. 16-bit gray is
  // clipped here too (clip_gray16_row): libpng only strips or scales 16 bits.
  const bool color = (h.color_type & PNG_COLOR_MASK_COLOR) != 0;
  const bool to_gray = request.channels == 1 && color;
  const bool clip_16 = h.color_type == PNG_COLOR_TYPE_GRAY && h.bit_depth == 16;
  const bool via_scratch = to_gray || clip_16;
  const size_t png_stride = static_cast<size_t>(width) * (to_gray ? 3 : clip_16 ? 2 : request.channels);
  out->image.reshape(width, out_rows, request.channels);
  if (via_scratch) scratch_.resize(png_stride * (interlaced ? height : 1));
  if (interlaced) row_pointers_.resize(height);
  // A row read into scratch_, made the output's.
  const auto finish_row = [&](const uint8_t* row, uint8_t* dest) {
    if (to_gray) {
      rgb_to_gray_row(row, dest, static_cast<size_t>(width));
    } else {
      clip_gray16_row(row, dest, static_cast<size_t>(width), request.channels);
    }
  };

  const bool ok = run_guarded(s.png(), [&] {
    png_structp png = s.png();
    // Keep the high byte, as Pillow's RGB conversion does, but for 16-bit gray, which Pillow
    // opens as mode I and clips (PIL's 16-bit gray PNG is no 16-bit gray alpha PNG: that opens
    // as RGBA, and keeps its high byte).
    if (!clip_16) png_set_strip_16(png);
    if (h.color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (h.color_type == PNG_COLOR_TYPE_GRAY && h.bit_depth < 8) {
      png_set_expand_gray_1_2_4_to_8(png);
    }
    // Transparency is dropped, not composited: tRNS is never expanded to alpha (palette
    // expansion adds alpha for it anyway), and any alpha channel is stripped.
    png_set_strip_alpha(png);
    if (request.channels == 3 && !color && !clip_16) png_set_gray_to_rgb(png);
    if (interlaced) png_set_interlace_handling(png);
    png_read_update_info(png, s.info());
    if (png_get_rowbytes(png, s.info()) != png_stride) {
      png_error(png, "unexpected row size after conversion");
    }

    if (interlaced) {
      for (int y = 0; y < height; ++y) {
        row_pointers_[y] = via_scratch ? scratch_.data() + y * png_stride : out->image.row(y);
      }
      png_read_image(png, row_pointers_.data());
      if (via_scratch) {
        for (int y = 0; y < height; ++y) finish_row(row_pointers_[y], out->image.row(y));
      }
      return;
    }
    // Rows above the window are decoded into the first output row, which is overwritten.
    // Rows below it are never decompressed: we stop without png_read_end.
    for (int y = 0; y < rows.end; ++y) {
      uint8_t* dest = out->image.row(std::max(0, y - rows.begin));
      if (via_scratch) {
        png_read_row(png, scratch_.data(), nullptr);
        if (y >= rows.begin) finish_row(scratch_.data(), dest);
      } else {
        png_read_row(png, dest, nullptr);
      }
    }
  });
  if (!ok) return failure_from(source);
  if (!has_iend(bytes)) {
    return Status::failure(fmt::format("truncated PNG (no IEND chunk in its {} bytes)", bytes.size()));
  }
  out->crop = CropRect{crop.x, crop.y - rows.begin, crop.width, crop.height};
  out->scale_num = 8;
  return Status::ok_status();
}

}  // namespace stoker::data
