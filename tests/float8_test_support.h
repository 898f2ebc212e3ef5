// Float8 helpers shared by test_float8_conversion.cpp (conversions) and
// test_float8_gemm.cpp (the operator): the four float8 element types and the
// per-type code properties both files need (FNUZ or not, NaN codes, largest
// finite code), with values read from the reference oracle (reference/).
// Header-only, since the test executable is built from tests/test_*.cpp
// alone, so everything here is inline.
#pragma once

#include <cmath>
#include <cstdint>

#include "reference/reference.h"
#include "test_support.h"

namespace qmatmul::testing {

inline constexpr ET kFloat8Types[] = {ET::Float8E4M3FN, ET::Float8E4M3FNUZ, ET::Float8E5M2, ET::Float8E5M2FNUZ};

inline bool is_fnuz(ET t) { return t == ET::Float8E4M3FNUZ || t == ET::Float8E5M2FNUZ; }
inline bool is_nan_code(uint8_t c, ET t) { return std::isnan(reference::float8_to_float(c, t)); }
inline uint8_t max_code(ET t) { return t == ET::Float8E4M3FN ? 0x7E : t == ET::Float8E5M2 ? 0x7B : 0x7F; }

}  // namespace qmatmul::testing
