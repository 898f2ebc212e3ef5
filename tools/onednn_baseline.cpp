// oneDNN matmul baselines for `qmatmul bench` (see onednn_baseline.h): one
// primitive per problem, built with run-time (DNNL_RUNTIME_*) scales and zero
// points so the quantization values are passed at every call exactly as
// qmatmul receives them. Memory objects are created once and rebound to the
// caller's buffers per call (set_data_handle), so a timed run() is the
// primitive's execution plus a stream wait. (Optionally the output scale is
// fixed at creation instead; see the header.) Compiled to stubs that throw
// when the build has no oneDNN (QMATMUL_HAVE_ONEDNN undefined).
#include "onednn_baseline.h"

#include <cstring>
#include <unordered_map>
#include <utility>

#include "qmatmul/types.h"

#if defined(QMATMUL_HAVE_ONEDNN) && QMATMUL_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace qmatmul::bench {

#if defined(QMATMUL_HAVE_ONEDNN) && QMATMUL_HAVE_ONEDNN

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct OpTypes {
  dt a, b, y;
  bool quantized, requantized;
};

OpTypes types_of(OnednnOp op) {
  switch (op) {
    case OnednnOp::MatMulIntegerU8S8: return {dt::u8, dt::s8, dt::s32, true, false};
    case OnednnOp::QLinearU8S8U8: return {dt::u8, dt::s8, dt::u8, true, true};
    case OnednnOp::QLinearS8S8S8: return {dt::s8, dt::s8, dt::s8, true, true};
    case OnednnOp::Float32: return {dt::f32, dt::f32, dt::f32, false, false};
  }
  throw Error("oneDNN baseline: unknown op");
}

std::size_t bytes_of(dt type) { return type == dt::f32 || type == dt::s32 ? 4 : 1; }

// A one-element run-time parameter (scale or zero point).
dnnl::memory scalar_memory(const dnnl::engine& eng, dt type) {
  return dnnl::memory({{1}, type, tag::x}, eng);
}

}  // namespace

struct OnednnMatmul::Impl {
  OpTypes types{};
  bool with_b_zero_point = false;
  bool runtime_scale = false;  // output scale passed per call (else fixed in the primitive)
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul prim;
  dnnl::memory a_mem, b_mem, y_mem;
  dnnl::memory scale_mem, a_zp_mem, b_zp_mem, y_zp_mem;
  std::string impl;
};

OnednnMatmul::OnednnMatmul(OnednnOp op, const BenchShape& shape, const void* b, bool packed,
                           bool with_b_zero_point, std::optional<float> fixed_output_scale)
    : impl_(std::make_unique<Impl>()) {
  if (shape.m <= 0 || shape.k <= 0 || shape.n <= 0 || shape.batches <= 0) {
    throw Error("oneDNN baseline: batches, M, K and N must be positive");
  }
  Impl& s = *impl_;
  s.types = types_of(op);
  s.with_b_zero_point = with_b_zero_point && s.types.quantized;
  s.runtime_scale = s.types.requantized && !fixed_output_scale;
  try {
    // Row-major: ab for a matrix, abc for a batch of them.
    const tag plain = shape.batches == 1 ? tag::ab : tag::abc;
    const dnnl::memory::desc a_md(shape.a_dims(), s.types.a, plain);
    const dnnl::memory::desc b_plain(shape.b_dims(), s.types.b, plain);
    const dnnl::memory::desc b_md(shape.b_dims(), s.types.b, packed ? tag::any : plain);
    const dnnl::memory::desc y_md(shape.y_dims(), s.types.y, plain);

    dnnl::primitive_attr attr;
    if (s.types.quantized) {
      attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
      if (s.with_b_zero_point) attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {DNNL_RUNTIME_S32_VAL});
    }
    if (s.types.requantized) {
      attr.set_output_scales(0, {fixed_output_scale ? *fixed_output_scale : DNNL_RUNTIME_F32_VAL});
      attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    }
    const dnnl::matmul::desc desc(a_md, b_md, y_md);
    const dnnl::matmul::primitive_desc pd(desc, attr, s.eng);
    s.prim = dnnl::matmul(pd);
    s.impl = pd.impl_info_str();

    // Weights: copied (plain) or reordered once (oneDNN's layout) into memory
    // this object owns.
    s.b_mem = dnnl::memory(pd.weights_desc(), s.eng);
    if (pd.weights_desc() == b_plain) {
      std::memcpy(s.b_mem.get_data_handle(), b,
                  static_cast<std::size_t>(shape.b_size()) * bytes_of(s.types.b));
    } else {
      dnnl::memory user_b(b_plain, s.eng, const_cast<void*>(b));
      dnnl::reorder(user_b, s.b_mem).execute(s.strm, user_b, s.b_mem);
      s.strm.wait();
    }
    s.a_mem = dnnl::memory(a_md, s.eng, nullptr);
    s.y_mem = dnnl::memory(y_md, s.eng, nullptr);
    if (s.types.quantized) {
      s.a_zp_mem = scalar_memory(s.eng, dt::s32);
      if (s.with_b_zero_point) s.b_zp_mem = scalar_memory(s.eng, dt::s32);
    }
    if (s.types.requantized) {
      if (s.runtime_scale) s.scale_mem = scalar_memory(s.eng, dt::f32);
      s.y_zp_mem = scalar_memory(s.eng, dt::s32);
    }
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN baseline: ") + e.what() + " (status " +
                std::to_string(static_cast<int>(e.status)) + ")");
  }
}

OnednnMatmul::~OnednnMatmul() = default;
OnednnMatmul::OnednnMatmul(OnednnMatmul&&) noexcept = default;
OnednnMatmul& OnednnMatmul::operator=(OnednnMatmul&&) noexcept = default;

void OnednnMatmul::run(const void* a, void* y, const OnednnQuant& quant) {
  Impl& s = *impl_;
  s.a_mem.set_data_handle(const_cast<void*>(a));
  s.y_mem.set_data_handle(y);
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, s.a_mem}, {DNNL_ARG_WEIGHTS, s.b_mem}, {DNNL_ARG_DST, s.y_mem}};
  if (s.types.quantized) {
    *static_cast<int32_t*>(s.a_zp_mem.get_data_handle()) = quant.a_zero_point;
    args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s.a_zp_mem);
    if (s.with_b_zero_point) {
      *static_cast<int32_t*>(s.b_zp_mem.get_data_handle()) = quant.b_zero_point;
      args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, s.b_zp_mem);
    } else if (quant.b_zero_point != 0) {
      throw Error("oneDNN baseline: a b zero point needs with_b_zero_point at construction");
    }
  }
  if (s.types.requantized) {
    if (s.runtime_scale) {
      *static_cast<float*>(s.scale_mem.get_data_handle()) = quant.output_scale;
      args.emplace(DNNL_ARG_ATTR_OUTPUT_SCALES, s.scale_mem);
    }
    *static_cast<int32_t*>(s.y_zp_mem.get_data_handle()) = quant.y_zero_point;
    args.emplace(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, s.y_zp_mem);
  }
  try {
    s.prim.execute(s.strm, args);
    s.strm.wait();
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN baseline: ") + e.what());
  }
}

std::string OnednnMatmul::impl_name() const { return impl_->impl; }

bool onednn_available() { return true; }

std::string onednn_version() {
  const dnnl_version_t* v = dnnl::version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OMP"
                        : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "SEQ"
                                                             : "other";
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (cpu runtime " + runtime + ")";
}

void onednn_matmul_f32(const float* a, const float* b, float* y, int64_t m, int64_t k, int64_t n) {
  OnednnMatmul mm(OnednnOp::Float32, BenchShape{m, k, n}, b, /*packed=*/false);
  mm.run(a, y);
}

#else  // no oneDNN in this build

struct OnednnMatmul::Impl {};

namespace {
[[noreturn]] void not_built() {
  throw Error("oneDNN baseline: this qmatmul was built without oneDNN (install libdnnl-dev and reconfigure)");
}
}  // namespace

OnednnMatmul::OnednnMatmul(OnednnOp, const BenchShape&, const void*, bool, bool, std::optional<float>) {
  not_built();
}
OnednnMatmul::~OnednnMatmul() = default;
OnednnMatmul::OnednnMatmul(OnednnMatmul&&) noexcept = default;
OnednnMatmul& OnednnMatmul::operator=(OnednnMatmul&&) noexcept = default;
void OnednnMatmul::run(const void*, void*, const OnednnQuant&) { not_built(); }
std::string OnednnMatmul::impl_name() const { return "none"; }
bool onednn_available() { return false; }
std::string onednn_version() { return "not built in"; }
void onednn_matmul_f32(const float*, const float*, float*, int64_t, int64_t, int64_t) { not_built(); }

#endif

}  // namespace qmatmul::bench
