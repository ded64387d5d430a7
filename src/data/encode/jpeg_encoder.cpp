// JPEG encoding with libjpeg-turbo into memory (jpeg_mem_dest).
//
// libjpeg reports errors by calling error_exit, which must not return: we longjmp back to
// compress(), whose frame (and the lambda it runs) holds only trivially destructible locals,
// and turn the failure into stoker::Error once back in ordinary C++ code.

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include <fmt/format.h>

#include "stoker/core/error.h"
#include "stoker/data/encode.h"

namespace stoker::data {
namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first: libjpeg hands us a jpeg_error_mgr*
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

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
  int needed = 0;
  Settings s{JCS_UNKNOWN, JCS_UNKNOWN, 1, 1};
  switch (space) {
    case JpegColorSpace::kGray: needed = 1, s = {JCS_GRAYSCALE, JCS_GRAYSCALE, 1, 1}; break;
    case JpegColorSpace::kYCbCr: needed = 3, s = {JCS_RGB, JCS_YCbCr, 1, 1}; break;
    case JpegColorSpace::kRgb: needed = 3, s = {JCS_RGB, JCS_RGB, 1, 1}; break;
    case JpegColorSpace::kCmyk: needed = 4, s = {JCS_CMYK, JCS_CMYK, 1, 1}; break;
    case JpegColorSpace::kYcck: needed = 4, s = {JCS_CMYK, JCS_YCCK, 1, 1}; break;
    case JpegColorSpace::kAuto: break;
  }
  if (needed == 0 || channels != needed) {
    throw Error(fmt::format(
        "encode_jpeg: a {}-channel image cannot be stored in the requested JPEG color space; "
        "gray takes 1 channel, YCbCr and RGB 3, CMYK and YCCK 4",
        channels));
  }
  if (space == JpegColorSpace::kYcck && !options.adobe_marker) {
    throw Error("encode_jpeg: YCCK needs the Adobe marker (without it decoders read CMYK); "
                "set adobe_marker = true");
  }
  if (s.jpeg_space == JCS_YCbCr || s.jpeg_space == JCS_YCCK) {
    s.h_samp = options.subsampling == ChromaSubsampling::k444 ? 1 : 2;
    s.v_samp = options.subsampling == ChromaSubsampling::k420 ? 2 : 1;
  }
  return s;
}

// Everything libjpeg does. Returns false with err->message set on failure; *buffer may then
// hold a partial malloc'ed output that the caller frees.
bool compress(const Image& image, const JpegEncodeOptions& options, const Settings& settings,
              ErrorManager* err, unsigned char** buffer, unsigned long* size) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&err->pub);
  err->pub.error_exit = on_error_exit;
  err->pub.emit_message = on_emit_message;
  if (setjmp(err->jump) != 0) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, buffer, size);
  cinfo.image_width = static_cast<JDIMENSION>(image.width());
  cinfo.image_height = static_cast<JDIMENSION>(image.height());
  cinfo.input_components = image.channels();
  cinfo.in_color_space = settings.in_space;
  jpeg_set_defaults(&cinfo);
  jpeg_set_colorspace(&cinfo, settings.jpeg_space);
  // After jpeg_set_colorspace, which turns the marker on for RGB, CMYK and YCCK.
  if (settings.jpeg_space == JCS_CMYK && !options.adobe_marker) cinfo.write_Adobe_marker = FALSE;
  jpeg_set_quality(&cinfo, options.quality, TRUE);
  cinfo.comp_info[0].h_samp_factor = settings.h_samp;
  cinfo.comp_info[0].v_samp_factor = settings.v_samp;
  if (settings.jpeg_space == JCS_YCCK) {  // K is full resolution like Y
    cinfo.comp_info[3].h_samp_factor = settings.h_samp;
    cinfo.comp_info[3].v_samp_factor = settings.v_samp;
  }
  if (options.progressive) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    // libjpeg takes non-const rows but only reads them.
    JSAMPROW row = const_cast<JSAMPROW>(image.row(static_cast<int>(cinfo.next_scanline)));
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

}  // namespace

std::vector<uint8_t> encode_jpeg(const Image& image, const JpegEncodeOptions& options) {
  if (image.width() <= 0 || image.height() <= 0) {
    throw Error(fmt::format("encode_jpeg: the image is empty ({}x{})", image.width(),
                            image.height()));
  }
  if (image.width() > JPEG_MAX_DIMENSION || image.height() > JPEG_MAX_DIMENSION) {
    throw Error(fmt::format("encode_jpeg: {}x{} is larger than JPEG allows ({} per side)",
                            image.width(), image.height(), JPEG_MAX_DIMENSION));
  }
  if (options.quality < 1 || options.quality > 100) {
    throw Error(fmt::format("encode_jpeg: quality {} is outside 1..100", options.quality));
  }
  const Settings settings = settings_for(image, options);

  ErrorManager err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool ok = compress(image, options, settings, &err, &buffer, &size);
  // jpeg_mem_dest's buffer is malloc'ed and ours to free, also after a failure.
  const std::unique_ptr<unsigned char, void (*)(void*)> owned(buffer, std::free);
  if (!ok) throw Error(fmt::format("encode_jpeg: libjpeg failed: {}", err.message));
  return std::vector<uint8_t>(buffer, buffer + size);
}

}  // namespace stoker::data
