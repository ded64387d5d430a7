// PNG encoding with libpng's classic write API into a std::vector.
//
// libpng reports errors by longjmp to png_jmpbuf(png), skipping C++ destructors: the
// png_struct is owned by a guard in encode_png's frame (never unwound by the longjmp) and
// the libpng calls run in a lambda (under run_guarded) with only trivially destructible
// locals.

#include <fmt/format.h>
#include <png.h>

#include <cstring>
#include <new>
#include <unordered_map>
#include <vector>

#include "data/common/libpng_error.h"
#include "stoker/core/error.h"
#include "stoker/data/encode.h"

namespace stoker::data {
namespace {

struct PngSink {
  std::vector<uint8_t>* bytes = nullptr;
  PngErrorState error = {};
};

void write_to_vector(png_structp png, png_bytep data, size_t length) {
  auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
  bool out_of_memory = false;
  try {
    sink->bytes->insert(sink->bytes->end(), data, data + length);
  } catch (const std::bad_alloc&) {
    out_of_memory = true;
  }
  // Outside the catch block: longjmp out of a handler would leak the exception object.
  if (out_of_memory) png_error(png, "out of memory");
}

void flush_nothing(png_structp) {}

class PngWriteStruct {
 public:
  explicit PngWriteStruct(PngSink* sink) {
    png_ = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink->error, on_png_error, on_png_warning);
    if (png_ != nullptr) info_ = png_create_info_struct(png_);
    if (png_ == nullptr || info_ == nullptr) {
      png_destroy_write_struct(&png_, &info_);
      throw std::bad_alloc();
    }
    png_set_write_fn(png_, sink, write_to_vector, flush_nothing);
  }
  ~PngWriteStruct() { png_destroy_write_struct(&png_, &info_); }
  PngWriteStruct(const PngWriteStruct&) = delete;
  PngWriteStruct& operator=(const PngWriteStruct&) = delete;

  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

// A palette for an image with at most 256 distinct colors; `indices` holds one per pixel.
struct Palette {
  std::vector<png_color> colors;
  std::vector<png_byte> alphas;  // 4-channel input only (tRNS)
  std::vector<png_byte> indices;
};

Palette build_palette(const Image& image) {
  const int channels = image.channels();
  Palette palette;
  std::unordered_map<uint32_t, png_byte> index_of;
  const size_t pixels = static_cast<size_t>(image.width()) * image.height();
  palette.indices.resize(pixels);
  const uint8_t* p = image.data();
  for (size_t i = 0; i < pixels; ++i, p += channels) {
    const uint8_t alpha = channels == 4 ? p[3] : 255;
    const uint32_t key = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (p[2] << 8) | alpha;
    auto [it, added] = index_of.try_emplace(key, static_cast<png_byte>(palette.colors.size()));
    if (added) {
      if (palette.colors.size() == 256) {
        throw Error(
            "encode_png: palette output needs an image with at most 256 distinct "
            "colors; this one has more");
      }
      palette.colors.push_back(png_color{p[0], p[1], p[2]});
      if (channels == 4) palette.alphas.push_back(alpha);
    }
    palette.indices[i] = it->second;
  }
  return palette;
}

int color_type_for(int channels) {
  switch (channels) {
    case 1:
      return PNG_COLOR_TYPE_GRAY;
    case 2:
      return PNG_COLOR_TYPE_GRAY_ALPHA;
    case 3:
      return PNG_COLOR_TYPE_RGB;
    default:
      return PNG_COLOR_TYPE_RGB_ALPHA;
  }
}

void validate(const Image& image, const PngEncodeOptions& options) {
  if (image.width() <= 0 || image.height() <= 0) {
    throw Error(fmt::format("encode_png: the image is empty ({}x{})", image.width(), image.height()));
  }
  if (image.channels() < 1 || image.channels() > 4) {
    throw Error(
        fmt::format("encode_png: {} channels; PNG takes 1 (gray), 2 (gray+alpha), "
                    "3 (RGB) or 4 (RGBA)",
                    image.channels()));
  }
  if (options.palette && image.channels() < 3) {
    throw Error("encode_png: palette output needs a 3- or 4-channel image");
  }
  if (options.palette && options.sixteen_bit) {
    throw Error("encode_png: palette and sixteen_bit cannot be combined (palettes are 8-bit)");
  }
  if (options.compression_level < 0 || options.compression_level > 9) {
    throw Error(fmt::format("encode_png: compression_level {} is outside 0..9", options.compression_level));
  }
}

}  // namespace

std::vector<uint8_t> encode_png(const Image& image, const PngEncodeOptions& options) {
  validate(image, options);
  const Palette palette = options.palette ? build_palette(image) : Palette{};
  const int width = image.width();
  const int height = image.height();
  // Rows that need converting (16-bit samples or palette indices) are built here.
  std::vector<uint8_t> row_buffer(options.sixteen_bit ? image.stride() * 2 : 0);

  std::vector<uint8_t> bytes;
  PngSink sink{&bytes};
  PngWriteStruct s(&sink);
  auto write = [&] {
    png_structp png = s.png();
    png_infop info = s.info();
    const int color_type = options.palette ? PNG_COLOR_TYPE_PALETTE : color_type_for(image.channels());
    png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height),
                 options.sixteen_bit ? 16 : 8, color_type, options.interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (options.palette) {
      png_set_PLTE(png, info, palette.colors.data(), static_cast<int>(palette.colors.size()));
      if (!palette.alphas.empty()) {
        png_set_tRNS(png, info, palette.alphas.data(), static_cast<int>(palette.alphas.size()), nullptr);
      }
    }
    png_set_compression_level(png, options.compression_level);
    png_write_info(png, info);
    const int passes = options.interlace ? png_set_interlace_handling(png) : 1;
    for (int pass = 0; pass < passes; ++pass) {
      for (int y = 0; y < height; ++y) {
        const uint8_t* row = image.row(y);
        if (options.palette) {
          row = palette.indices.data() + static_cast<size_t>(y) * width;
        } else if (options.sixteen_bit) {
          // Big-endian v * 257 is the byte v twice.
          for (size_t i = 0; i < image.stride(); ++i) {
            row_buffer[2 * i] = row_buffer[2 * i + 1] = row[i];
          }
          row = row_buffer.data();
        }
        png_write_row(png, row);
      }
    }
    png_write_end(png, nullptr);
  };
  if (!run_guarded(s.png(), write)) {
    throw Error(fmt::format("encode_png: libpng failed: {}", sink.error.message));
  }
  return bytes;
}

}  // namespace stoker::data
