// The test oracle: a deliberately plain implementation of MatMulInteger-10 and
// QLinearMatMul-10/21 written straight from SEMANTICS.md. For every output
// element it loops over k; no SIMD, blocking, threads or zero-point algebra.
// It shares no code with the library in src/ (only the public Tensor, TensorView
// and ElementType types), so the fast paths can be checked against it bit for bit.
// Inputs are assumed valid: validation is the library's job, not the oracle's.
#pragma once

#include <cstdint>
#include <optional>

#include "qmatmul/qmatmul.h"
#include "qmatmul/types.h"

namespace qmatmul::reference {

// numpy.matmul output shape (SEMANTICS.md section 1); inputs assumed compatible.
Shape output_shape(const Shape& a, const Shape& b);

// MatMulInteger-10 (SEMANTICS.md sections 1-3): int32 output, wrapping
// accumulation. An absent zero point counts as 0.
Tensor matmul_integer(const TensorView& a, const TensorView& b,
                      const std::optional<TensorView>& a_zero_point,
                      const std::optional<TensorView>& b_zero_point);

// QLinearMatMul-10/21 (SEMANTICS.md sections 1, 2, 4 and 5). The output type is
// y_zero_point's type. `mode` selects the requantization of the all-integer
// case (int8/uint8 inputs and output); cases involving float8 always use the
// section 5 formula.
Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale,
                      const TensorView& a_zero_point, const TensorView& b,
                      const TensorView& b_scale, const TensorView& b_zero_point,
                      const TensorView& y_scale, const TensorView& y_zero_point,
                      Requantization mode = Requantization::OnnxReference);

// Exact widenings of the 16-bit scale types to float32.
float float16_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

// Exact decoding of a float8 code (t is one of the four float8 types) to float32.
float float8_to_float(uint8_t code, ElementType t);

// One rounding of `v` to the nearest float8 value of type t, ties to even,
// saturating (finite overflow and +-Inf give +-max), NaN gives a NaN code
// (0x7F for e4m3fn and e5m2, 0x80 for the fnuz types), -0 gives +0 in fnuz.
uint8_t float8_from_double(double v, ElementType t);

}  // namespace qmatmul::reference
