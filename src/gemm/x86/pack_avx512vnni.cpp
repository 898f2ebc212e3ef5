// AVX-512 packing of B for the zmm VNNI kernels (NR = 32, KR = 4): up to 16
// pairs of whole panels (64 columns each) over every k-group, reading each B
// row segment as contiguous 64-byte lines and writing each panel as one
// sequential stream. Per k-group and pair: four rows, sign-shifted, interleaved to 4-byte column groups
// by byte and word unpacks within 128-bit lanes, then a 4x4 transpose of the
// lanes (vshufi64x2) puts the columns in order. The column sums of the
// shifted values come from vpdpbusd with a vector of ones (each 32-bit lane
// adds its column's four signed bytes, wrapping), kept in registers for the
// whole k loop (the optimizer keeps what fits). Compiled with AVX-512 F/BW + VNNI flags; nullptr without.
#include <cstdint>

#include "gemm/pack.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// GCC 12 reports its own _mm512_undefined_* helpers as "maybe uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace qmatmul::gemm {
namespace {

constexpr int kMaxPairs = 16;  // panel pairs per call (1 KB of each B row)

void pack_panel_pairs_vnni_avx512(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int pairs,
                                  unsigned char flip, unsigned char* out, int64_t panel_bytes, int32_t* sums) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i sum[4 * kMaxPairs];
  for (int q = 0; q < 4 * pairs; ++q) sum[q] = _mm512_setzero_si512();
  const int64_t kgroups = (K + 3) / 4;
  const unsigned char* col = b + c0;
  for (int64_t g = 0; g < kgroups; ++g) {
    const unsigned char* rows[4];
    for (int t = 0; t < 4; ++t) rows[t] = 4 * g + t < K ? col + (4 * g + t) * N : nullptr;
    for (int pair = 0; pair < pairs; ++pair) {
      __m512i r[4];
      for (int t = 0; t < 4; ++t)  // rows past K pack as zeros (not as shifted zeros)
        r[t] = rows[t] != nullptr ? _mm512_xor_si512(_mm512_loadu_si512(rows[t] + 64 * pair), vflip)
                                  : _mm512_setzero_si512();
      const __m512i a01_lo = _mm512_unpacklo_epi8(r[0], r[1]), a01_hi = _mm512_unpackhi_epi8(r[0], r[1]);
      const __m512i a23_lo = _mm512_unpacklo_epi8(r[2], r[3]), a23_hi = _mm512_unpackhi_epi8(r[2], r[3]);
      // Per 128-bit lane L: q0 = columns 16L+0..3, q1 = 4..7, q2 = 8..11, q3 = 12..15.
      const __m512i q0 = _mm512_unpacklo_epi16(a01_lo, a23_lo), q1 = _mm512_unpackhi_epi16(a01_lo, a23_lo);
      const __m512i q2 = _mm512_unpacklo_epi16(a01_hi, a23_hi), q3 = _mm512_unpackhi_epi16(a01_hi, a23_hi);
      const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44), t1 = _mm512_shuffle_i64x2(q2, q3, 0x44);
      const __m512i t2 = _mm512_shuffle_i64x2(q0, q1, 0xEE), t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
      const __m512i o[4] = {_mm512_shuffle_i64x2(t0, t1, 0x88), _mm512_shuffle_i64x2(t0, t1, 0xDD),
                            _mm512_shuffle_i64x2(t2, t3, 0x88), _mm512_shuffle_i64x2(t2, t3, 0xDD)};
      unsigned char* first = out + 2 * pair * panel_bytes + g * 128;
      _mm512_store_si512(first, o[0]);
      _mm512_store_si512(first + 64, o[1]);
      _mm512_store_si512(first + panel_bytes, o[2]);
      _mm512_store_si512(first + panel_bytes + 64, o[3]);
      for (int q = 0; q < 4; ++q) sum[4 * pair + q] = _mm512_dpbusd_epi32(sum[4 * pair + q], ones, o[q]);
    }
  }
  for (int q = 0; q < 4 * pairs; ++q) _mm512_storeu_si512(sums + 16 * q, sum[q]);
}

}  // namespace

PackPanelPairsFn pack_panel_pairs_vnni_avx512_fn() { return pack_panel_pairs_vnni_avx512; }

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
PackPanelPairsFn pack_panel_pairs_vnni_avx512_fn() { return nullptr; }
}  // namespace qmatmul::gemm

#endif
