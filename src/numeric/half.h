// float16 and bfloat16 bit patterns widened exactly to float32. Used to turn
// QLinearMatMul scales into float32 once per call (SEMANTICS.md §4.2: scales
// are widened, never computed in half precision). Plain bit manipulation:
// the conversion is exact for every code, subnormals and NaN included.
#pragma once

#include <bit>
#include <cstdint>

namespace qmatmul::numeric {

inline float bfloat16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

inline float float16_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1Fu;
  uint32_t mantissa = bits & 0x3FFu;
  uint32_t out;
  if (exponent == 0x1F) {
    out = sign | 0x7F800000u | (mantissa << 13);  // Inf or NaN (payload kept)
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    out = sign;  // signed zero
  } else {
    // Subnormal: value = mantissa * 2^-24. Normalise into float32's range.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3FFu;
    out = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

}  // namespace qmatmul::numeric
