// The oracle's number formats: float16 and bfloat16 widened to float32, and the
// four ONNX float8 formats decoded and encoded, all written from the bit layouts
// in SEMANTICS.md section 5 (not from the library's src/numeric). Decoding
// builds the value with std::ldexp, which is exact. Encoding does not do bit
// tricks: it scans the format's finite codes in increasing order, finds the two
// neighbours of |v| and compares |v| with their midpoint (exact in double), so
// the result is one correct rounding of the double, ties to the even code.
#include <cmath>
#include <cstring>
#include <limits>

#include "reference/reference.h"

namespace qmatmul::reference {
namespace {

struct Float8Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool fnuz;         // one NaN (0x80), no negative zero, no infinities
  bool has_infinity; // e5m2 only: S.11111.00 is Inf
  uint8_t max_code;  // largest finite positive code
};

Float8Format format_of(ElementType t) {
  switch (t) {
    case ElementType::Float8E4M3FN: return {4, 3, 7, false, false, 0x7E};    // 448
    case ElementType::Float8E4M3FNUZ: return {4, 3, 8, true, false, 0x7F};   // 240
    case ElementType::Float8E5M2: return {5, 2, 15, false, true, 0x7B};      // 57344
    case ElementType::Float8E5M2FNUZ: return {5, 2, 16, true, false, 0x7F};  // 57344
    default: break;
  }
  throw Error("reference: " + type_name(t) + " is not a float8 type");
}

// Magnitude of a code with the sign bit clear, assumed finite.
double magnitude(uint8_t code, const Float8Format& f) {
  const int exponent = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mantissa = code & ((1 << f.mantissa_bits) - 1);
  if (exponent == 0) {  // subnormal (or zero)
    return std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  }
  const int significand = mantissa + (1 << f.mantissa_bits);
  return std::ldexp(static_cast<double>(significand), exponent - f.bias - f.mantissa_bits);
}

}  // namespace

float float16_to_float(uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  float value;
  if (exponent == 0x1F) {
    value = mantissa == 0 ? std::numeric_limits<float>::infinity()
                          : std::numeric_limits<float>::quiet_NaN();
  } else if (exponent == 0) {  // subnormal: mantissa * 2^-24
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else {  // (1024 + mantissa) * 2^(exponent - 15 - 10)
    value = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  }
  return negative ? -value : value;
}

float bfloat16_to_float(uint16_t bits) {
  // bfloat16 is the top half of a float32.
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

float float8_to_float(uint8_t code, ElementType t) {
  const Float8Format f = format_of(t);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.fnuz && code == 0x80) return nan;
  const bool negative = (code & 0x80) != 0;
  const uint8_t unsigned_code = code & 0x7F;
  const int exponent = unsigned_code >> f.mantissa_bits;
  const int mantissa = unsigned_code & ((1 << f.mantissa_bits) - 1);
  const int top_exponent = (1 << f.exponent_bits) - 1;
  if (!f.fnuz && f.has_infinity && exponent == top_exponent) {  // e5m2: S.11111.xx
    if (mantissa != 0) return nan;
    return negative ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity();
  }
  if (!f.fnuz && !f.has_infinity && unsigned_code == 0x7F) return nan;  // e4m3fn: S.1111.111
  // Every finite float8 value has at most 4 significant bits and a small
  // exponent, so the conversion to float is exact.
  const float value = static_cast<float>(magnitude(unsigned_code, f));
  return negative ? -value : value;
}

uint8_t float8_from_double(double v, ElementType t) {
  const Float8Format f = format_of(t);
  if (std::isnan(v)) return f.fnuz ? 0x80 : 0x7F;
  const bool negative = std::signbit(v);
  const double a = std::fabs(v);
  uint8_t code;
  if (a >= magnitude(f.max_code, f)) {
    code = f.max_code;  // saturate: finite overflow and Inf alike
  } else {
    // Largest code whose magnitude is <= a; codes 0..max_code increase strictly.
    uint8_t low = 0;
    while (magnitude(static_cast<uint8_t>(low + 1), f) <= a) ++low;
    const uint8_t high = static_cast<uint8_t>(low + 1);  // <= max_code since a < max
    const double low_value = magnitude(low, f);
    const double high_value = magnitude(high, f);
    const double midpoint = (low_value + high_value) / 2;  // exact: few significant bits
    if (a == low_value || a < midpoint) {
      code = low;
    } else if (a > midpoint) {
      code = high;
    } else {
      code = (low % 2 == 0) ? low : high;  // tie: the even code
    }
  }
  if (code == 0 && f.fnuz) return 0x00;  // no negative zero
  return negative ? static_cast<uint8_t>(code | 0x80) : code;
}

}  // namespace qmatmul::reference
