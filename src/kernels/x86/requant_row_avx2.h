// Requantization of final int32 sums C to bytes in AVX2 (SEMANTICS.md §4),
// for parameters prepared per column in float64: v = double(C) * m +
// y_zero_point, rounded half to even, saturated to the output type. Shared
// by the two places that requantize prepared tiles with AVX2: the AVX2
// epilogue's prepared-panel loop (src/gemm/x86/epilogue_avx2.cpp), from a
// tile buffer, and the ymm kernels' requantizing form (tile_mx16_ymm.h),
// straight from their accumulators. Inline code with internal linkage: each
// includer compiles it with its own AVX2 + FMA flags.
//
// `bounded` (every |m| <= 0.5, so |v| < 2^31): no clamp before the rounding;
// the saturating packs that follow clamp the rounded integers exactly (the
// bounds are integers, so clamping before or after the rounding is the
// same). `exact_product` (requant_product_exact in gemm/epilogue.h): C * m +
// zp as one FMA, which then equals the two roundings.
#pragma once

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace qmatmul::kernels {
namespace {

// Four columns: int32 results, in range unless `bounded` (then the packs clamp).
inline __m128i requant4_prepared(__m128i c, __m256d m, __m256d zp, __m256d lo, __m256d hi, bool bounded,
                                 bool exact_product) {
  const __m256d x = _mm256_cvtepi32_pd(c);
  __m256d v = exact_product ? _mm256_fmadd_pd(x, m, zp) : _mm256_add_pd(_mm256_mul_pd(x, m), zp);  // else two roundings
  if (!bounded) v = _mm256_min_pd(_mm256_max_pd(v, lo), hi);
  return _mm256_cvtpd_epi32(_mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Eight columns (c; their m and y zero points at m[0..7], zp[0..7]) as
// eight saturated int16 words, ready for the int16 -> byte pack.
inline __m128i requant8_words(__m256i c, const double* m, const double* zp, __m256d lo, __m256d hi, bool bounded,
                              bool exact_product) {
  const __m128i lo4 = requant4_prepared(_mm256_castsi256_si128(c), _mm256_loadu_pd(m), _mm256_loadu_pd(zp), lo, hi,
                                        bounded, exact_product);
  const __m128i hi4 = requant4_prepared(_mm256_extracti128_si256(c, 1), _mm256_loadu_pd(m + 4),
                                        _mm256_loadu_pd(zp + 4), lo, hi, bounded, exact_product);
  return _mm_packs_epi32(lo4, hi4);  // saturating: an exact clamp
}

// Words to bytes, saturating to the output type (an exact clamp).
inline __m128i words_to_bytes(__m128i low, __m128i high, bool uint8_output) {
  return uint8_output ? _mm_packus_epi16(low, high) : _mm_packs_epi16(low, high);
}

}  // namespace
}  // namespace qmatmul::kernels

#endif
