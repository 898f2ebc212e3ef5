// The public entry points. Each call validates its inputs completely
// (types, shapes, parameter layouts, scale values, the output buffer) before
// touching any data, converts the quantization parameters once, packs B for
// the kernel dispatch chose, and hands one GemmProblem to the driver.
#include <omp.h>

#include <cmath>
#include <cstring>

#include "api/params.h"
#include "api/shapes.h"
#include "gemm/driver.h"
#include "kernels/dispatch.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul {
namespace {

const api::OpNames kMatMulInteger{"MatMulInteger", "A", "B", "Y"};
const api::OpNames kQLinearMatMul{"QLinearMatMul", "a", "b", "y"};

[[noreturn]] void fail(const api::OpNames& n, const std::string& msg) { throw Error(n.op + ": " + msg); }

int resolve_threads(const api::OpNames& n, int threads) {
  if (threads < 0) fail(n, "Options::threads is " + std::to_string(threads) + "; use 0 (all cores) or a positive count");
  if (threads == 0) return std::max(1, omp_get_num_procs());
  return threads;
}

bool is_int8_type(ElementType t) { return t == ElementType::Int8 || t == ElementType::Uint8; }

void check_operand_type(const api::OpNames& n, const std::string& name, const TensorView& t,
                        bool allow_float8) {
  if (is_int8_type(t.type)) return;
  if (is_float8(t.type)) {
    if (!allow_float8)
      fail(n, name + " has type " + type_name(t.type) + "; " +
                  (n.op == "MatMulInteger" ? "MatMulInteger takes int8 or uint8"
                                           : "QLinearMatMul-10 takes int8 or uint8 (float8 needs opset 21)"));
    fail(n, name + " has type " + type_name(t.type) + ": float8 inputs are not supported yet");
  }
  fail(n, name + " has type " + type_name(t.type) + "; it must be int8 or uint8" +
              (allow_float8 ? " (or a float8 type)" : ""));
}

void check_data(const api::OpNames& n, const std::string& name, const TensorView& t) {
  for (int64_t d : t.dims)
    if (d < 0) fail(n, name + " has shape " + shape_to_string(t.dims) + " with a negative dimension");
  if (element_count(t.dims) > 0 && t.data == nullptr)
    fail(n, name + " has shape " + shape_to_string(t.dims) + " but no data (null pointer)");
}

void check_output(const api::OpNames& n, const MutableTensorView& y, ElementType want, const Shape& shape) {
  if (y.type != want)
    fail(n, "output " + n.y + " has type " + type_name(y.type) + " but the result is " + type_name(want));
  if (y.dims != shape)
    fail(n, "output " + n.y + " has shape " + shape_to_string(y.dims) + " but the result has shape " +
                shape_to_string(shape));
  if (element_count(shape) > 0 && y.data == nullptr) fail(n, "output " + n.y + " has no data (null pointer)");
}

// Everything the driver reads must stay alive during the call.
struct PreparedCall {
  api::MatmulShape shape;
  gemm::PackedB packed_b;
  api::ConvertedParam<int32_t> a_zp, b_zp, y_zp;
  api::ConvertedParam<float> a_scale, b_scale, y_scale;
  gemm::GemmProblem problem;
};

void prepare_operands(PreparedCall& c, const TensorView& a, const TensorView& b, int threads) {
  const auto& kernel = kernels::int8_kernel_for(c.shape.M);
  c.packed_b = gemm::pack_b(kernel, b.data, b.type, c.shape.b_batch_count, c.shape.K, c.shape.N, threads);
  auto& p = c.problem;
  p.M = c.shape.M;
  p.K = c.shape.K;
  p.N = c.shape.N;
  p.batches = c.shape.batch_count;
  p.a_index = c.shape.a_index.data();
  p.b_index = c.shape.b_index.data();
  p.a = a.data;
  p.a_type = a.type;
  p.b = &c.packed_b;
  p.threads = threads;
  p.a_zero_point = c.a_zp.span();
  p.b_zero_point = c.b_zp.span();
}

}  // namespace

const char* version() { return QMATMUL_VERSION; }

Shape matmul_output_shape(const Shape& a, const Shape& b, const std::string& op) {
  return api::analyze_matmul(a, b, {op, "A", "B", "Y"}).out;
}

void matmul_integer(const TensorView& a, const TensorView& b, const std::optional<TensorView>& a_zero_point,
                    const std::optional<TensorView>& b_zero_point, const MutableTensorView& y,
                    const Options& options) {
  const auto& n = kMatMulInteger;
  const int threads = resolve_threads(n, options.threads);
  check_operand_type(n, "A", a, false);
  check_operand_type(n, "B", b, false);
  check_data(n, "A", a);
  check_data(n, "B", b);
  PreparedCall c;
  c.shape = api::analyze_matmul(a.dims, b.dims, n);
  check_output(n, y, ElementType::Int32, c.shape.out);
  c.a_zp = api::a_zero_point_param(n, "a_zero_point", a_zero_point, a.type, c.shape);
  c.b_zp = api::b_zero_point_param(n, "b_zero_point", b_zero_point, b.type, c.shape);
  if (element_count(c.shape.out) == 0) return;
  prepare_operands(c, a, b, threads);
  c.problem.output = gemm::OutputKind::Int32;
  c.problem.y = y.data;
  gemm::run_int8_gemm(c.problem);
}

Tensor matmul_integer(const TensorView& a, const TensorView& b, const std::optional<TensorView>& a_zero_point,
                      const std::optional<TensorView>& b_zero_point, const Options& options) {
  Tensor y(ElementType::Int32, api::analyze_matmul(a.dims, b.dims, kMatMulInteger).out);
  matmul_integer(a, b, a_zero_point, b_zero_point, y.mutable_view(), options);
  return y;
}

void qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                    const TensorView& b, const TensorView& b_scale, const TensorView& b_zero_point,
                    const TensorView& y_scale, const TensorView& y_zero_point, const MutableTensorView& y,
                    const Options& options) {
  const auto& n = kQLinearMatMul;
  const int threads = resolve_threads(n, options.threads);
  if (options.qlinear_opset < 10)
    fail(n, "opset " + std::to_string(options.qlinear_opset) + " has no QLinearMatMul (it starts at opset 10)");
  const bool v21 = options.qlinear_opset >= 21;
  check_operand_type(n, "a", a, v21);
  check_operand_type(n, "b", b, v21);
  if (!is_int8_type(y_zero_point.type) && !is_float8(y_zero_point.type))
    fail(n, "y_zero_point has type " + type_name(y_zero_point.type) + "; the output type must be int8 or uint8" +
                (v21 ? " (or a float8 type)" : ""));
  check_operand_type(n, "y_zero_point", y_zero_point, v21);
  for (const auto& [t, name] : {std::pair{&a, "a"}, {&a_scale, "a_scale"}, {&a_zero_point, "a_zero_point"},
                                {&b, "b"}, {&b_scale, "b_scale"}, {&b_zero_point, "b_zero_point"},
                                {&y_scale, "y_scale"}, {&y_zero_point, "y_zero_point"}})
    check_data(n, name, *t);
  api::check_scale_types(n, a_scale, b_scale, y_scale, v21);
  PreparedCall c;
  c.shape = api::analyze_matmul(a.dims, b.dims, n);
  check_output(n, y, y_zero_point.type, c.shape.out);
  c.a_zp = api::a_zero_point_param(n, "a_zero_point", a_zero_point, a.type, c.shape);
  c.b_zp = api::b_zero_point_param(n, "b_zero_point", b_zero_point, b.type, c.shape);
  c.y_zp = api::y_zero_point_param(n, y_zero_point, c.shape);
  c.a_scale = api::scale_param(n, "a_scale", a_scale, c.shape, api::ParamSide::A);
  c.b_scale = api::scale_param(n, "b_scale", b_scale, c.shape, api::ParamSide::B);
  c.y_scale = api::scale_param(n, "y_scale", y_scale, c.shape, api::ParamSide::Y);
  if (element_count(c.shape.out) == 0) return;
  prepare_operands(c, a, b, threads);
  auto& p = c.problem;
  p.output = y_zero_point.type == ElementType::Uint8 ? gemm::OutputKind::Uint8 : gemm::OutputKind::Int8;
  p.a_scale = c.a_scale.span();
  p.b_scale = c.b_scale.span();
  p.y_scale = c.y_scale.span();
  p.y_zero_point = c.y_zp.span();
  p.requantization = options.requantization;
  p.y = y.data;
  gemm::run_int8_gemm(p);
}

Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                      const TensorView& b, const TensorView& b_scale, const TensorView& b_zero_point,
                      const TensorView& y_scale, const TensorView& y_zero_point, const Options& options) {
  // An invalid y_zero_point type is reported by the call below.
  const ElementType out = is_int8_type(y_zero_point.type) || is_float8(y_zero_point.type) ? y_zero_point.type
                                                                                          : ElementType::Uint8;
  Tensor y(out, api::analyze_matmul(a.dims, b.dims, kQLinearMatMul).out);
  qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, y.mutable_view(),
                 options);
  return y;
}

}  // namespace qmatmul
