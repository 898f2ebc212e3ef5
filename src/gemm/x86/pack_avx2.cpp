// AVX2 version of the KR = 4 byte interleave used to pack B for the VNNI
// kernels (pack.cpp, pack_group4): out[4j + t] = row t, column j, sign
// shifted, 32 columns per step with byte/word unpacks, and the column sums
// of the shifted values in the same pass. Columns past the last full group
// of 32 are done one by one. Compiled with AVX2 flags; nullptr without.
#include <cstdint>

#include "gemm/pack.h"

#if defined(__AVX2__)
#include <immintrin.h>

namespace qmatmul::gemm {
namespace {

void pack_group4_avx2(const unsigned char* const* rows, int64_t c0, int n, unsigned char flip, unsigned char* out,
                      uint32_t* sum) {
  const __m256i vflip = _mm256_set1_epi8(static_cast<char>(flip));
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    __m256i r[4];
    for (int t = 0; t < 4; ++t)
      r[t] = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[t] + c0 + j)), vflip);
    const __m256i a01_lo = _mm256_unpacklo_epi8(r[0], r[1]), a01_hi = _mm256_unpackhi_epi8(r[0], r[1]);
    const __m256i a23_lo = _mm256_unpacklo_epi8(r[2], r[3]), a23_hi = _mm256_unpackhi_epi8(r[2], r[3]);
    // Per 128-bit lane: q0 = columns 0-3 (16-19), q1 = 4-7, q2 = 8-11, q3 = 12-15.
    const __m256i q0 = _mm256_unpacklo_epi16(a01_lo, a23_lo), q1 = _mm256_unpackhi_epi16(a01_lo, a23_lo);
    const __m256i q2 = _mm256_unpacklo_epi16(a01_hi, a23_hi), q3 = _mm256_unpackhi_epi16(a01_hi, a23_hi);
    auto* dst = reinterpret_cast<__m256i*>(out + 4 * j);
    _mm256_storeu_si256(dst + 0, _mm256_permute2x128_si256(q0, q1, 0x20));
    _mm256_storeu_si256(dst + 1, _mm256_permute2x128_si256(q2, q3, 0x20));
    _mm256_storeu_si256(dst + 2, _mm256_permute2x128_si256(q0, q1, 0x31));
    _mm256_storeu_si256(dst + 3, _mm256_permute2x128_si256(q2, q3, 0x31));
    // Column sums: the four signed bytes of each column, widened.
    __m256i lo16 = _mm256_setzero_si256(), hi16 = _mm256_setzero_si256();
    for (int t = 0; t < 4; ++t) {
      lo16 = _mm256_add_epi16(lo16, _mm256_cvtepi8_epi16(_mm256_castsi256_si128(r[t])));
      hi16 = _mm256_add_epi16(hi16, _mm256_cvtepi8_epi16(_mm256_extracti128_si256(r[t], 1)));
    }
    const __m256i parts[4] = {_mm256_cvtepi16_epi32(_mm256_castsi256_si128(lo16)),
                              _mm256_cvtepi16_epi32(_mm256_extracti128_si256(lo16, 1)),
                              _mm256_cvtepi16_epi32(_mm256_castsi256_si128(hi16)),
                              _mm256_cvtepi16_epi32(_mm256_extracti128_si256(hi16, 1))};
    for (int q = 0; q < 4; ++q) {
      auto* s = reinterpret_cast<__m256i*>(sum + j + 8 * q);
      _mm256_storeu_si256(s, _mm256_add_epi32(_mm256_loadu_si256(s), parts[q]));
    }
  }
  for (; j < n; ++j) {
    int32_t column = 0;
    for (int t = 0; t < 4; ++t) {
      const unsigned char v = rows[t][c0 + j] ^ flip;
      out[4 * j + t] = v;
      column += static_cast<int8_t>(v);
    }
    sum[j] += static_cast<uint32_t>(column);
  }
}

}  // namespace

PackGroup4Fn pack_group4_avx2_fn() { return pack_group4_avx2; }

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
PackGroup4Fn pack_group4_avx2_fn() { return nullptr; }
}  // namespace qmatmul::gemm

#endif
