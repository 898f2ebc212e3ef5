// Float8 conversions of QLinearMatMul-21 (SEMANTICS.md §5): every code of the
// four formats decoded and re-encoded, every midpoint between neighbours and
// its immediate neighbours, saturation, NaN, signed zero, subnormals, checked
// against the reference oracle and the hand-worked values of the spec, for the
// scalar encoder and the AVX-512 one. The operator itself is tested in
// test_float8_gemm.cpp; helpers both files use are in float8_test_support.h.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "float8_test_support.h"
#include "gemm/float8_gemm.h"
#include "numeric/float8.h"
#include "reference/reference.h"
#include "test_support.h"

namespace qmatmul::testing {
namespace {

namespace ref = qmatmul::reference;

// Both encoders under test: scalar, and AVX-512 when this machine runs it.
std::vector<uint8_t> encode_all(const std::vector<double>& v, ET t, bool avx512) {
  std::vector<uint8_t> out(v.size());
  if (avx512) {
    gemm::float8_encode_avx512(v.data(), static_cast<int64_t>(v.size()), t, out.data());
  } else {
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = numeric::float8_from_double(v[i], t);
  }
  return out;
}
std::vector<bool> encoders() {
  std::vector<bool> e = {false};
  if (gemm::float8_avx512_usable()) e.push_back(true);
  return e;
}

// Expected encoding, NaN-tolerant: any NaN code of the type matches a NaN.
void expect_code(uint8_t got, uint8_t want, ET t, const std::string& what) {
  if (is_nan_code(want, t)) {
    EXPECT_TRUE(is_nan_code(got, t)) << what;
  } else {
    EXPECT_EQ(int(got), int(want)) << what << " (" << type_name(t) << ")";
  }
}

TEST(Float8Conversion, HandWorkedValues) {
  EXPECT_EQ(numeric::float8_to_float(0x38, ET::Float8E4M3FN), 1.0f);
  EXPECT_EQ(numeric::float8_to_float(0x7E, ET::Float8E4M3FN), 448.0f);
  EXPECT_EQ(numeric::float8_to_float(0xFE, ET::Float8E4M3FN), -448.0f);
  EXPECT_EQ(numeric::float8_to_float(0x01, ET::Float8E4M3FN), 0.001953125f);  // 2^-9
  EXPECT_EQ(numeric::float8_to_float(0x40, ET::Float8E4M3FNUZ), 1.0f);
  EXPECT_EQ(numeric::float8_to_float(0x7F, ET::Float8E4M3FNUZ), 240.0f);
  EXPECT_EQ(numeric::float8_to_float(0x3C, ET::Float8E5M2), 1.0f);
  EXPECT_EQ(numeric::float8_to_float(0x7B, ET::Float8E5M2), 57344.0f);
  EXPECT_EQ(numeric::float8_to_float(0x7C, ET::Float8E5M2), std::numeric_limits<float>::infinity());
  EXPECT_EQ(numeric::float8_to_float(0x40, ET::Float8E5M2FNUZ), 1.0f);
  EXPECT_EQ(numeric::float8_to_float(0x7F, ET::Float8E5M2FNUZ), 57344.0f);
  EXPECT_TRUE(std::isnan(numeric::float8_to_float(0x7F, ET::Float8E4M3FN)));
  EXPECT_TRUE(std::isnan(numeric::float8_to_float(0x80, ET::Float8E4M3FNUZ)));
  EXPECT_TRUE(std::isnan(numeric::float8_to_float(0x80, ET::Float8E5M2FNUZ)));
  EXPECT_TRUE(std::signbit(numeric::float8_to_float(0x80, ET::Float8E4M3FN)));
  EXPECT_EQ(numeric::float8_from_double(1.0, ET::Float8E4M3FN), 0x38);
  EXPECT_EQ(numeric::float8_from_double(-448.0, ET::Float8E4M3FN), 0xFE);
  EXPECT_EQ(numeric::float8_from_double(464.0, ET::Float8E4M3FN), 0x7E);  // midpoint to "480": saturates
  EXPECT_EQ(numeric::float8_from_double(1.0, ET::Float8E4M3FNUZ), 0x40);
  EXPECT_EQ(numeric::float8_from_double(1.0, ET::Float8E5M2), 0x3C);
  EXPECT_EQ(numeric::float8_from_double(1.0, ET::Float8E5M2FNUZ), 0x40);
  EXPECT_EQ(numeric::float8_from_double(1.0625, ET::Float8E4M3FN), 0x38);  // tie -> even (1.0)
  EXPECT_EQ(numeric::float8_from_double(1.1875, ET::Float8E4M3FN), 0x3A);  // tie 1.125|1.25 -> 1.25
  EXPECT_EQ(numeric::float8_from_double(-0.0, ET::Float8E4M3FN), 0x80);
  EXPECT_EQ(numeric::float8_from_double(-0.0, ET::Float8E4M3FNUZ), 0x00);
  EXPECT_EQ(numeric::float8_from_double(-1e-30, ET::Float8E5M2FNUZ), 0x00);
  EXPECT_EQ(numeric::float8_from_double(-1e-30, ET::Float8E5M2), 0x80);
  EXPECT_EQ(numeric::float8_from_float(-std::numeric_limits<float>::infinity(), ET::Float8E5M2), 0xFB);
}

TEST(Float8Conversion, DecodeMatchesReferenceOnEveryCode) {
  for (ET t : kFloat8Types)
    for (int c = 0; c < 256; ++c) {
      const float got = numeric::float8_to_float(static_cast<uint8_t>(c), t);
      const float want = ref::float8_to_float(static_cast<uint8_t>(c), t);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << type_name(t) << " code " << c;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << type_name(t) << " code " << c;
      }
    }
}

TEST(Float8Conversion, EveryCodeReencodesToItself) {
  for (bool avx : encoders())
    for (ET t : kFloat8Types) {
      std::vector<double> values;
      for (int c = 0; c < 256; ++c) values.push_back(numeric::float8_to_float(static_cast<uint8_t>(c), t));
      const auto codes = encode_all(values, t, avx);
      for (int c = 0; c < 256; ++c) {
        const uint8_t code = static_cast<uint8_t>(c);
        std::ostringstream what;
        what << (avx ? "avx512 " : "scalar ") << type_name(t) << " code " << c;
        if (is_nan_code(code, t)) {
          EXPECT_EQ(int(codes[c]), is_fnuz(t) ? 0x80 : 0x7F) << what.str();
        } else if (std::isinf(values[c])) {  // e5m2 infinities saturate
          EXPECT_EQ(int(codes[c]), (c & 0x80) | max_code(t)) << what.str();
        } else {
          EXPECT_EQ(int(codes[c]), c) << what.str();
        }
      }
    }
}

TEST(Float8Conversion, MidpointsTiesToEvenAndNeighboursToNearer) {
  for (bool avx : encoders())
    for (ET t : kFloat8Types) {
      std::vector<double> values;
      std::vector<uint8_t> want;
      for (int sign = 0; sign < 2; ++sign)
        for (int c = 0; c < max_code(t); ++c) {
          const double lo = ref::float8_to_float(static_cast<uint8_t>(c), t);
          const double hi = ref::float8_to_float(static_cast<uint8_t>(c + 1), t);
          const double mid = (lo + hi) / 2;  // exact: few significant bits
          const double s = sign ? -1.0 : 1.0;
          const int even = (c % 2 == 0) ? c : c + 1;
          const auto code = [&](int mag) {
            if (mag == 0 && (sign == 0 || is_fnuz(t))) return uint8_t{0};
            return static_cast<uint8_t>(mag | (sign ? 0x80 : 0));
          };
          values.push_back(s * mid);
          want.push_back(code(even));
          values.push_back(s * std::nextafter(mid, 0.0));
          want.push_back(code(c));
          values.push_back(s * std::nextafter(mid, 1e300));
          want.push_back(code(c + 1));
          values.push_back(s * (lo + (hi - lo) / 4));
          want.push_back(code(c));
        }
      const auto got = encode_all(values, t, avx);
      for (std::size_t i = 0; i < values.size(); ++i) {
        std::ostringstream what;
        what << (avx ? "avx512 " : "scalar ") << "v=" << values[i];
        expect_code(got[i], want[i], t, what.str());
        expect_code(got[i], ref::float8_from_double(values[i], t), t, what.str() + " vs reference");
      }
    }
}

TEST(Float8Conversion, SaturationNaNZeroAndSubnormals) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (bool avx : encoders())
    for (ET t : kFloat8Types) {
      const double max = ref::float8_to_float(max_code(t), t);
      const double tiny = ref::float8_to_float(0x01, t);  // smallest subnormal
      const uint8_t neg_zero = is_fnuz(t) ? 0x00 : 0x80;
      const std::vector<std::pair<double, int>> cases = {
          {max, max_code(t)}, {std::nextafter(max, inf), max_code(t)}, {max * 1.03, max_code(t)},
          {max * 2, max_code(t)}, {1e300, max_code(t)}, {inf, max_code(t)}, {-inf, 0x80 | max_code(t)},
          {-max * 4, 0x80 | max_code(t)}, {0.0, 0x00}, {-0.0, neg_zero}, {tiny, 0x01}, {-tiny, 0x81},
          {tiny / 2, 0x00}, {-tiny / 2, neg_zero}, {std::nextafter(tiny / 2, 1.0), 0x01},
          {tiny * 1.5, 0x02}, {tiny * 2.5, 0x02}, {tiny * 3.5, 0x04}, {1e-300, 0x00},
          {std::numeric_limits<double>::denorm_min(), 0x00}, {-1e-300, neg_zero}};
      std::vector<double> values;
      for (const auto& c : cases) values.push_back(c.first);
      values.push_back(nan);
      values.push_back(-nan);
      const auto got = encode_all(values, t, avx);
      for (std::size_t i = 0; i < cases.size(); ++i)
        EXPECT_EQ(int(got[i]), cases[i].second) << (avx ? "avx512 " : "scalar ") << type_name(t) << " v=" << values[i];
      const int nan_code = is_fnuz(t) ? 0x80 : 0x7F;
      EXPECT_EQ(int(got[cases.size()]), nan_code) << type_name(t);
      EXPECT_EQ(int(got[cases.size() + 1]), nan_code) << type_name(t);
    }
}

TEST(Float8Conversion, RandomDoublesMatchReference) {
  std::mt19937_64 rng(11);
  for (bool avx : encoders())
    for (ET t : kFloat8Types) {
      std::vector<double> values;
      std::uniform_real_distribution<double> mant(1.0, 2.0);
      std::uniform_int_distribution<int> exponent(-22, 18);
      for (int i = 0; i < 20000; ++i) {
        double v = std::ldexp(mant(rng), exponent(rng)) * ((rng() & 1) ? -1 : 1);
        if (i % 4 == 0) v = static_cast<float>(v);  // float32 inputs too
        values.push_back(v);
      }
      const auto got = encode_all(values, t, avx);
      for (std::size_t i = 0; i < values.size(); ++i) {
        ASSERT_EQ(int(got[i]), int(ref::float8_from_double(values[i], t)))
            << (avx ? "avx512 " : "scalar ") << type_name(t) << " v=" << values[i];
        if (!avx && i % 4 == 0) {
          ASSERT_EQ(int(numeric::float8_from_float(static_cast<float>(values[i]), t)), int(got[i]));
        }
      }
    }
}

}  // namespace
}  // namespace qmatmul::testing
