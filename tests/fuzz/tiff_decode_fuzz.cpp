// The TIFF decoder (src/data/decode/tiff_decoder.cpp) on arbitrary bytes: whole_image_fuzz.h.
#include "whole_image_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return stoker::fuzz::fuzz_whole_image(data, size, stoker::data::read_tiff_info, stoker::data::decode_tiff);
}
