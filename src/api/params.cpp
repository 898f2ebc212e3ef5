// Validation and conversion of zero points and scales. See params.h.
#include "api/params.h"

#include <cmath>
#include <cstring>

#include "gemm/zero_point.h"
#include "numeric/half.h"

namespace qmatmul::api {
namespace {

[[noreturn]] void fail(const OpNames& n, const std::string& msg) { throw Error(n.op + ": " + msg); }

ParamLayout layout_for(ParamSide side, const Shape& dims, const std::string& name, const MatmulShape& s,
                       const OpNames& n) {
  switch (side) {
    case ParamSide::A: return a_param_layout(dims, name, s, n);
    case ParamSide::B: return b_param_layout(dims, name, s, n);
    case ParamSide::Y: break;
  }
  return y_param_layout(dims, name, s, n);
}

ConvertedParam<int32_t> zero_point_param(const OpNames& n, const std::string& name,
                                         const std::optional<TensorView>& zp, ElementType tensor_type,
                                         const std::string& tensor_name, const MatmulShape& s, ParamSide side,
                                         int32_t shift) {
  ConvertedParam<int32_t> p;
  if (!zp) {  // absent: one zero, per tensor
    p.layout.batch_offset.assign(static_cast<std::size_t>(s.batch_count), 0);
    p.values.push_back(shift);
    return p;
  }
  if (zp->type != tensor_type)
    fail(n, name + " has type " + type_name(zp->type) + " but " + tensor_name + " has type " +
                type_name(tensor_type) + "; a zero point must have its tensor's type");
  p.layout = layout_for(side, zp->dims, name, s, n);
  p.values.resize(static_cast<std::size_t>(p.layout.count));
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    const int32_t v = zp->type == ElementType::Uint8 ? static_cast<const uint8_t*>(zp->data)[i]
                                                     : static_cast<const int8_t*>(zp->data)[i];
    p.values[i] = v + shift;
  }
  return p;
}

}  // namespace

ConvertedParam<int32_t> a_zero_point_param(const OpNames& n, const std::string& name,
                                           const std::optional<TensorView>& zp, ElementType a_type,
                                           const MatmulShape& s) {
  return zero_point_param(n, name, zp, a_type, n.a, s, ParamSide::A, gemm::a_domain_shift(a_type));
}

ConvertedParam<int32_t> b_zero_point_param(const OpNames& n, const std::string& name,
                                           const std::optional<TensorView>& zp, ElementType b_type,
                                           const MatmulShape& s) {
  return zero_point_param(n, name, zp, b_type, n.b, s, ParamSide::B, -gemm::b_domain_shift(b_type));
}

ConvertedParam<int32_t> y_zero_point_param(const OpNames& n, const TensorView& zp, const MatmulShape& s) {
  return zero_point_param(n, "y_zero_point", zp, zp.type, n.y, s, ParamSide::Y, 0);
}

bool is_scale_type(ElementType t, bool opset21) {
  return t == ElementType::Float32 || (opset21 && (t == ElementType::Float16 || t == ElementType::BFloat16));
}

void check_scale_types(const OpNames& n, const TensorView& a_scale, const TensorView& b_scale,
                       const TensorView& y_scale, bool opset21) {
  for (const auto& [t, name] : {std::pair{&a_scale, "a_scale"}, {&b_scale, "b_scale"}, {&y_scale, "y_scale"}})
    if (!is_scale_type(t->type, opset21))
      fail(n, std::string(name) + " has type " + type_name(t->type) + "; scales must be float" +
                  (opset21 ? ", float16 or bfloat16" : " (QLinearMatMul-10)"));
  if (a_scale.type != b_scale.type || a_scale.type != y_scale.type)
    fail(n, "scales have different types (a_scale " + type_name(a_scale.type) + ", b_scale " +
                type_name(b_scale.type) + ", y_scale " + type_name(y_scale.type) + "); they must share one type");
}

ConvertedParam<float> scale_param(const OpNames& n, const std::string& name, const TensorView& scale,
                                  const MatmulShape& s, ParamSide side) {
  ConvertedParam<float> p;
  p.layout = layout_for(side, scale.dims, name, s, n);
  p.values.resize(static_cast<std::size_t>(p.layout.count));
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    float v;
    if (scale.type == ElementType::Float32) {
      std::memcpy(&v, static_cast<const unsigned char*>(scale.data) + 4 * i, 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const unsigned char*>(scale.data) + 2 * i, 2);
      v = scale.type == ElementType::Float16 ? numeric::float16_to_float(bits) : numeric::bfloat16_to_float(bits);
    }
    if (!std::isfinite(v) || v == 0.0f) {
      const std::string what = std::isnan(v) ? "NaN" : std::isinf(v) ? "infinite" : std::signbit(v) ? "-0" : "0";
      fail(n, name + " element " + std::to_string(i) + " is " + what + "; scales must be finite and non-zero");
    }
    p.values[i] = v;
  }
  return p;
}

}  // namespace qmatmul::api
