// data/transform/u8_cast.h — float to uint8 the two ways torch casts, shared by the automatic
// augmentations' colour operations and the warp.
//
// truncate_u8: a clamp, then truncation (Tensor.to(uint8)). round_u8: round half to even
// first (_cast_squeeze_out). round_half_up_u8: the sample transformer's rounding (its uint8
// output, and its float image rounded into uint8 planes), for v in [0, 255] give or take float
// error. Both are written so the blocked loops vectorise: min/max and an
// int conversion, and rounding by adding and taking away 1.5 * 2^23, which leaves the nearest
// integer (ties to even, the default rounding mode) for |v| < 2^22.
#pragma once

#include <algorithm>
#include <cstdint>

namespace stoker::data {

inline constexpr float kU8Max = 255.0f;
inline constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23

inline uint8_t truncate_u8(float v) {
  return static_cast<uint8_t>(static_cast<int>(std::min(std::max(v, 0.0f), kU8Max)));
}
inline float round_even(float v) { return (v + kRoundMagic) - kRoundMagic; }
inline uint8_t round_u8(float v) { return truncate_u8(round_even(v)); }
// The int conversion is safe for such v; the clamp is on ints, which the vectoriser handles
// (float selects it does not).
inline uint8_t round_half_up_u8(float v) {
  return static_cast<uint8_t>(std::clamp(static_cast<int>(v + 0.5f), 0, 255));
}

}  // namespace stoker::data
