// The float8 QLinearMatMul-21 compute (SEMANTICS.md §5), after validation.
//
// Summation order (the definition every path implements, bit for bit):
//   a_f[i,k] = f32(a[i,k]) - f32(a_zero_point[i])   (one float32 subtraction)
//   b_f[k,j] = f32(b[k,j]) - f32(b_zero_point[j])
//   C[i,j]   = +0; for k = 0, 1, ..., K-1: C = fmaf(a_f[i,k], b_f[k,j], C)
// i.e. one float32 fused multiply-add chain per output element, k ascending.
// Threads split only the output elements, so the result does not depend on
// the thread count; the AVX-512 path runs the same chains in vector lanes
// (one lane per output column), so it does not depend on the instruction set
// either. Requantization: m = f32(f32(a_scale * b_scale) / y_scale),
// v = double(C) * double(m) + double(y_zero_point) (two float64 roundings,
// never fused), then one rounding of v to the output type (float8: nearest
// even, saturating; int8/uint8: NaN -> 0, saturate, nearest even).
//
// When a and b are both int8/uint8 (a float8 output), C is the exact int32
// accumulator instead: the caller computes it with MatMulInteger and hands it
// to requantize_int32_to_float8.
#pragma once

#include <cstdint>

#include "gemm/problem.h"
#include "qmatmul/types.h"

namespace qmatmul::gemm {

struct Float8Problem {
  int64_t M = 0, K = 0, N = 0;
  int64_t batches = 0;               // output batches
  const int64_t* a_index = nullptr;  // per output batch: which A matrix
  const int64_t* b_index = nullptr;  // per output batch: which B matrix
  const void* a = nullptr;           // A matrices, row-major [M,K], one byte per element
  ElementType a_type = ElementType::Float8E4M3FN;
  const void* b = nullptr;           // B matrices, row-major [K,N], one byte per element
  ElementType b_type = ElementType::Float8E4M3FN;
  // Zero points as float32 values (float8 decoded, integers converted).
  ParamSpan<float> a_zero_point, b_zero_point, y_zero_point;
  ParamSpan<float> a_scale, b_scale, y_scale;
  ElementType y_type = ElementType::Float8E4M3FN;  // float8, int8 or uint8
  void* y = nullptr;                 // [batches][M][N] of y_type
  int threads = 1;
};

enum class Float8Path {
  Auto,      // AVX-512 when the int8 dispatch chose avx512vnni and it was compiled
  Portable,  // plain C++ (std::fma)
  Avx512,    // throws qmatmul::Error when not compiled or not supported here
};

// True when the AVX-512 path was compiled and this CPU runs it.
bool float8_avx512_usable();
// The path Auto resolves to.
Float8Path float8_auto_path();

// C = sum_k a_f * b_f as defined above, requantized into p.y. At least one of
// a, b must be float8.
void run_float8_gemm(const Float8Problem& p, Float8Path path = Float8Path::Auto);

// Integer inputs, float8 (or integer) output: requantizes the int32
// accumulators `c` ([batches][M][N]) into p.y with p's scales and y zero point.
void requantize_int32_to_float8(const Float8Problem& p, const int32_t* c, Float8Path path = Float8Path::Auto);

// Test hook: encode n doubles to float8 with the vectorized encoder of the
// AVX-512 epilogue (must match numeric::float8_encode bit for bit). Throws
// when the AVX-512 path is not usable.
void float8_encode_avx512(const double* v, int64_t n, ElementType type, uint8_t* out);

namespace detail {
// Entry points of src/gemm/x86/float8_gemm_avx512.cpp (stubs that throw when
// it was compiled without AVX-512).
bool float8_avx512_compiled();
void float8_gemm_avx512(const Float8Problem& p);
void float8_requantize_avx512(const Float8Problem& p, const int32_t* c);
void float8_encode_doubles_avx512(const double* v, int64_t n, ElementType type, uint8_t* out);
}  // namespace detail

}  // namespace qmatmul::gemm
