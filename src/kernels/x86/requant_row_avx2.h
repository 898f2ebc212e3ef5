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

// 1.5 * 2^52: a float64 in [2^52, 2^53), where the spacing is 1, so adding
// it rounds a value v (|v| < 2^51) to an integer in the current rounding
// mode, to nearest with ties to even by default (the FMA and the multiply
// before it already rely on that mode), and leaves that integer's two's
// complement in the sum's low 32 bits when |v| < 2^31.
inline constexpr double kRoundingBias = 6755399441055744.0;

// Four columns: v = C * m + zp, clamped unless `bounded`, plus
// kRoundingBias (rounded, the integer in each lane's low 32 bits).
inline __m256d requant4_biased(__m128i c, __m256d m, __m256d zp, __m256d lo, __m256d hi, bool bounded,
                               bool exact_product) {
  const __m256d x = _mm256_cvtepi32_pd(c);
  __m256d v = exact_product ? _mm256_fmadd_pd(x, m, zp) : _mm256_add_pd(_mm256_mul_pd(x, m), zp);  // else two roundings
  if (!bounded) v = _mm256_min_pd(_mm256_max_pd(v, lo), hi);
  return _mm256_add_pd(v, _mm256_set1_pd(kRoundingBias));
}

// Eight columns (c; their m and y zero points at m[0..7], zp[0..7]) as
// eight saturated int16 words, ready for the int16 -> byte pack. The
// rounding is an addition (requant4_biased) rather than vroundpd and
// vcvtpd2dq: one float64 add and half a shuffle per four columns instead of
// two conversion-class operations (each split in two on Zen 1). The integers
// are gathered from the low halves of the eight float64 lanes by one
// in-lane vshufps, in the order 0 1 4 5 | 2 3 6 7, and put back in order
// by a vpshufd on the words. Measured on Zen 1 against vroundpd and
// vcvtpd2dq (QLinear u8, packed B, 1 thread, 3 interleaved rounds, QL/MI
// time): 12 batches of 128 x 64 x 128 1.17-1.18 -> 1.14-1.15, 2364 x 64 x
// 197 1.12-1.13 -> 1.10-1.11, 1536 x 64 x 128 1.17 -> 1.14 (GOPS +1-4%);
// from K = 768 even (1.00-1.01). What remains at K = 64 is about 2.4
// micro-ops an output (each ymm operation is two there), spread over
// every pipe, and the next tile's k loop cannot start until they are issued.
inline __m128i requant8_words(__m256i c, const double* m, const double* zp, __m256d lo, __m256d hi, bool bounded,
                              bool exact_product) {
  const __m256d lo4 = requant4_biased(_mm256_castsi256_si128(c), _mm256_loadu_pd(m), _mm256_loadu_pd(zp), lo, hi,
                                      bounded, exact_product);
  const __m256d hi4 = requant4_biased(_mm256_extracti128_si256(c, 1), _mm256_loadu_pd(m + 4),
                                      _mm256_loadu_pd(zp + 4), lo, hi, bounded, exact_product);
  const __m256i ints = _mm256_castps_si256(
      _mm256_shuffle_ps(_mm256_castpd_ps(lo4), _mm256_castpd_ps(hi4), _MM_SHUFFLE(2, 0, 2, 0)));
  // Saturating: an exact clamp. Words 0 1 4 5 2 3 6 7, as pairs 0 2 1 3.
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(ints), _mm256_extracti128_si256(ints, 1));
  return _mm_shuffle_epi32(words, _MM_SHUFFLE(3, 1, 2, 0));
}

// Words to bytes, saturating to the output type (an exact clamp).
inline __m128i words_to_bytes(__m128i low, __m128i high, bool uint8_output) {
  return uint8_output ? _mm_packus_epi16(low, high) : _mm_packs_epi16(low, high);
}

}  // namespace
}  // namespace qmatmul::kernels

#endif
