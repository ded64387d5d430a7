// The safetensors layout (train/common/safetensors_layout.h), in memory: the input is a whole
// file, its first 8 bytes the header length, then the JSON header, the entries and the tiling
// of the data that follows. The torch side only copies the byte ranges this checked.
#include <cstring>
#include <string_view>

#include "fuzz_input.h"
#include "train/common/safetensors_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::expect_clean_outcome([&] {
    uint8_t prefix[8] = {};
    std::memcpy(prefix, data, size < 8 ? size : 8);
    const uint64_t length = stoker::train::safetensors_header_length("fuzz.safetensors", prefix, size);
    const std::string_view header(reinterpret_cast<const char*>(data) + 8, length);
    const auto layout = stoker::train::parse_safetensors_header("fuzz.safetensors", header, size);
    for (const auto& entry : layout.tensors) {  // what the reader then copies: inside the input
      if (layout.data_start + entry.end > size) std::abort();
    }
  });
  return 0;
}
