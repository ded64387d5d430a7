// safetensors files written byte by byte, without libtorch: for the tests of the layout parser
// (train/common/safetensors_layout.h) and the fuzz seeds.
#pragma once

#include <cstdint>
#include <string>

namespace stoker::testing {

// A file whose JSON header is `header` (padded with spaces to a multiple of 8, as the reference
// writer pads it) and whose data is `data`: [8-byte little-endian header length][header][data].
inline std::string safetensors_bytes(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  return bytes + header + data;
}

}  // namespace stoker::testing
