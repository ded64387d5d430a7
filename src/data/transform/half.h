// data/transform/half.h — IEEE 754 binary16 conversion without F16C or _Float16.
//
// float_to_half rounds to nearest, ties to even (what torch's .half() and F16C do), so a
// float16 batch matches one converted on the device bit for bit. The subnormal path adds a
// magic constant and lets the FPU do the rounding: it relies on the default rounding mode.
// Branch-free (selects are bit operations), so a loop of conversions vectorises.
#pragma once

#include <bit>
#include <cstdint>

namespace stoker::data {

namespace half_detail {
// cond ? a : b as bit operations: a select the vectoriser does not have to if-convert.
inline uint32_t select(bool cond, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(cond);
  return (a & mask) | (b & ~mask);
}
}  // namespace half_detail

inline uint16_t float_to_half(float value) {
  // After Fabian Giesen's float_to_half_fast3_rtne (public domain).
  constexpr uint32_t kF32Infinity = 255u << 23;
  constexpr uint32_t kF16Overflow = (127u + 16u) << 23;  // 65536.0f: rounds to infinity
  constexpr uint32_t kSmallestNormal = 113u << 23;       // 2^-14 as a float
  constexpr uint32_t kDenormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  constexpr uint32_t kRebias = (15u - 127u) << 23;  // wraps: adds (15 - 127) << 23

  uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint32_t sign = bits & 0x8000'0000u;
  bits ^= sign;

  // Infinity or NaN (NaN stays a quiet NaN).
  const uint32_t special = half_detail::select(bits > kF32Infinity, 0x7E00u, 0x7C00u);
  // Subnormal or zero: adding 0.5 shifts the mantissa into place, rounding by the FPU.
  const float shifted = std::bit_cast<float>(bits) + std::bit_cast<float>(kDenormMagic);
  const uint32_t subnormal = std::bit_cast<uint32_t>(shifted) - kDenormMagic;
  // Normal: rebias the exponent and round to nearest even by hand.
  const uint32_t mantissa_odd = (bits >> 13) & 1u;
  const uint32_t normal = (bits + kRebias + 0xFFFu + mantissa_odd) >> 13;

  const uint32_t magnitude = half_detail::select(bits >= kF16Overflow, special,
                                                 half_detail::select(bits < kSmallestNormal, subnormal, normal));
  return static_cast<uint16_t>(magnitude | (sign >> 16));
}

// Exact; for tests and debugging output.
inline float half_to_float(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  const uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    return std::bit_cast<float>(sign | 0x7F80'0000u | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace stoker::data
