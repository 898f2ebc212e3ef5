// Requantization of one 32-column row of final int32 sums C to bytes, in
// AVX-512 (SEMANTICS.md §4): v = double(C) * m + y_zero_point in float64,
// rounded half to even, saturated to the output type. Shared by the two
// places that requantize whole 32-column rows: the AVX-512 epilogue's
// whole-tile loop (src/gemm/x86/epilogue_avx512.cpp), from a tile buffer,
// and the AVX-512 VNNI kernels' requantizing form (tile_requant), straight
// from their accumulators. Inline code with internal linkage: each includer
// compiles it with its own AVX-512 flags.
//
// Per 8 columns: convert to float64, multiply and add (one FMA when the
// product is exact: requant_product_exact in gemm/epilogue.h, with the proof
// that it then equals the two roundings), clamp to the output range unless
// every |m| <= 0.5 (then |v| < 2^31 and the saturating packs below clamp the
// rounded integers exactly; the bounds are integers, so clamping before or
// after the rounding is the same), round to nearest even into int32. The 32
// int32 results become bytes through two saturating packs (int32 -> int16
// -> uint8 / int8, each an exact clamp) and one permute that undoes the
// packs' 128-bit lane order.
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>

#include "kernels/int8_kernel.h"

namespace qmatmul::kernels {
namespace {

// What a tile's rows share: the parameters of its 32 columns in registers.
struct RequantRowVectors {
  __m512d m[4], y_zero_point[4];
  __m512d lo, hi;      // the output range, for the clamp of unbounded multipliers
  __m256i lane_order;  // the permute after the packs
  bool uint8_output;
};

inline RequantRowVectors load_requant_row_vectors(const RequantParams& rq) {
  RequantRowVectors v;
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    v.m[q] = _mm512_loadu_pd(rq.multiplier + 8 * q);
    v.y_zero_point[q] = _mm512_loadu_pd(rq.y_zero_point + 8 * q);
  }
  v.uint8_output = rq.uint8_output;
  v.lo = _mm512_set1_pd(rq.uint8_output ? 0.0 : -128.0);
  v.hi = _mm512_set1_pd(rq.uint8_output ? 255.0 : 127.0);
  // The packs work within 128-bit lanes: their 32 bytes come out as
  // 4-column groups in the order 0, 2, 4, 6, 1, 3, 5, 7.
  v.lane_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  return v;
}

// Columns 8q .. 8q + 7 of the row in c[q]; stores 32 bytes at y.
template <bool kExactProduct, bool kBounded>
inline void requantize_row32(const __m256i (&c)[4], const RequantRowVectors& v, void* y) {
  __m256i r[4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512d x = _mm512_cvtepi32_pd(c[q]);
    __m512d val = kExactProduct ? _mm512_fmadd_pd(x, v.m[q], v.y_zero_point[q])
                                : _mm512_add_pd(_mm512_mul_pd(x, v.m[q]), v.y_zero_point[q]);  // two roundings
    if (!kBounded) val = _mm512_min_pd(_mm512_max_pd(val, v.lo), v.hi);
    r[q] = _mm512_cvt_roundpd_epi32(val, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  const __m256i w01 = _mm256_packs_epi32(r[0], r[1]), w23 = _mm256_packs_epi32(r[2], r[3]);
  const __m256i bytes = v.uint8_output ? _mm256_packus_epi16(w01, w23) : _mm256_packs_epi16(w01, w23);
  _mm256_storeu_si256(static_cast<__m256i*>(y), _mm256_permutevar8x32_epi32(bytes, v.lane_order));
}

// Calls f.template operator()<kExactProduct, kBounded>() for rq's flags: the
// four instantiations of a row loop, chosen once per tile.
template <typename F>
inline void with_requant_flags(const RequantParams& rq, F&& f) {
  if (rq.exact_product) {
    if (rq.bounded)
      f.template operator()<true, true>();
    else
      f.template operator()<true, false>();
  } else if (rq.bounded) {
    f.template operator()<false, true>();
  } else {
    f.template operator()<false, false>();
  }
}

}  // namespace
}  // namespace qmatmul::kernels

#endif
