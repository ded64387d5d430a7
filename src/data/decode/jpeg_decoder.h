// Private: the JPEG half of ImageDecoder (libjpeg-turbo's jpeglib.h API).
//
// Owns one jpeg_decompress_struct for its whole life: creating it costs a few allocations and
// libjpeg keeps its working memory in pools that jpeg_abort_decompress() rewinds, so reusing
// it is what makes steady-state decoding allocation-free. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "jpeg_layout.h"
#include "restart_splice.h"
#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/image.h"

namespace stoker::data {

struct LibjpegState;  // jpeglib.h stays out of this header

class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  Status read_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
  // How the file is coded (JpegLayout), from the same header parse as decode(), plus the
  // check for an end-of-image marker that decode() makes. Never fails: what decode() would
  // refuse before its first pixel goes into layout->damage. Ignores max_pixels (the caller
  // compares the size).
  void read_layout(std::span<const uint8_t> bytes, JpegLayout* layout);
  // `request` has been validated by ImageDecoder (channels 1 or 3).
  Status decode(std::span<const uint8_t> bytes, const DecodeRequest& request, const DecodeOptions& options,
                DecodedImage* out);

 private:
  std::unique_ptr<LibjpegState> lib_;
  std::vector<uint8_t> cmyk_rows_;  // CMYK scanlines before conversion to RGB/gray
  RestartSplicer splicer_;          // files with restart markers: decode only the window's
  std::vector<uint8_t> spliced_;    // the window's intervals as a JPEG of their own
};

}  // namespace stoker::data
