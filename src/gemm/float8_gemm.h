// The float8 QLinearMatMul-21 compute (SEMANTICS.md §5), after validation.
//
// Summation order (the definition every path implements, bit for bit):
//   a_f[i,k] = f32(a[i,k]) - f32(a_zero_point[i])   (one float32 subtraction)
//   b_f[k,j] = f32(b[k,j]) - f32(b_zero_point[j])
//   C[i,j]   = +0; for each pair k = 2p, 2p+1 (p ascending):
//                C = fmaf(a_f[i,2p+1], b_f[2p+1,j], C)   (when 2p+1 < K)
//                C = fmaf(a_f[i,2p],   b_f[2p,j],   C)
// i.e. one float32 fused multiply-add chain per output element, in the
// order k = 1, 0, 3, 2, 5, 4, ... This is the order of vdpbf16ps (AVX-512
// BF16), which adds the odd product of each pair first, each addition
// rounded once; its products are exact when a_f and b_f are exact in
// bfloat16, as every float8 and every int8/uint8-minus-zero-point value is.
// Threads split only the output elements, so the result does not depend on
// the thread count; the AVX-512 paths run the same chains in vector lanes
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

#include <cstddef>
#include <cstdint>

#include <vector>

#include "gemm/pack.h"
#include "gemm/problem.h"
#include "qmatmul/types.h"

namespace qmatmul::gemm {

// Calls step(k) for k in [0, n) in the chain order above: 1, 0, 3, 2, ...,
// with a last unpaired k when n is odd. Paths that split k into chunks
// start every chunk at an even k, so the order within chunks is the order.
template <typename Step>
[[gnu::always_inline]] inline void for_each_k_in_chain_order(int64_t n, Step&& step) {
  int64_t k = 0;
  for (; k + 1 < n; k += 2) {
    step(k + 1);
    step(k);
  }
  if (k < n) step(k);
}

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
  // Every a_f and b_f is exact in bfloat16 (see bf16_exact_operand), so the
  // BF16 tile computes the chains above exactly. False keeps float32 FMAs.
  bool bf16_exact = false;
  // Optional: B's values (b zero points all 0) already in the BF16 tile's
  // panels, from Float8PackedB::bf16_panels; used by the BF16 path only.
  const uint32_t* b_bf16_panels = nullptr;
};

// A constant B prepared once for float8 calls (qmatmul::PackedB of a float8
// B, or of an int8/uint8 B meant for a float8 a): a copy of its codes, which
// every path can read, and, when the BF16 path is usable here, its values
// (zero point not subtracted) in the BF16 tile's panel layout, so calls whose
// b zero points are all 0 skip decoding B.
struct Float8PackedB {
  ElementType type = ElementType::Undefined;
  int64_t batches = 0, K = 0, N = 0;
  std::vector<uint8_t> codes;  // [batches][K][N]
  AlignedBuffer bf16_panels;   // empty when the BF16 path is not usable

  const uint32_t* panels() const {
    return bf16_panels.size() == 0 ? nullptr : static_cast<const uint32_t*>(bf16_panels.data());
  }
};
Float8PackedB pack_b_float8(const void* b, ElementType type, int64_t batches, int64_t K, int64_t N, int threads);

// True when every value f32(code) - zp of an operand of type t is exact in
// bfloat16: integer operands, whose zero points have their type (so
// |a - zp| <= 255 needs at most 8 significant bits), and float8 operands
// whose zero points (n values) are all zero.
bool bf16_exact_operand(ElementType t, const float* zero_points, std::size_t n);

enum class Float8Path {
  Auto,      // AVX-512 when the int8 dispatch chose avx512vnni and it was compiled
  Portable,  // plain C++ (std::fma)
  Avx512,    // float32 FMA tiles; throws qmatmul::Error when not compiled or not supported here
  Avx512Bf16,  // vdpbf16ps tiles where p.bf16_exact allows (else as Avx512); throws when unusable
};

// True when the AVX-512 path was compiled and this CPU runs it.
bool float8_avx512_usable();
// True when the BF16 tile was compiled, this CPU has AVX-512 BF16, and a
// probe found its vdpbf16ps rounding to be the order defined above.
bool float8_bf16_usable();
// The name of a path, for `qmatmul info` and messages.
const char* float8_path_name(Float8Path path);
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
void float8_gemm_avx512(const Float8Problem& p, bool use_bf16);
void float8_requantize_avx512(const Float8Problem& p, const int32_t* c);
void float8_encode_doubles_avx512(const double* v, int64_t n, ElementType type, uint8_t* out);
// 32-bit words of one B matrix [K][N] in the BF16 panel layout, and the
// packing of `batches` such matrices into `out`, matrix after matrix.
int64_t float8_bf16_panel_words(int64_t K, int64_t N);
void float8_pack_b_bf16_avx512(const uint8_t* b, ElementType type, int64_t batches, int64_t K, int64_t N,
                               int threads, uint32_t* out);
}  // namespace detail

}  // namespace qmatmul::gemm
