// Private: the PNG half of ImageDecoder (libpng's classic read API).
//
// libpng cannot rewind a png_struct, so each call creates and destroys one; the scratch
// buffers that grow with the image are kept here. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/image.h"

namespace stoker::data {

class PngDecoder {
 public:
  Status read_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info);
  // `request` has been validated by ImageDecoder (channels 1 or 3).
  Status decode(std::span<const uint8_t> bytes, const DecodeRequest& request, const DecodeOptions& options,
                DecodedImage* out);

 private:
  std::vector<uint8_t> scratch_;        // rows libpng gives that stoker converts: RGB wanted as gray, 16-bit gray
  std::vector<uint8_t*> row_pointers_;  // interlaced images: libpng fills all rows at once
};

}  // namespace stoker::data
