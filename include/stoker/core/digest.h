// A 128-bit digest of a stream of bytes: MurmurHash3_x64_128 (seed 0), fed in pieces of any
// size. It tells data apart (what a checkpoint recorded of a pass's samples against the
// samples a resume holds) at several GB/s; it is no cryptographic hash and guards against
// accidents, not against an adversary. The same bytes give the same digest on any machine
// and in any process (blocks are read little-endian).
// Thread safety: one Digest per thread; it owns nothing outside itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stoker {

class Digest {
 public:
  // Appends `bytes` to the stream.
  void update(std::string_view bytes);
  void update(const void* data, size_t size) { update(std::string_view(static_cast<const char*>(data), size)); }
  // The digest of everything appended so far, as 32 lowercase hex digits (h1 then h2, each
  // written as its 8 little-endian bytes, as MurmurHash3's reference writes its output).
  // The stream may go on after it.
  std::string hex() const;

 private:
  void block(const unsigned char* bytes);  // one 16-byte block into h1_, h2_

  uint64_t h1_ = 0, h2_ = 0;
  uint64_t length_ = 0;                   // bytes appended
  std::array<unsigned char, 16> tail_{};  // the bytes past the last whole block
  size_t tail_size_ = 0;
};

}  // namespace stoker
