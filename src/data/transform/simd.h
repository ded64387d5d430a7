// data/transform/simd.h — how the transform stage gets vector code at -O2.
//
// Two tools, both checked with -fopt-info-vec / the assembly on GCC 12 and Clang 14:
//  - for_each_blocked: GCC 12's -O2 vectorises with the "very cheap" cost model, which
//    refuses any loop whose trip count is not a known multiple of the vector width, or that
//    needs a run-time alias check (and GCC forgets __restrict once it inlines a function).
//    So the loop is strip-mined into fixed blocks of kBlock plus a scalar tail, and the block
//    loop is marked free of loop-carried dependences (GCC ivdep / Clang assume_safety).
//    Good for straight arithmetic, min/max and int conversion. Not for selects between
//    computed floats: with -ftrapping-math (the default) those are not if-converted.
//  - f32x4: GCC/Clang vector extensions (SSE on x86-64, NEON on ARM) for the kernels the
//    vectoriser cannot see through: the horizontal filter's 3-channel taps, per-pixel colour
//    operations on interleaved RGB (deinterleave3 / interleave3) and HSV hue.
//    __builtin_shufflevector needs GCC >= 12 or Clang.
#pragma once

#include <cstddef>
#include <cstring>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace stoker::data::simd {

#if defined(__clang__)
#define STOKER_LOOP_INDEPENDENT _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define STOKER_LOOP_INDEPENDENT _Pragma("GCC ivdep")
#else
#define STOKER_LOOP_INDEPENDENT
#endif

inline constexpr size_t kBlock = 16;

// Calls body(i) for every i in [0, n), in blocks of kBlock with a constant inner trip
// count, then the tail. `body` must be small, and body(i) must only read and write element i
// of its arrays (in place is fine): the compiler is told the iterations are independent.
template <typename Body>
inline void for_each_blocked(size_t n, Body&& body) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    STOKER_LOOP_INDEPENDENT
    for (size_t j = 0; j < kBlock; ++j) body(i + j);
  }
  for (; i < n; ++i) body(i);
}

using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = int __attribute__((vector_size(16)));  // also what comparing two f32x4 gives

inline f32x4 load4(const float* p) {
  f32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, f32x4 v) { std::memcpy(p, &v, sizeof v); }
inline f32x4 splat4(float x) { return f32x4{x, x, x, x}; }
// std::min(a, b) / std::max(a, b) per lane, NaN included: a when either is NaN, as minps(b, a)
// and maxps(b, a) give. GCC 12 writes the selects as and/andnot/or, hence SSE's own.
#if defined(__SSE__)
inline f32x4 min4(f32x4 a, f32x4 b) { return _mm_min_ps(b, a); }
inline f32x4 max4(f32x4 a, f32x4 b) { return _mm_max_ps(b, a); }
#else
inline f32x4 min4(f32x4 a, f32x4 b) { return b < a ? b : a; }
inline f32x4 max4(f32x4 a, f32x4 b) { return a < b ? b : a; }
#endif
inline f32x4 clamp4(f32x4 v, float lo, float hi) { return min4(max4(v, splat4(lo)), splat4(hi)); }

// 4 interleaved RGB pixels (12 floats in v0, v1, v2) <-> one vector per channel.
inline void deinterleave3(f32x4 v0, f32x4 v1, f32x4 v2, f32x4* r, f32x4* g, f32x4* b) {
  *r = __builtin_shufflevector(__builtin_shufflevector(v0, v1, 0, 3, 6, 6), v2, 0, 1, 2, 5);
  *g = __builtin_shufflevector(__builtin_shufflevector(v0, v1, 1, 4, 7, 7), v2, 0, 1, 2, 6);
  *b = __builtin_shufflevector(__builtin_shufflevector(v0, v1, 2, 5, 5, 5), v2, 0, 1, 4, 7);
}
inline void interleave3(f32x4 r, f32x4 g, f32x4 b, f32x4* v0, f32x4* v1, f32x4* v2) {
  *v0 = __builtin_shufflevector(__builtin_shufflevector(r, g, 0, 4, 1, 5), b, 0, 1, 4, 2);
  *v1 = __builtin_shufflevector(__builtin_shufflevector(g, b, 1, 5, 2, 6), r, 0, 1, 6, 2);
  *v2 = __builtin_shufflevector(b, __builtin_shufflevector(r, g, 3, 7, 3, 7), 2, 4, 5, 3);
}

}  // namespace stoker::data::simd
