// stoker/core/rng.h — deterministic random numbers for the data pipeline.
//
// Every random decision for sample i in epoch e comes from SampleRng(seed, e, i), so a batch
// is bit-identical whatever the number of workers or the order they run in. The generator is
// xoshiro256** seeded through SplitMix64; all derived draws (uniform doubles, bounded ints)
// are computed here rather than with <random> distributions, whose output differs between
// standard libraries.
//
// Thread safety: a SampleRng is a value; use one per thread (or per sample).
#pragma once

#include <cstdint>

namespace stoker {

// SplitMix64: each call adds kSplitMix64Gamma to `state` and returns the finaliser's mix of it.
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ull;

inline uint64_t splitmix64_finalise(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t splitmix64(uint64_t& state) { return splitmix64_finalise(state += kSplitMix64Gamma); }

// The seed of rank `rank`'s sample streams when every rank is given one `seed` but must draw
// its own (stoker.DataLoader under a script's sampler, which may give a sample to several
// ranks): `seed` on rank 0, else the finaliser's mix of seed + rank * kSplitMix64Gamma.
inline uint64_t rank_seed(uint64_t seed, uint64_t rank) {
  return rank == 0 ? seed : splitmix64_finalise(seed + rank * kSplitMix64Gamma);
}

class SampleRng {
  __extension__ typedef unsigned __int128 Wide;  // GCC/Clang builtin; __extension__ keeps -Wpedantic quiet

 public:
  // Stream for (seed, a, b): e.g. (seed, epoch, sample index) or (seed, epoch, kShuffle).
  SampleRng(uint64_t seed, uint64_t a, uint64_t b) {
    uint64_t mix = seed;
    uint64_t s = splitmix64(mix) ^ a;
    s = splitmix64(s) ^ b;
    for (auto& word : state_) word = splitmix64(s);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [0, n) without modulo bias (Lemire). n must be > 0.
  uint64_t below(uint64_t n) {
    Wide m = static_cast<Wide>(next_u64()) * n;
    uint64_t low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<Wide>(next_u64()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // True with probability p.
  bool bernoulli(double p) { return uniform() < p; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace stoker
