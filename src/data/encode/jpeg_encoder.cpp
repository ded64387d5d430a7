// JPEG encoding with libjpeg-turbo into memory (jpeg_mem_dest).
//
// libjpeg reports errors by calling error_exit, which must not return: we longjmp back to
// run_guarded(), skipping only frames with trivially destructible locals, and turn the
// failure into stoker::Error once back in ordinary C++ code.

#include <fmt/format.h>
#include <jpeglib.h>  // after <cstdio>: it needs FILE and size_t declared

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "data/common/libjpeg_error.h"
#include "stoker/core/error.h"
#include "stoker/data/encode.h"

namespace stoker::data {
namespace {

void on_emit_message(j_common_ptr, int) {}  // the compressor's warnings are not actionable

struct Settings {
  J_COLOR_SPACE in_space;
  J_COLOR_SPACE jpeg_space;
  int h_samp;  // luma (and K) sampling factors; chroma stays 1x1
  int v_samp;
};

Settings settings_for(const Image& image, const JpegEncodeOptions& options) {
  const int channels = image.channels();
  JpegColorSpace space = options.color_space;
  if (space == JpegColorSpace::kAuto) {
    if (channels == 1) space = JpegColorSpace::kGray;
    if (channels == 3) space = JpegColorSpace::kYCbCr;
    if (channels == 4) space = JpegColorSpace::kCmyk;
  }
  struct Space {
    JpegColorSpace space;
    int channels;
    J_COLOR_SPACE in_space;
    J_COLOR_SPACE jpeg_space;
  };
  constexpr Space kSpaces[] = {
      {JpegColorSpace::kGray, 1, JCS_GRAYSCALE, JCS_GRAYSCALE},
      {JpegColorSpace::kYCbCr, 3, JCS_RGB, JCS_YCbCr},
      {JpegColorSpace::kRgb, 3, JCS_RGB, JCS_RGB},
      {JpegColorSpace::kCmyk, 4, JCS_CMYK, JCS_CMYK},
      {JpegColorSpace::kYcck, 4, JCS_CMYK, JCS_YCCK},
  };
  int needed = 0;
  Settings s{JCS_UNKNOWN, JCS_UNKNOWN, 1, 1};
  for (const Space& entry : kSpaces) {
    if (entry.space != space) continue;
    needed = entry.channels;
    s = Settings{entry.in_space, entry.jpeg_space, 1, 1};
  }
  if (needed == 0 || channels != needed) {
    throw Error(
        fmt::format("encode_jpeg: a {}-channel image cannot be stored in the requested JPEG color space; "
                    "gray takes 1 channel, YCbCr and RGB 3, CMYK and YCCK 4",
                    channels));
  }
  if (space == JpegColorSpace::kYcck && !options.adobe_marker) {
    throw Error(
        "encode_jpeg: YCCK needs the Adobe marker (without it decoders read CMYK); "
        "set adobe_marker = true");
  }
  if (s.jpeg_space == JCS_YCbCr || s.jpeg_space == JCS_YCCK) {
    // Luma's sampling factors as declared; chroma is 1x1.
    const auto declared = chroma_subsamplings();
    const auto index = static_cast<size_t>(options.subsampling);
    if (index >= declared.size()) {
      throw Error(
          fmt::format("encode_jpeg: unknown ChromaSubsampling value {}", static_cast<int>(options.subsampling)));
    }
    s.h_samp = declared[index].h_samp;
    s.v_samp = declared[index].v_samp;
  }
  return s;
}

void compress(jpeg_compress_struct* cinfo, const Image& image, const JpegEncodeOptions& options,
              const Settings& settings, unsigned char** buffer, unsigned long* size) {
  jpeg_create_compress(cinfo);
  jpeg_mem_dest(cinfo, buffer, size);
  cinfo->image_width = static_cast<JDIMENSION>(image.width());
  cinfo->image_height = static_cast<JDIMENSION>(image.height());
  cinfo->input_components = image.channels();
  cinfo->in_color_space = settings.in_space;
  jpeg_set_defaults(cinfo);
  jpeg_set_colorspace(cinfo, settings.jpeg_space);
  // After jpeg_set_colorspace, which turns the marker on for RGB, CMYK and YCCK.
  if (settings.jpeg_space == JCS_CMYK && !options.adobe_marker) cinfo->write_Adobe_marker = FALSE;
  jpeg_set_quality(cinfo, options.quality, TRUE);
  cinfo->comp_info[0].h_samp_factor = settings.h_samp;
  cinfo->comp_info[0].v_samp_factor = settings.v_samp;
  if (settings.jpeg_space == JCS_YCCK) {  // K is full resolution like Y
    cinfo->comp_info[3].h_samp_factor = settings.h_samp;
    cinfo->comp_info[3].v_samp_factor = settings.v_samp;
  }
  if (options.progressive) jpeg_simple_progression(cinfo);
  cinfo->restart_interval = static_cast<unsigned int>(options.restart_interval);
  jpeg_start_compress(cinfo, TRUE);
  while (cinfo->next_scanline < cinfo->image_height) {
    // libjpeg takes non-const rows but only reads them.
    JSAMPROW row = const_cast<JSAMPROW>(image.row(static_cast<int>(cinfo->next_scanline)));
    jpeg_write_scanlines(cinfo, &row, 1);
  }
  jpeg_finish_compress(cinfo);
}

}  // namespace

std::vector<uint8_t> encode_jpeg(const Image& image, const JpegEncodeOptions& options) {
  if (image.width() <= 0 || image.height() <= 0) {
    throw Error(fmt::format("encode_jpeg: the image is empty ({}x{})", image.width(), image.height()));
  }
  if (image.width() > JPEG_MAX_DIMENSION || image.height() > JPEG_MAX_DIMENSION) {
    throw Error(fmt::format("encode_jpeg: {}x{} is larger than JPEG allows ({} per side)", image.width(),
                            image.height(), JPEG_MAX_DIMENSION));
  }
  if (options.quality < 1 || options.quality > 100) {
    throw Error(fmt::format("encode_jpeg: quality {} is outside 1..100", options.quality));
  }
  if (options.restart_interval < 0 || options.restart_interval > 65535) {
    throw Error(fmt::format("encode_jpeg: restart_interval {} is outside 0..65535", options.restart_interval));
  }
  const Settings settings = settings_for(image, options);

  ErrorManager err;
  jpeg_compress_struct cinfo;
  std::memset(&cinfo, 0, sizeof(cinfo));  // destroying it is safe even if creation failed
  cinfo.err = install_error_manager(&err, on_emit_message);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool ok = run_guarded(&err, [&] { compress(&cinfo, image, options, settings, &buffer, &size); });
  jpeg_destroy_compress(&cinfo);
  // jpeg_mem_dest's buffer is malloc'ed and ours to free, also after a failure.
  const std::unique_ptr<unsigned char, void (*)(void*)> owned(buffer, std::free);
  if (!ok) throw Error(fmt::format("encode_jpeg: libjpeg failed: {}", err.message));
  return std::vector<uint8_t>(buffer, buffer + size);
}

}  // namespace stoker::data
