// AVX-512 packing of B for the zmm VNNI kernels (NR = 32, KR = 4): up to 16
// pairs of whole panels (64 columns each) over every k-group, in groups of
// up to 4 pairs, each group one pass over K that reads its part of every B
// row as contiguous 64-byte lines and writes each panel as one sequential
// stream. The column sums of the shifted values come from vpdpbusd with a
// vector of ones (each 32-bit lane adds its column's four signed bytes,
// wrapping). Also the A side: one 8-row block in the 8x32c4 layout by a
// 32-bit word transpose, and a block in the AMX kernel's layout (k-groups
// of 64 bytes: each row's 64-byte segments copied, sign-shifted, to their
// places). Compiled with AVX-512 F/BW + VNNI flags; nullptr
// without.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gemm/pack.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// GCC 12 reports its own _mm512_undefined_* helpers as "maybe uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "gemm/x86/pair_groups.h"
#include "gemm/x86/transpose_lanes_avx512.h"

namespace qmatmul::gemm {
namespace {

// P pairs of whole panels (columns [c0, c0 + 64P)) over every k-group. Per
// k-group and pair: four rows, sign-shifted, interleaved to 4-byte column
// groups by byte and word unpacks within 128-bit lanes, then a 4x4
// transpose of the lanes (vshufi64x2) puts the columns in order. The 4P
// column-sum registers stay in registers for the whole k loop.
template <int P>
void pack_pair_group(const unsigned char* b, int64_t N, int64_t K, int64_t c0, unsigned char flip, unsigned char* out,
                     int64_t panel_bytes, int32_t* sums) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i sum[P][4];
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < 4; ++q) sum[p][q] = _mm512_setzero_si512();
  const unsigned char* col = b + c0;
  // kTail: the last, partial k-group, whose rows past K pack as zeros (not
  // as shifted zeros).
  const auto k_group = [&](int64_t g, auto tail) {
    constexpr bool kTail = decltype(tail)::value;
    for (int p = 0; p < P; ++p) {
      __m512i r[4];
      for (int t = 0; t < 4; ++t)
        r[t] = !kTail || 4 * g + t < K ? _mm512_xor_si512(_mm512_loadu_si512(col + (4 * g + t) * N + 64 * p), vflip)
                                       : _mm512_setzero_si512();
      const __m512i a01_lo = _mm512_unpacklo_epi8(r[0], r[1]), a01_hi = _mm512_unpackhi_epi8(r[0], r[1]);
      const __m512i a23_lo = _mm512_unpacklo_epi8(r[2], r[3]), a23_hi = _mm512_unpackhi_epi8(r[2], r[3]);
      // Per 128-bit lane L: q0 = columns 16L+0..3, q1 = 4..7, q2 = 8..11, q3 = 12..15.
      const __m512i q0 = _mm512_unpacklo_epi16(a01_lo, a23_lo), q1 = _mm512_unpackhi_epi16(a01_lo, a23_lo);
      const __m512i q2 = _mm512_unpacklo_epi16(a01_hi, a23_hi), q3 = _mm512_unpackhi_epi16(a01_hi, a23_hi);
      __m512i o[4];
      transpose_128bit_lanes({q0, q1, q2, q3}, o);
      unsigned char* first = out + 2 * p * panel_bytes + g * 128;
      _mm512_store_si512(first, o[0]);
      _mm512_store_si512(first + 64, o[1]);
      _mm512_store_si512(first + panel_bytes, o[2]);
      _mm512_store_si512(first + panel_bytes + 64, o[3]);
      for (int q = 0; q < 4; ++q) sum[p][q] = _mm512_dpbusd_epi32(sum[p][q], ones, o[q]);
    }
  };
  const int64_t full_groups = K / 4;
  for (int64_t g = 0; g < full_groups; ++g) k_group(g, std::false_type{});
  if (K % 4 != 0) k_group(full_groups, std::true_type{});
  for (int p = 0; p < P; ++p)
    for (int q = 0; q < 4; ++q) _mm512_storeu_si512(sums + 64 * p + 16 * q, sum[p][q]);
}

// `pairs` pairs, in groups of up to 4 (pair_groups.h; 16 sum registers of
// the 32), each packed over all of K in one pass. Measured, the packer
// alone, 1 thread, GB/s of B, medians of 5 interleaved rounds, against one
// pass over all pairs (whose column sums, indexed at run time, lived on the
// stack):
// 3 pairs of 768 x 768, B in L2 30 -> 64, in L3 30 -> 46; 4 pairs of
// 2048 x 2048 25 -> 34; 16 pairs of 1024 x 4096 19 -> 30; 1 pair of
// 4096 x 4096 unchanged (11). One pass per pair instead (64 bytes of each
// row) fell to half the rate on a B read from memory (2 pairs, 4096 x 4096).
void pack_panel_pairs_vnni_avx512(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int pairs,
                                  unsigned char flip, unsigned char* out, int64_t panel_bytes, int32_t* sums) {
  for_each_pair_group<4>(pairs, [&](auto group, int64_t pair) {
    pack_pair_group<decltype(group)::value>(b, N, K, c0 + 64 * pair, flip, out + 2 * pair * panel_bytes,
                                            panel_bytes, sums + 64 * pair);
  });
}

// One 8-row block of A in the 8x32c4 kernel's layout, [g][8 rows][4 bytes]:
// per chunk of 16 k-groups, the eight 64-byte row segments (sign-shifted,
// zero past K and for rows past `rows`) are an 8 x 16 matrix of 32-bit words,
// transposed to 16 x 8 by two unpack stages within 128-bit lanes (giving,
// per lane l and c, the words of group 4l + c for rows 0-3 in A[c] and 4-7 in
// B[c]), then lane permutes. Row sums of the shifted values: vpdpbusd of each
// segment with ones.
void pack_a_block8_vnni_avx512(const unsigned char* a, int64_t K, int64_t rows, unsigned char flip,
                               unsigned char* out, int32_t* row_sums) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i lanes_low = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);   // [A.0, B.0, A.1, B.1]
  const __m512i lanes_high = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);  // [A.2, B.2, A.3, B.3]
  __m512i sum[8];
  for (int i = 0; i < 8; ++i) sum[i] = _mm512_setzero_si512();
  const int64_t kgroups = (K + 3) / 4;
  for (int64_t k0 = 0; k0 < K; k0 += 64) {
    // Masked loads only for the last, partial chunk: plain loads pack the
    // whole chunks 23-28% faster (8-row blocks of K = 768-4096, 1 thread).
    const bool whole_chunk = K - k0 >= 64;
    const __mmask64 valid = whole_chunk ? ~__mmask64(0) : (__mmask64(1) << (K - k0)) - 1;
    __m512i r[8];
    for (int i = 0; i < 8; ++i) {
      if (i >= rows)
        r[i] = _mm512_setzero_si512();
      else if (whole_chunk)
        r[i] = _mm512_xor_si512(_mm512_loadu_si512(a + i * K + k0), vflip);
      else
        r[i] = _mm512_maskz_mov_epi8(valid, _mm512_xor_si512(_mm512_maskz_loadu_epi8(valid, a + i * K + k0), vflip));
      sum[i] = _mm512_dpbusd_epi32(sum[i], r[i], ones);
    }
    __m512i s[8], A[4], B[4];
    for (int h = 0; h < 2; ++h) {  // rows 4h .. 4h+3
      s[4 * h + 0] = _mm512_unpacklo_epi32(r[4 * h], r[4 * h + 1]);
      s[4 * h + 1] = _mm512_unpackhi_epi32(r[4 * h], r[4 * h + 1]);
      s[4 * h + 2] = _mm512_unpacklo_epi32(r[4 * h + 2], r[4 * h + 3]);
      s[4 * h + 3] = _mm512_unpackhi_epi32(r[4 * h + 2], r[4 * h + 3]);
      __m512i* dst = h == 0 ? A : B;
      dst[0] = _mm512_unpacklo_epi64(s[4 * h], s[4 * h + 2]);
      dst[1] = _mm512_unpackhi_epi64(s[4 * h], s[4 * h + 2]);
      dst[2] = _mm512_unpacklo_epi64(s[4 * h + 1], s[4 * h + 3]);
      dst[3] = _mm512_unpackhi_epi64(s[4 * h + 1], s[4 * h + 3]);
    }
    // Group 4l + c, all 8 rows = [A[c].lane l, B[c].lane l]; two groups per
    // zmm. A whole chunk of 16 groups is stored in place, the last partial
    // one through a buffer (its groups past K would overrun the block).
    const int64_t groups = std::min<int64_t>(16, kgroups - k0 / 4);
    unsigned char* dst = out + (k0 / 4) * 32;
    alignas(64) unsigned char partial[16 * 32];
    unsigned char* chunk = groups == 16 ? dst : partial;
    for (int c = 0; c < 4; c += 2) {
      const __m512i x_low = _mm512_permutex2var_epi64(A[c], lanes_low, B[c]);
      const __m512i y_low = _mm512_permutex2var_epi64(A[c + 1], lanes_low, B[c + 1]);
      const __m512i x_high = _mm512_permutex2var_epi64(A[c], lanes_high, B[c]);
      const __m512i y_high = _mm512_permutex2var_epi64(A[c + 1], lanes_high, B[c + 1]);
      _mm512_storeu_si512(chunk + (0 + c) * 32, _mm512_shuffle_i64x2(x_low, y_low, 0x44));    // groups c, c+1
      _mm512_storeu_si512(chunk + (4 + c) * 32, _mm512_shuffle_i64x2(x_low, y_low, 0xEE));    // 4+c, 5+c
      _mm512_storeu_si512(chunk + (8 + c) * 32, _mm512_shuffle_i64x2(x_high, y_high, 0x44));  // 8+c, 9+c
      _mm512_storeu_si512(chunk + (12 + c) * 32, _mm512_shuffle_i64x2(x_high, y_high, 0xEE)); // 12+c, 13+c
    }
    if (groups < 16) std::memcpy(dst, partial, static_cast<std::size_t>(groups) * 32);
  }
  for (int i = 0; i < rows; ++i) row_sums[i] = _mm512_reduce_add_epi32(sum[i]);
}

// Up to mr rows (`rows`, row stride K) of A in the layout of a kernel whose
// A k-group is 64 bytes: segment g of row i at out + (g * mr + i) * 64,
// sign-shifted by `flip`, zero past K and in rows past `rows`; the row sums
// of the shifted values (vpdpbusd with ones, wrapping) to row_sums unless
// it is null.
void pack_a_block_k64_avx512(int mr, const unsigned char* a, int64_t K, int64_t rows, unsigned char flip,
                             unsigned char* out, int32_t* row_sums) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
  const __m512i ones = _mm512_set1_epi8(1);
  const int64_t whole = K / 64, groups = (K + 63) / 64;
  const __mmask64 last = K % 64 == 0 ? ~__mmask64(0) : (__mmask64(1) << (K % 64)) - 1;
  for (int64_t i = 0; i < mr; ++i) {
    unsigned char* d = out + i * 64;
    const int64_t stride = static_cast<int64_t>(mr) * 64;
    if (i >= rows) {
      for (int64_t g = 0; g < groups; ++g) _mm512_storeu_si512(d + g * stride, _mm512_setzero_si512());
      continue;
    }
    const unsigned char* row = a + i * K;
    __m512i sum = _mm512_setzero_si512();
    for (int64_t g = 0; g < whole; ++g) {
      const __m512i v = _mm512_xor_si512(_mm512_loadu_si512(row + g * 64), vflip);
      _mm512_storeu_si512(d + g * stride, v);
      sum = _mm512_dpbusd_epi32(sum, v, ones);
    }
    if (whole < groups) {
      const __m512i v = _mm512_maskz_mov_epi8(last, _mm512_xor_si512(_mm512_maskz_loadu_epi8(last, row + whole * 64), vflip));
      _mm512_storeu_si512(d + whole * stride, v);
      sum = _mm512_dpbusd_epi32(sum, v, ones);
    }
    if (row_sums != nullptr) row_sums[i] = _mm512_reduce_add_epi32(sum);
  }
}

}  // namespace

PackPanelPairsFn pack_panel_pairs_vnni_avx512_fn() { return pack_panel_pairs_vnni_avx512; }
PackABlock8Fn pack_a_block8_vnni_avx512_fn() { return pack_a_block8_vnni_avx512; }
PackABlockK64Fn pack_a_block_k64_avx512_fn() { return pack_a_block_k64_avx512; }

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
PackPanelPairsFn pack_panel_pairs_vnni_avx512_fn() { return nullptr; }
PackABlock8Fn pack_a_block8_vnni_avx512_fn() { return nullptr; }
PackABlockK64Fn pack_a_block_k64_avx512_fn() { return nullptr; }
}  // namespace qmatmul::gemm

#endif
