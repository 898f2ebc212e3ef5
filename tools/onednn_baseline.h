// The oneDNN side of `qmatmul bench`: the same matmul problems (2-D, or 3-D
// for batched shapes, a weight matrix per batch) run through
// oneDNN's matmul primitive, so qmatmul's speed can be read against a tuned
// library in the same process, on the same data and thread count. Covers
// MatMulInteger (u8 x s8 -> s32 with a run-time source zero point),
// QLinearMatMul (u8 x s8 -> u8, s8 x s8 -> s8 with run-time output scale and
// source/destination zero points) and a plain float32 matmul (the baseline of
// the float8 op, run on the decoded float8 values). "Packed" weights are
// reordered once, at construction, into the layout oneDNN picks
// (format_tag::any); unpacked weights stay plain row-major (format_tag::ab)
// and are read as such on every call. oneDNN is optional: without
// QMATMUL_HAVE_ONEDNN this header still compiles and onednn_available() is
// false (constructing a baseline throws).
// oneDNN from Debian uses OpenMP: set the thread count (omp_set_num_threads)
// before constructing a baseline, since the primitive's blocking depends on it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bench_shapes.h"

namespace qmatmul::bench {

// Was the program built with oneDNN?
bool onednn_available();
// "2.6.3 (cpu runtime OMP)"; "not built in" without oneDNN.
std::string onednn_version();

enum class OnednnOp {
  MatMulIntegerU8S8,  // a u8 [M,K], b s8 [K,N] -> y s32 [M,N]
  QLinearU8S8U8,      // a u8, b s8 -> y u8
  QLinearS8S8S8,      // a s8, b s8 -> y s8
  Float32,            // a f32, b f32 -> y f32 (quantization ignored)
};

// Quantization values passed at run time (the primitive is built with
// DNNL_RUNTIME_* placeholders, so one primitive serves any values).
// y = sat(round((a - a_zero_point) * (b - b_zero_point) * output_scale) + y_zero_point);
// output_scale and y_zero_point are ignored for MatMulInteger.
struct OnednnQuant {
  int32_t a_zero_point = 0;
  int32_t b_zero_point = 0;  // nonzero only if the baseline was built with_b_zero_point
  float output_scale = 1.0f;  // a_scale * b_scale / y_scale
  int32_t y_zero_point = 0;
};

// One oneDNN matmul primitive for a fixed [M,K] x [K,N] problem, or
// [B,M,K] x [B,K,N] for a batched shape, and fixed weights `b` (row-major
// [K,N] or [B,K,N], copied or reordered at construction; the
// caller's buffer is not referenced afterwards). `fixed_output_scale` bakes
// the QLinear output scale into the primitive instead of passing it at run
// time (run() then ignores quant.output_scale): oneDNN 2.6's brgemm matmul
// rejects run-time output scales and falls back to its gemm:jit path, so this
// shows oneDNN's best case for constant scales.
class OnednnMatmul {
 public:
  OnednnMatmul(OnednnOp op, const BenchShape& shape, const void* b, bool packed,
               bool with_b_zero_point = false, std::optional<float> fixed_output_scale = std::nullopt);
  ~OnednnMatmul();
  OnednnMatmul(OnednnMatmul&&) noexcept;
  OnednnMatmul& operator=(OnednnMatmul&&) noexcept;

  // y = a * b: `a` row-major [M,K], `y` row-major [M,N] (with a leading
  // batch dimension when batched), both caller-owned,
  // of the op's types. Returns when the result is written.
  void run(const void* a, void* y, const OnednnQuant& quant = {});

  // oneDNN's implementation name, e.g. "brg:avx512_core_vnni".
  std::string impl_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience: y[M,N] = a[M,K] * b[K,N] in float32 with oneDNN (plain layouts,
// primitive built per call). Throws when oneDNN is not built in.
void onednn_matmul_f32(const float* a, const float* b, float* y, int64_t m, int64_t k, int64_t n);

}  // namespace qmatmul::bench
