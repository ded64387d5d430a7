// One fuzz target per format decoded whole (src/data/decode/whole_image.h): the input is the
// file. Its header (read_*_info), then the decode into RGB; a decode that succeeds gives an
// image of the header's size.
#pragma once

#include <cstdlib>
#include <span>

#include "data/decode/whole_image.h"

namespace stoker::fuzz {

// Smaller than the default limit, so that one input decodes in milliseconds; the limit itself
// is checked from the header, before anything is decoded.
constexpr int64_t kWholeImageMaxPixels = int64_t{1} << 22;

template <typename ReadInfo, typename Decode>
int fuzz_whole_image(const uint8_t* data, size_t size, ReadInfo read_info, Decode decode) {
  const std::span<const uint8_t> file(data, size);
  stoker::data::DecodeOptions options;
  options.max_pixels = kWholeImageMaxPixels;
  stoker::data::ImageInfo info;
  const bool header = read_info(file, options, &info).ok();
  stoker::data::Image rgb;
  if (decode(file, options, &rgb).ok()) {
    if (!header || rgb.width() != info.width || rgb.height() != info.height || rgb.channels() != 3) std::abort();
  }
  return 0;
}

}  // namespace stoker::fuzz
