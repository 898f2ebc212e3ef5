// The four ONNX float8 formats (SEMANTICS.md §5): decoding to float32 and
// encoding from float32/float64. Decoding is a 256-entry table per format
// (every float8 value is exact in float32). Encoding is one rounding of the
// double to nearest, ties to even, with the saturating rules of ONNX Cast
// (saturate=1): finite overflow and +-Inf give +-max, NaN gives the format's
// NaN code (0x7F for e4m3fn and e5m2, 0x80 for the fnuz types), and -0 (or a
// negative value rounding to 0) gives +0 in the fnuz types. The encoder works
// on the double's exponent and a power-of-two scaling, so it never rounds
// twice; the AVX-512 epilogue (src/gemm/x86/float8_gemm_avx512.cpp) does the
// same steps on eight doubles at a time.
#pragma once

#include <bit>
#include <cstdint>

#include "qmatmul/types.h"

namespace qmatmul::numeric {

struct Float8Format {
  ElementType type;
  int mantissa_bits;   // 3 (e4m3) or 2 (e5m2)
  int min_exponent;    // exponent of the smallest normal: 1 - bias
  uint8_t max_code;    // largest finite positive code
  uint8_t nan_code;    // the NaN the encoder writes
  bool fnuz;           // one NaN (0x80), no negative zero, no infinities
  double max_value;    // value of max_code
  const float* table;  // 256 decoded values
};

// The format of a float8 type; throws qmatmul::Error for any other type.
const Float8Format& float8_format(ElementType type);

// All 256 codes of a float8 type decoded to float32 (NaN codes to a quiet NaN,
// e5m2's infinities to +-Inf).
inline const float* float8_table(ElementType type) { return float8_format(type).table; }

inline float float8_to_float(uint8_t code, ElementType type) { return float8_table(type)[code]; }

// One rounding of v to the format, ties to even, saturating (see above).
inline uint8_t float8_encode(double v, const Float8Format& f) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const uint64_t magnitude_bits = bits & 0x7FFFFFFFFFFFFFFFull;
  if (magnitude_bits > 0x7FF0000000000000ull) return f.nan_code;  // NaN
  const bool negative = (bits >> 63) != 0;
  const double a = std::bit_cast<double>(magnitude_bits);
  uint32_t code;
  if (a >= f.max_value) {  // finite overflow and +-Inf saturate
    code = f.max_code;
  } else {
    // e = max(floor(log2 a), min_exponent); the code is (e - min_exponent)
    // * 2^mbits plus round(a / 2^(e - mbits)), which carries into the next
    // binade by itself when the rounding goes up, and is the subnormal count
    // below min_exponent.
    int e = static_cast<int>(magnitude_bits >> 52) - 1023;  // double subnormals and 0 fall below
    if (e < f.min_exponent) e = f.min_exponent;
    const int shift = f.mantissa_bits - e;  // |shift| <= 20: 2^shift is a normal double
    const double scale = std::bit_cast<double>(static_cast<uint64_t>(1023 + shift) << 52);
    const double scaled = a * scale;  // exact (power of two, no underflow: result < 2^(mbits+1))
    constexpr double kRoundMagic = 4503599627370496.0;  // 2^52: x + 2^52 - 2^52 is RNE for 0 <= x < 2^52
    const double n = (scaled + kRoundMagic) - kRoundMagic;
    code = (static_cast<uint32_t>(e - f.min_exponent) << f.mantissa_bits) + static_cast<uint32_t>(n);
    if (code > f.max_code) code = f.max_code;  // unreachable (a < max), kept as a guard
  }
  if (negative && !(f.fnuz && code == 0)) code |= 0x80u;
  return static_cast<uint8_t>(code);
}

inline uint8_t float8_from_double(double v, ElementType type) { return float8_encode(v, float8_format(type)); }
// float32 widens exactly to double, so this is one rounding too.
inline uint8_t float8_from_float(float v, ElementType type) {
  return float8_encode(static_cast<double>(v), float8_format(type));
}

}  // namespace qmatmul::numeric
