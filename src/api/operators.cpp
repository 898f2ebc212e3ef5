// The public entry points. Each call validates its inputs completely
// (types, shapes, parameter layouts, scale values, the output buffer) before
// touching any data, converts the quantization parameters once, packs B for
// the kernel dispatch chose, and hands one GemmProblem to the driver.
#include <omp.h>

#include <cmath>
#include <cstring>

#include "api/float8_operator.h"
#include "api/packed_b.h"
#include "api/params.h"
#include "api/shapes.h"
#include "gemm/driver.h"
#include "gemm/parallel_region.h"
#include "gemm/thread_cost.h"
#include "kernels/dispatch.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul {
namespace {

const api::OpNames kMatMulInteger{"MatMulInteger", "A", "B", "Y"};
const api::OpNames kQLinearMatMul{"QLinearMatMul", "a", "b", "y"};

[[noreturn]] void fail(const api::OpNames& n, const std::string& msg) { throw Error(n.op + ": " + msg); }

int resolve_threads(const api::OpNames& n, const Options& options) {
  const int threads = options.threads;
  if (threads < 0) fail(n, "Options::threads is " + std::to_string(threads) + "; use 0 (all cores) or a positive count");
  if (options.min_macs_per_thread < 0)
    fail(n, "Options::min_macs_per_thread is " + std::to_string(options.min_macs_per_thread) +
                "; use 0 (always Options::threads) or a positive count");
  if (threads == 0) return std::max(1, omp_get_num_procs());
  return threads;
}

// The threads one call of this shape takes (Options::min_macs_per_thread).
// A call with at least kWholeBatchesPerThread output batches per thread
// takes them from half the work per thread: its tasks then split by whole
// batches, each thread packing and reading only its own, so a second
// thread pays off sooner than in one product cut into column blocks. On
// the 2-core VM (MatMulInteger, 2 threads against 1, calls back to back /
// the caller busy for 1 ms between calls, 7-21 rounds): 64 batches of
// 8x64x64 (3.2M units) 1.44 / 1.39, 48 of 8x64x64 (2.4M) 1.54 / 1.34, 16
// of 32x64x64 (2.4M) 1.58 / 1.21, 8 of 16x128x128 (2.6M) 1.59 / 1.48, 8 of
// 32x64x128 (2.4M) 1.39 / 0.98, 8 of 64x64x64 (2.2M) 1.07 / 1.17, where
// one product of 16x256x512 (2.6M) reads 0.90 / 0.87.
constexpr int64_t kWholeBatchesPerThread = 4;
int threads_for_call(const Options& options, int threads, const api::MatmulShape& s, double mac_cost) {
  const bool by_batches = s.batch_count >= kWholeBatchesPerThread * threads;
  const double work = api::call_work(s, mac_cost);
  const auto chosen = [&](int64_t per_thread) {
    return gemm::threads_for_work(threads, work, by_batches ? per_thread / 2 : per_thread);
  };
  const int configured = chosen(options.min_macs_per_thread);
  // The region is timed only when the configured value would give a call
  // this size more than one thread (Options::measure_thread_cost).
  if (!options.measure_thread_cost || configured <= 1) return configured;
  return chosen(gemm::work_per_thread_for_region_cost(options.min_macs_per_thread, gemm::parallel_region_cost_us()));
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
    return;  // QLinearMatMul-21: float8 (api/float8_operator.h)
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

// The B operand: a plain view, or a view of dims/type plus prepacked data.
struct BOperand {
  TensorView view;                                 // data is null when prepacked
  const gemm::PackedB* prepacked = nullptr;        // int8/uint8 B
  const gemm::Float8PackedB* prepacked_float8 = nullptr;  // float8 B
  bool is_packed() const { return prepacked != nullptr || prepacked_float8 != nullptr; }
};

BOperand operand(const TensorView& b) { return {b}; }
BOperand operand(const PackedB& b) {
  if (b.empty()) throw Error("PackedB: this object holds no packed matrix (default-constructed)");
  if (is_float8(b.type())) return {TensorView{b.type(), b.dims(), nullptr}, nullptr, &b.impl()->float8};
  return {TensorView{b.type(), b.dims(), nullptr}, &b.impl()->packed};
}

// The buffer a calling thread packs unpacked B operands into, kept between
// its calls (it grows to the largest B the thread has multiplied).
gemm::AlignedBuffer& per_thread_scratch() {
  thread_local gemm::AlignedBuffer scratch;
  return scratch;
}

// Everything the driver reads must stay alive during the call.
struct PreparedCall {
  ~PreparedCall() {
    if (return_scratch) per_thread_scratch() = std::move(packed_b.data);
  }
  bool return_scratch = false;
  api::MatmulShape shape;
  gemm::PackedB packed_b;
  api::ConvertedParam<int32_t> a_zp, b_zp, y_zp;
  api::ConvertedParam<float> a_scale, b_scale, y_scale;
  gemm::GemmProblem problem;
};

// The kernel for this call: the small-M one when M is small and it reads the
// same B layout as the packed operand, else the packed operand's kernel.
const kernels::Int8GemmKernel* kernel_for_packed(const gemm::PackedB& packed, int64_t m) {
  const auto& want = kernels::int8_kernel_for(m, packed.K);
  const auto& have = *packed.kernel;
  if (kernels::same_b_layout(want, have)) return &want;
  return &have;
}

// Whether a parameter's value for (batch b, row i) continues row by row
// across the batches, as if the batches were one taller matrix: per tensor,
// per column, or per row laid out batch after batch. An unset parameter
// (MatMulInteger's scales) has no layout and does not matter.
template <typename T>
bool continues_across_batches(const api::ConvertedParam<T>& param, int64_t rows) {
  const std::vector<int64_t>& offset = param.layout.batch_offset;
  for (std::size_t b = 1; b < offset.size(); ++b)
    if (offset[b] != offset[0] + static_cast<int64_t>(b) * rows * param.layout.row_stride) return false;
  return true;
}

// A batched A over a single B, [batches][M][K] x [K][N], is one taller
// product [batches * M][K] x [K][N]: Y's batches lie back to back like the
// rows of one matrix, and every element keeps its reduction over K and its
// parameters, so the bits are the same. Folded when every output batch
// multiplies the same B, A's matrices come in order, and every parameter
// continues across the batches. B is then read (raw-B path) or packed once
// per call instead of once per batch, and the rows fill the kernels' row
// tiles together.
void fold_batches_into_rows(PreparedCall& c) {
  api::MatmulShape& s = c.shape;
  if (s.batch_count <= 1) return;
  for (int64_t b = 0; b < s.batch_count; ++b)
    if (s.a_index[static_cast<std::size_t>(b)] != b || s.b_index[static_cast<std::size_t>(b)] != s.b_index[0]) return;
  if (!continues_across_batches(c.a_zp, s.M) || !continues_across_batches(c.b_zp, s.M) ||
      !continues_across_batches(c.y_zp, s.M) || !continues_across_batches(c.a_scale, s.M) ||
      !continues_across_batches(c.b_scale, s.M) || !continues_across_batches(c.y_scale, s.M))
    return;
  s.M *= s.batch_count;
  s.batch_count = 1;
  s.a_batch_count = 1;
  s.a_index.resize(1);
  s.b_index.resize(1);
}

void prepare_operands(PreparedCall& c, const TensorView& a, const BOperand& b, int threads) {
  fold_batches_into_rows(c);
  const gemm::PackedB* packed = b.prepacked;
  auto& p = c.problem;
  if (packed == nullptr) {
    const auto& kernel = kernels::int8_kernel_for(c.shape.M, c.shape.K);
    if (gemm::pack_b_in_tasks(kernel, c.shape.M, c.shape.K, c.shape.batch_count, c.shape.b_batch_count)) {
      p.kernel = &kernel;
      p.b_raw = b.view.data;
      p.b_type = b.view.type;
    } else {
      c.packed_b = gemm::pack_b(kernel, b.view.data, b.view.type, c.shape.b_batch_count, c.shape.K, c.shape.N,
                                threads, std::move(per_thread_scratch()));
      c.return_scratch = true;
      packed = &c.packed_b;
    }
  }
  if (packed != nullptr) p.kernel = kernel_for_packed(*packed, c.shape.M);
  p.M = c.shape.M;
  p.K = c.shape.K;
  p.N = c.shape.N;
  p.batches = c.shape.batch_count;
  p.a_index = c.shape.a_index.data();
  p.b_index = c.shape.b_index.data();
  p.a = a.data;
  p.a_type = a.type;
  p.b = packed;
  p.threads = threads;
  p.a_zero_point = c.a_zp.span();
  p.b_zero_point = c.b_zp.span();
}

void matmul_integer_impl(const TensorView& a, const BOperand& bop, const std::optional<TensorView>& a_zero_point,
                         const std::optional<TensorView>& b_zero_point, const MutableTensorView& y,
                         const Options& options) {
  const auto& n = kMatMulInteger;
  const TensorView& b = bop.view;
  const int max_threads = resolve_threads(n, options);
  check_operand_type(n, "A", a, false);
  check_operand_type(n, "B", b, false);
  check_data(n, "A", a);
  if (!bop.is_packed()) check_data(n, "B", b);
  PreparedCall c;
  c.shape = api::analyze_matmul(a.dims, b.dims, n);
  check_output(n, y, ElementType::Int32, c.shape.out);
  c.a_zp = api::a_zero_point_param(n, "a_zero_point", a_zero_point, a.type, c.shape);
  c.b_zp = api::b_zero_point_param(n, "b_zero_point", b_zero_point, b.type, c.shape);
  if (element_count(c.shape.out) == 0) return;
  prepare_operands(c, a, bop, threads_for_call(options, max_threads, c.shape, 1));
  c.problem.output = gemm::OutputKind::Int32;
  c.problem.y = y.data;
  gemm::run_int8_gemm(c.problem);
}

void qlinear_matmul_impl(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                         const BOperand& bop, const TensorView& b_scale, const TensorView& b_zero_point,
                         const TensorView& y_scale, const TensorView& y_zero_point, const MutableTensorView& y,
                         const Options& options) {
  const auto& n = kQLinearMatMul;
  const TensorView& b = bop.view;
  const int max_threads = resolve_threads(n, options);
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
                                {&b_scale, "b_scale"}, {&b_zero_point, "b_zero_point"},
                                {&y_scale, "y_scale"}, {&y_zero_point, "y_zero_point"}})
    check_data(n, name, *t);
  if (!bop.is_packed()) check_data(n, "b", b);
  api::check_scale_types(n, a_scale, b_scale, y_scale, v21);
  PreparedCall c;
  c.shape = api::analyze_matmul(a.dims, b.dims, n);
  check_output(n, y, y_zero_point.type, c.shape.out);
  if (is_float8(a.type) || is_float8(b.type) || is_float8(y_zero_point.type)) {
    if (bop.prepacked)
      fail(n, "b is a PackedB (prepacked int8 weights), which only serves int8/uint8 a and y; with a of type " +
                  type_name(a.type) + " and y_zero_point of type " + type_name(y_zero_point.type) +
                  " pass b as a plain tensor");
    // Float8 multiply-adds run about a third as fast as int8 ones.
    api::qlinear_matmul_float8(n, a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point, y,
                               threads_for_call(options, max_threads, c.shape, 3), c.shape, bop.prepacked_float8);
    return;
  }
  c.a_zp = api::a_zero_point_param(n, "a_zero_point", a_zero_point, a.type, c.shape);
  c.b_zp = api::b_zero_point_param(n, "b_zero_point", b_zero_point, b.type, c.shape);
  c.y_zp = api::y_zero_point_param(n, y_zero_point, c.shape);
  c.a_scale = api::scale_param(n, "a_scale", a_scale, c.shape, api::ParamSide::A);
  c.b_scale = api::scale_param(n, "b_scale", b_scale, c.shape, api::ParamSide::B);
  c.y_scale = api::scale_param(n, "y_scale", y_scale, c.shape, api::ParamSide::Y);
  if (element_count(c.shape.out) == 0) return;
  prepare_operands(c, a, bop, threads_for_call(options, max_threads, c.shape, 1));
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

}  // namespace

const char* version() { return QMATMUL_VERSION; }

Shape matmul_output_shape(const Shape& a, const Shape& b, const std::string& op) {
  return api::analyze_matmul(a, b, {op, "A", "B", "Y"}).out;
}

void matmul_integer(const TensorView& a, const TensorView& b, const std::optional<TensorView>& a_zero_point,
                    const std::optional<TensorView>& b_zero_point, const MutableTensorView& y,
                    const Options& options) {
  matmul_integer_impl(a, operand(b), a_zero_point, b_zero_point, y, options);
}

void matmul_integer(const TensorView& a, const PackedB& b, const std::optional<TensorView>& a_zero_point,
                    const std::optional<TensorView>& b_zero_point, const MutableTensorView& y,
                    const Options& options) {
  matmul_integer_impl(a, operand(b), a_zero_point, b_zero_point, y, options);
}

void qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                    const TensorView& b, const TensorView& b_scale, const TensorView& b_zero_point,
                    const TensorView& y_scale, const TensorView& y_zero_point, const MutableTensorView& y,
                    const Options& options) {
  qlinear_matmul_impl(a, a_scale, a_zero_point, operand(b), b_scale, b_zero_point, y_scale, y_zero_point, y, options);
}

void qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                    const PackedB& b, const TensorView& b_scale, const TensorView& b_zero_point,
                    const TensorView& y_scale, const TensorView& y_zero_point, const MutableTensorView& y,
                    const Options& options) {
  qlinear_matmul_impl(a, a_scale, a_zero_point, operand(b), b_scale, b_zero_point, y_scale, y_zero_point, y, options);
}

PackedB PackedB::pack(const TensorView& b, const Options& options) {
  const api::OpNames n{"PackedB::pack", "a", "b", "y"};
  const int threads = resolve_threads(n, options);
  if (!is_int8_type(b.type) && !is_float8(b.type))
    fail(n, "b has type " + type_name(b.type) + "; only int8, uint8 or float8 weights can be packed");
  if (b.dims.empty()) fail(n, "b is a scalar (shape []); matmul needs rank 1 or more");
  check_data(n, "b", b);
  auto impl = std::make_shared<Impl>();
  impl->type = b.type;
  impl->dims = b.dims;
  const int64_t K = b.dims.size() == 1 ? b.dims[0] : b.dims[b.dims.size() - 2];
  const int64_t N = b.dims.size() == 1 ? 1 : b.dims.back();
  const int64_t batches = b.dims.size() <= 2 ? 1 : element_count(Shape(b.dims.begin(), b.dims.end() - 2));
  if (is_float8(b.type))
    impl->float8 = gemm::pack_b_float8(b.data, b.type, batches, K, N, threads);
  else
    impl->packed = gemm::pack_b(*kernels::dispatch().chosen->kernel, b.data, b.type, batches, K, N, threads);
  PackedB out;
  out.impl_ = std::move(impl);
  return out;
}

ElementType PackedB::type() const { return impl_ ? impl_->type : ElementType::Undefined; }

const Shape& PackedB::dims() const {
  static const Shape kNone;
  return impl_ ? impl_->dims : kNone;
}

Tensor matmul_integer(const TensorView& a, const TensorView& b, const std::optional<TensorView>& a_zero_point,
                      const std::optional<TensorView>& b_zero_point, const Options& options) {
  Tensor y(ElementType::Int32, api::analyze_matmul(a.dims, b.dims, kMatMulInteger).out);
  matmul_integer(a, b, a_zero_point, b_zero_point, y.mutable_view(), options);
  return y;
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

Tensor matmul_integer(const TensorView& a, const PackedB& b, const std::optional<TensorView>& a_zero_point,
                      const std::optional<TensorView>& b_zero_point, const Options& options) {
  const BOperand bop = operand(b);
  Tensor y(ElementType::Int32, api::analyze_matmul(a.dims, bop.view.dims, kMatMulInteger).out);
  matmul_integer_impl(a, bop, a_zero_point, b_zero_point, y.mutable_view(), options);
  return y;
}

Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale, const TensorView& a_zero_point,
                      const PackedB& b, const TensorView& b_scale, const TensorView& b_zero_point,
                      const TensorView& y_scale, const TensorView& y_zero_point, const Options& options) {
  const BOperand bop = operand(b);
  const ElementType out = is_int8_type(y_zero_point.type) || is_float8(y_zero_point.type) ? y_zero_point.type
                                                                                          : ElementType::Uint8;
  Tensor y(out, api::analyze_matmul(a.dims, bop.view.dims, kQLinearMatMul).out);
  qlinear_matmul_impl(a, a_scale, a_zero_point, bop, b_scale, b_zero_point, y_scale, y_zero_point, y.mutable_view(),
                      options);
  return y;
}

}  // namespace qmatmul
