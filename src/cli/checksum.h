// A fast, order-sensitive 64-bit checksum of batch bytes, so two runs can be compared for
// determinism. Not cryptographic. Processes 8 bytes at a time (several GB/s) so it does not
// slow the benchmark it runs in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace stoker::cli {

class Checksum {
 public:
  void update(const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    uint64_t lanes[4] = {state_ ^ 0x9E3779B97F4A7C15ull, state_ + size, state_ * 31, ~state_};
    size_t i = 0;
    for (; i + 32 <= size; i += 32) {
      for (int k = 0; k < 4; ++k) {
        uint64_t word;
        std::memcpy(&word, bytes + i + 8 * k, 8);
        lanes[k] = mix(lanes[k] ^ word);
      }
    }
    uint64_t tail = 0;
    for (; i < size; ++i) tail = (tail << 8 | bytes[i]) * 0x100000001B3ull;
    state_ = mix(lanes[0] ^ mix(lanes[1] ^ mix(lanes[2] ^ mix(lanes[3] ^ tail))));
  }
  uint64_t value() const { return state_; }

 private:
  static uint64_t mix(uint64_t x) {
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 31);
  }
  uint64_t state_ = 0xCBF29CE484222325ull;
};

}  // namespace stoker::cli
