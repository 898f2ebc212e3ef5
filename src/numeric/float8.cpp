// The float8 format descriptions and their decode tables, built at compile
// time from the bit layouts (SEMANTICS.md §5): e4m3fn (bias 7, NaN S.1111.111,
// no Inf), e4m3fnuz (bias 8), e5m2 (bias 15, IEEE-like Inf and NaN), e5m2fnuz
// (bias 16). In the fnuz types 0x80 is the only NaN and every other code is
// finite. Each value is assembled as float32 bits, so decoding is exact.
#include "numeric/float8.h"

#include <array>
#include <limits>

namespace qmatmul::numeric {
namespace {

constexpr uint32_t kQuietNaN = 0x7FC00000u;

// float32 bits of the magnitude of `code` (sign bit clear), assumed finite.
constexpr uint32_t finite_magnitude_bits(uint32_t code, int mbits, int bias) {
  const uint32_t exponent = code >> mbits;
  uint32_t mantissa = code & ((1u << mbits) - 1u);
  if (exponent != 0) return ((exponent - static_cast<uint32_t>(bias) + 127u) << 23) | (mantissa << (23 - mbits));
  if (mantissa == 0) return 0;
  // Subnormal: mantissa * 2^(1 - bias - mbits); normalise the leading bit.
  int e = 1 - bias;  // exponent of the value 1.xxx * 2^e once normalised
  while ((mantissa & (1u << mbits)) == 0) {
    mantissa <<= 1;
    --e;
  }
  mantissa &= (1u << mbits) - 1u;
  return (static_cast<uint32_t>(e + 127) << 23) | (mantissa << (23 - mbits));
}

struct Layout {
  int mbits, bias;
  bool fnuz, has_inf;
};

constexpr std::array<float, 256> make_table(Layout l) {
  std::array<float, 256> t{};
  const uint32_t top = (1u << (7 - l.mbits)) - 1u;  // all-ones exponent field
  for (uint32_t code = 0; code < 256; ++code) {
    const uint32_t sign = (code & 0x80u) << 24;
    const uint32_t mag = code & 0x7Fu;
    uint32_t bits;
    if (l.fnuz) {
      bits = code == 0x80u ? kQuietNaN : sign | finite_magnitude_bits(mag, l.mbits, l.bias);
    } else if (l.has_inf && (mag >> l.mbits) == top) {
      bits = sign | ((mag & 3u) == 0 ? 0x7F800000u : kQuietNaN);  // e5m2: S.11111.00 Inf, else NaN
    } else if (!l.has_inf && mag == 0x7Fu) {
      bits = sign | kQuietNaN;  // e4m3fn: S.1111.111
    } else {
      bits = sign | finite_magnitude_bits(mag, l.mbits, l.bias);
    }
    t[code] = std::bit_cast<float>(bits);
  }
  return t;
}

constexpr std::array<float, 256> kE4M3FN = make_table({3, 7, false, false});
constexpr std::array<float, 256> kE4M3FNUZ = make_table({3, 8, true, false});
constexpr std::array<float, 256> kE5M2 = make_table({2, 15, false, true});
constexpr std::array<float, 256> kE5M2FNUZ = make_table({2, 16, true, false});

static_assert(kE4M3FN[0x38] == 1.0f && kE4M3FN[0x7E] == 448.0f && kE4M3FN[0x01] == 0.001953125f);
static_assert(kE4M3FNUZ[0x40] == 1.0f && kE4M3FNUZ[0x7F] == 240.0f);
static_assert(kE5M2[0x3C] == 1.0f && kE5M2[0x7B] == 57344.0f && kE5M2[0x7C] == std::numeric_limits<float>::infinity());
static_assert(kE5M2FNUZ[0x40] == 1.0f && kE5M2FNUZ[0x7F] == 57344.0f);

const Float8Format kFormats[4] = {
    {ElementType::Float8E4M3FN, 3, 1 - 7, 0x7E, 0x7F, false, 448.0, kE4M3FN.data()},
    {ElementType::Float8E4M3FNUZ, 3, 1 - 8, 0x7F, 0x80, true, 240.0, kE4M3FNUZ.data()},
    {ElementType::Float8E5M2, 2, 1 - 15, 0x7B, 0x7F, false, 57344.0, kE5M2.data()},
    {ElementType::Float8E5M2FNUZ, 2, 1 - 16, 0x7F, 0x80, true, 57344.0, kE5M2FNUZ.data()},
};

}  // namespace

const Float8Format& float8_format(ElementType type) {
  switch (type) {
    case ElementType::Float8E4M3FN: return kFormats[0];
    case ElementType::Float8E4M3FNUZ: return kFormats[1];
    case ElementType::Float8E5M2: return kFormats[2];
    case ElementType::Float8E5M2FNUZ: return kFormats[3];
    default: break;
  }
  throw Error("float8: " + type_name(type) + " is not a float8 type");
}

}  // namespace qmatmul::numeric
