#include "stoker/core/digest.h"

#include <algorithm>
#include <cstring>

namespace stoker {

namespace {

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

uint64_t little_endian(const unsigned char* bytes, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | bytes[i];
  return v;
}

uint64_t mix1(uint64_t k1) { return rotl(k1 * kC1, 31) * kC2; }
uint64_t mix2(uint64_t k2) { return rotl(k2 * kC2, 33) * kC1; }

}  // namespace

void Digest::block(const unsigned char* bytes) {
  h1_ ^= mix1(little_endian(bytes, 8));
  h1_ = rotl(h1_, 27) + h2_;
  h1_ = h1_ * 5 + 0x52dce729;
  h2_ ^= mix2(little_endian(bytes + 8, 8));
  h2_ = rotl(h2_, 31) + h1_;
  h2_ = h2_ * 5 + 0x38495ab5;
}

void Digest::update(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  length_ += n;
  if (tail_size_ > 0) {
    const size_t take = std::min(n, tail_.size() - tail_size_);
    std::memcpy(tail_.data() + tail_size_, p, take);
    tail_size_ += take;
    p += take;
    n -= take;
    if (tail_size_ < tail_.size()) return;
    block(tail_.data());
    tail_size_ = 0;
  }
  for (; n >= 16; p += 16, n -= 16) block(p);
  std::memcpy(tail_.data(), p, n);
  tail_size_ = n;
}

std::string Digest::hex() const {
  uint64_t h1 = h1_, h2 = h2_;
  if (tail_size_ > 8) h2 ^= mix2(little_endian(tail_.data() + 8, tail_size_ - 8));
  if (tail_size_ > 0) h1 ^= mix1(little_endian(tail_.data(), std::min<size_t>(tail_size_, 8)));
  h1 ^= length_;
  h2 ^= length_;
  h1 += h2;
  h2 += h1;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 += h2;
  h2 += h1;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint64_t h : {h1, h2}) {
    for (int i = 0; i < 8; ++i, h >>= 8) {
      out += kHex[(h >> 4) & 15];
      out += kHex[h & 15];
    }
  }
  return out;
}

}  // namespace stoker
