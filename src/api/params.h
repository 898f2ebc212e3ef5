// Quantization parameters, validated and converted once per call: zero
// points to int32 (a and b moved into the kernel domain, zero_point.h),
// scales to float32 (float16 and bfloat16 widened exactly, SEMANTICS.md §4.2)
// after checking each value is finite and non-zero, and every parameter
// paired with its broadcast layout (shapes.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/shapes.h"
#include "gemm/problem.h"

namespace qmatmul::api {

template <typename T>
struct ConvertedParam {
  std::vector<T> values;
  ParamLayout layout;
  gemm::ParamSpan<T> span() const {
    return {values.data(), layout.batch_offset.data(), layout.row_stride, layout.col_stride};
  }
};

enum class ParamSide { A, B, Y };

// a_zero_point (optional for MatMulInteger: absent = 0) as za' = za + shift.
ConvertedParam<int32_t> a_zero_point_param(const OpNames& n, const std::string& name,
                                           const std::optional<TensorView>& zp, ElementType a_type,
                                           const MatmulShape& s);
// b_zero_point (optional) as zb' = zb - shift.
ConvertedParam<int32_t> b_zero_point_param(const OpNames& n, const std::string& name,
                                           const std::optional<TensorView>& zp, ElementType b_type,
                                           const MatmulShape& s);
// y_zero_point as plain int32 values.
ConvertedParam<int32_t> y_zero_point_param(const OpNames& n, const TensorView& zp, const MatmulShape& s);

// A scale's element type: float32, or (opset 21) float16 / bfloat16.
bool is_scale_type(ElementType t, bool opset21);
// All three scales share one type: float32, or (opset 21) float16 / bfloat16.
void check_scale_types(const OpNames& n, const TensorView& a_scale, const TensorView& b_scale,
                       const TensorView& y_scale, bool opset21);
// A scale tensor as float32 values; every value must be finite and non-zero.
ConvertedParam<float> scale_param(const OpNames& n, const std::string& name, const TensorView& scale,
                                  const MatmulShape& s, ParamSide side);

}  // namespace qmatmul::api
