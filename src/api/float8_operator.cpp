// The float8 branch of QLinearMatMul-21. See float8_operator.h. Validation
// order and messages follow the integer path (params.cpp): zero points a, b,
// y, then scales a, b, y; a zero point whose type differs from its tensor's
// is named with both types. Zero points become float32 values (float8 codes
// decoded exactly, integers converted exactly); scales go through
// api::scale_param, the same conversion and checks as the integer path.
#include "api/float8_operator.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "api/params.h"
#include "gemm/float8_gemm.h"
#include "numeric/float8.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul::api {
namespace {

[[noreturn]] void fail(const OpNames& n, const std::string& msg) { throw Error(n.op + ": " + msg); }

// A zero point of `tensor_type` as float32 values with its layout on `side`.
ConvertedParam<float> zero_point_as_float(const OpNames& n, const std::string& name, const TensorView& zp,
                                          ElementType tensor_type, const std::string& tensor_name,
                                          const MatmulShape& s, ParamSide side) {
  if (zp.type != tensor_type)
    fail(n, name + " has type " + type_name(zp.type) + " but " + tensor_name + " has type " +
                type_name(tensor_type) + "; a zero point must have its tensor's type");
  ConvertedParam<float> p;
  switch (side) {
    case ParamSide::A: p.layout = a_param_layout(zp.dims, name, s, n); break;
    case ParamSide::B: p.layout = b_param_layout(zp.dims, name, s, n); break;
    case ParamSide::Y: p.layout = y_param_layout(zp.dims, name, s, n); break;
  }
  p.values.resize(static_cast<std::size_t>(p.layout.count));
  const auto* codes = static_cast<const uint8_t*>(zp.data);
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    if (is_float8(zp.type))
      p.values[i] = numeric::float8_to_float(codes[i], zp.type);
    else if (zp.type == ElementType::Int8)
      p.values[i] = static_cast<float>(static_cast<int8_t>(codes[i]));
    else
      p.values[i] = static_cast<float>(codes[i]);
  }
  return p;
}

bool is_integer(ElementType t) { return t == ElementType::Int8 || t == ElementType::Uint8; }

}  // namespace

void qlinear_matmul_float8(const OpNames& n, const TensorView& a, const TensorView& a_scale,
                           const TensorView& a_zero_point, const TensorView& b, const TensorView& b_scale,
                           const TensorView& b_zero_point, const TensorView& y_scale,
                           const TensorView& y_zero_point, const MutableTensorView& y, int threads,
                           const MatmulShape& shape, const gemm::Float8PackedB* packed) {
  const auto a_zp = zero_point_as_float(n, "a_zero_point", a_zero_point, a.type, n.a, shape, ParamSide::A);
  const auto b_zp = zero_point_as_float(n, "b_zero_point", b_zero_point, b.type, n.b, shape, ParamSide::B);
  const auto y_zp = zero_point_as_float(n, "y_zero_point", y_zero_point, y_zero_point.type, n.y, shape,
                                        ParamSide::Y);
  const auto as = scale_param(n, "a_scale", a_scale, shape, ParamSide::A);
  const auto bs = scale_param(n, "b_scale", b_scale, shape, ParamSide::B);
  const auto ys = scale_param(n, "y_scale", y_scale, shape, ParamSide::Y);
  if (element_count(shape.out) == 0) return;

  gemm::Float8Problem p;
  p.M = shape.M;
  p.K = shape.K;
  p.N = shape.N;
  p.batches = shape.batch_count;
  p.a_index = shape.a_index.data();
  p.b_index = shape.b_index.data();
  p.a = a.data;
  p.a_type = a.type;
  p.b = packed != nullptr ? packed->codes.data() : b.data;
  p.b_type = b.type;
  p.a_zero_point = a_zp.span();
  p.b_zero_point = b_zp.span();
  p.y_zero_point = y_zp.span();
  p.a_scale = as.span();
  p.b_scale = bs.span();
  p.y_scale = ys.span();
  p.y_type = y_zero_point.type;
  p.y = y.data;
  p.threads = threads;
  p.bf16_exact = gemm::bf16_exact_operand(a.type, a_zp.values.data(), a_zp.values.size()) &&
                 gemm::bf16_exact_operand(b.type, b_zp.values.data(), b_zp.values.size());
  // The packed panels hold b's values, so they serve only b zero points of 0.
  if (packed != nullptr && std::all_of(b_zp.values.begin(), b_zp.values.end(), [](float z) { return z == 0.0f; }))
    p.b_bf16_panels = packed->panels();

  if (is_integer(a.type) && is_integer(b.type)) {
    // SEMANTICS.md §5: two integer inputs keep the exact int32 accumulator.
    Options options;
    options.threads = threads;
    options.min_macs_per_thread = 0;  // `threads` is already this call's choice
    Tensor c(ElementType::Int32, shape.out);
    const TensorView b_codes{b.type, b.dims, p.b};
    matmul_integer(a, b_codes, a_zero_point, b_zero_point, c.mutable_view(), options);
    gemm::requantize_int32_to_float8(p, c.data<int32_t>());
    return;
  }
  gemm::run_float8_gemm(p);
}

}  // namespace qmatmul::api
