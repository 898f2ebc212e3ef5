// QLinearMatMul-21 with float8 anywhere (SEMANTICS.md §5): a or b float8
// (the other int8/uint8 or float8), or a float8 output (y_zero_point's type).
// operators.cpp has already checked the operand and scale types, the data
// pointers, the shapes (`shape`) and the output buffer; this finishes the
// validation (zero-point types, parameter layouts, scale values), converts
// every zero point to float32 and every scale to float32 once, and runs the
// float8 GEMM (src/gemm/float8_gemm.h). With two integer inputs and a float8
// output, C is the exact int32 MatMulInteger accumulator, requantized to float8.
// `packed` (or null): b prepared by PackedB::pack; b.data is then unused.
#pragma once

#include "api/shapes.h"
#include "gemm/float8_gemm.h"
#include "qmatmul/types.h"

namespace qmatmul::api {

void qlinear_matmul_float8(const OpNames& n, const TensorView& a, const TensorView& a_scale,
                           const TensorView& a_zero_point, const TensorView& b, const TensorView& b_scale,
                           const TensorView& b_zero_point, const TensorView& y_scale,
                           const TensorView& y_zero_point, const MutableTensorView& y, int threads,
                           const MatmulShape& shape, const gemm::Float8PackedB* packed = nullptr);

}  // namespace qmatmul::api
