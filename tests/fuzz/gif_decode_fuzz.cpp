// The GIF decoder (src/data/decode/gif_decoder.cpp) on arbitrary bytes: whole_image_fuzz.h.
#include "whole_image_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return stoker::fuzz::fuzz_whole_image(data, size, stoker::data::read_gif_info, stoker::data::decode_gif);
}
