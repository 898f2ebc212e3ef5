// AVX2 version of the KR = 4 byte interleave used to pack B for the VNNI
// kernels (pack.cpp, pack_group4): out[4j + t] = row t, column j, sign
// shifted, 32 columns per step with byte/word unpacks, and the column sums
// of the shifted values in the same pass. Columns past the last full group
// of 32 are done one by one. The packers of the exact int16 kernels' pair
// layouts: B in whole NR = 16 panels over all k, as int16 (AVX-512 BW) or
// as bytes (AVX2, which widens them itself), and A (MR = 1 to 6, KR = 2) 16
// k of each row widened at a time and transposed as 32-bit pairs. And B in
// whole panels of the AVX-VNNI kernels' layout (NR = 16, KR = 4 bytes).
// Compiled with AVX2 flags; nullptr without.
#include <cstdint>

#include "gemm/pack.h"
#include "gemm/x86/pair_groups.h"

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

// The exact int16 kernels' B pair layout (NR = 16, KR = 2): pair j of
// k-group g = (b[2g][j], b[2g + 1][j]) XOR flip (zeros past K), as Elem:
// int16_t, sign-extended, or int8_t bytes (the same element offsets). A byte
// unpack of the two rows gives the byte layout directly, one widening per 8
// columns the int16 one; vpmaddwd of the widened pairs against ones gives
// each column's pair sum.
//
// kPairs pairs of whole panels (32 columns: one 32-byte load per row) over
// all k-groups, in one tight loop with the column sums in registers and the
// rows a few k-groups ahead prefetched: each k-group reads only a short
// segment of two rows (N bytes apart), which neither the hardware
// prefetchers nor a loop with calls in it keep enough misses in flight for.
// kPairs = 0: a single panel (16 columns, 16-byte loads).
template <int kPairs, typename Elem>
void pack_pair_panel_group(const unsigned char* b, int64_t N, int64_t K, int64_t c0, unsigned char flip, Elem* out,
                           std::size_t panel_elems, int32_t* sums) {
  constexpr int64_t kPrefetchGroups = 32;
  constexpr int kPanels = kPairs == 0 ? 1 : 2 * kPairs;
  const __m256i vflip = _mm256_set1_epi8(static_cast<char>(flip));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i sum[kPanels][2];  // wrapping int32 sums, 8 columns each
  for (int p = 0; p < kPanels; ++p) sum[p][0] = sum[p][1] = _mm256_setzero_si256();
  // Byte pairs x (8 columns) stored at panel p, half h, k-group g.
  const auto put = [&](int p, int h, int64_t g, __m128i x) {
    Elem* dst = out + p * panel_elems + 32 * g + 16 * h;
    const __m256i w = _mm256_cvtepi8_epi16(x);
    if constexpr (sizeof(Elem) == 2)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), w);
    else
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), x);
    sum[p][h] = _mm256_add_epi32(sum[p][h], _mm256_madd_epi16(w, ones));
  };
  const auto k_group = [&](int64_t g, bool has_row1) {
    const unsigned char* row0 = b + 2 * g * N + c0;
    if (2 * (g + kPrefetchGroups) + 1 < K)
      for (int c = 0; c < 16 * kPanels; c += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(row0 + 2 * kPrefetchGroups * N + c), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(row0 + (2 * kPrefetchGroups + 1) * N + c), _MM_HINT_T0);
      }
    if constexpr (kPairs == 0) {
      const __m128i x0 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row0)),
                                       _mm256_castsi256_si128(vflip));
      const __m128i x1 = has_row1 ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row0 + N)),
                                                  _mm256_castsi256_si128(vflip))
                                  : _mm_setzero_si128();
      put(0, 0, g, _mm_unpacklo_epi8(x0, x1));  // columns 0-7
      put(0, 1, g, _mm_unpackhi_epi8(x0, x1));  // columns 8-15
    } else {
      for (int q = 0; q < kPairs; ++q) {
        const auto* src = reinterpret_cast<const __m256i*>(row0 + 32 * q);
        const __m256i x0 = _mm256_xor_si256(_mm256_loadu_si256(src), vflip);
        const __m256i x1 = has_row1 ? _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                                            row0 + N + 32 * q)),
                                                        vflip)
                                    : _mm256_setzero_si256();
        // Per 128-bit lane L (panel 2q + L): lo = columns 0-7, hi = 8-15.
        const __m256i lo = _mm256_unpacklo_epi8(x0, x1), hi = _mm256_unpackhi_epi8(x0, x1);
        put(2 * q, 0, g, _mm256_castsi256_si128(lo));
        put(2 * q, 1, g, _mm256_castsi256_si128(hi));
        put(2 * q + 1, 0, g, _mm256_extracti128_si256(lo, 1));
        put(2 * q + 1, 1, g, _mm256_extracti128_si256(hi, 1));
      }
    }
  };
  const int64_t full_groups = K / 2;
  for (int64_t g = 0; g < full_groups; ++g) k_group(g, true);
  if (K % 2 != 0) k_group(full_groups, false);
  for (int p = 0; p < kPanels; ++p)
    for (int h = 0; h < 2; ++h) _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + 16 * p + 8 * h), sum[p][h]);
}

// `panels` whole panels from column c0: pairs in groups of up to 2
// (pair_groups.h; 8 sum registers of the 16), each over all of K, then a
// last odd panel. Measured, the packer alone, 1 thread, GB/s of B, medians
// of 5 interleaved rounds, against one pass over all panels with the sums
// loaded and stored at every k-group: 768 x 768, 10 panels, B in L2 18 ->
// 35, in L3 20 -> 34; 16 panels in L3 12 -> 32; 2048 x 2048, 4 panels,
// 20 -> 22; 1024 x 4096, 8 panels, 17 -> 19. Groups of up to 4 pairs spill
// sums: 16 panels of 768 x 768 in L3 at 24 against 30 with groups of 2.
// (Measured for the int16 form; the byte form walks B the same way.)
template <typename Elem>
void pack_pair_panels_avx2(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int64_t panels,
                           unsigned char flip, Elem* out, std::size_t panel_elems, int32_t* sums) {
  for_each_panel_group<2>(panels, [&](auto group, int64_t panel) {
    pack_pair_panel_group<decltype(group)::value, Elem>(b, N, K, c0 + 16 * panel, flip, out + panel * panel_elems,
                                                        panel_elems, sums + 16 * panel);
  });
}

// The AVX-VNNI kernels' B layout (NR = 16, KR = 4, bytes): k-group g of a
// panel is 64 bytes, column j's four rows (4g .. 4g + 3, XOR flip; zeros,
// not shifted zeros, past K) at 4j. Walked like the int16 packer above:
// kPairs pairs of whole panels (32 columns: one 32-byte load per row) over
// all k-groups with the column sums in registers and the rows a few
// k-groups ahead prefetched; kPairs = 0: a single panel (16-byte loads).
// The byte and word unpacks leave, in each 128-bit lane L (panel 2q + L of
// pair q), columns 0-3, 4-7, 8-11 and 12-15 in four registers; lane
// shuffles put each panel's 64 bytes in order. A column's sum is its four
// signed bytes: vpmaddubsw against ones (u8 x s8, |pair| <= 256, never
// saturating), then vpmaddwd against ones.
template <int kPairs>
void pack_vnni16_panel_group(const unsigned char* b, int64_t N, int64_t K, int64_t c0, unsigned char flip,
                             int8_t* out, std::size_t panel_bytes, int32_t* sums) {
  constexpr int64_t kPrefetchGroups = 16;
  constexpr int kPanels = kPairs == 0 ? 1 : 2 * kPairs;
  const __m256i vflip = _mm256_set1_epi8(static_cast<char>(flip));
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  __m256i sum[kPanels][2];  // wrapping int32 sums: columns 0-7, 8-15
  for (int p = 0; p < kPanels; ++p) sum[p][0] = sum[p][1] = _mm256_setzero_si256();
  // Columns 8h .. 8h + 7 of panel p at k-group g: 32 bytes.
  const auto put = [&](int p, int h, int64_t g, __m256i w) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + p * panel_bytes + 64 * g + 32 * h), w);
    sum[p][h] = _mm256_add_epi32(sum[p][h], _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, w), ones16));
  };
  const auto k_group = [&](int64_t g, int64_t rows) {
    const unsigned char* row0 = b + 4 * g * N + c0;
    if (4 * (g + kPrefetchGroups) + 3 < K)
      for (int t = 0; t < 4; ++t)
        for (int c = 0; c < 16 * kPanels; c += 64)
          _mm_prefetch(reinterpret_cast<const char*>(row0 + (4 * kPrefetchGroups + t) * N + c), _MM_HINT_T0);
    if constexpr (kPairs == 0) {
      __m128i x[4];
      for (int t = 0; t < 4; ++t)
        x[t] = t < rows ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row0 + t * N)),
                                        _mm256_castsi256_si128(vflip))
                        : _mm_setzero_si128();
      const __m128i x01_lo = _mm_unpacklo_epi8(x[0], x[1]), x01_hi = _mm_unpackhi_epi8(x[0], x[1]);
      const __m128i x23_lo = _mm_unpacklo_epi8(x[2], x[3]), x23_hi = _mm_unpackhi_epi8(x[2], x[3]);
      put(0, 0, g, _mm256_set_m128i(_mm_unpackhi_epi16(x01_lo, x23_lo), _mm_unpacklo_epi16(x01_lo, x23_lo)));
      put(0, 1, g, _mm256_set_m128i(_mm_unpackhi_epi16(x01_hi, x23_hi), _mm_unpacklo_epi16(x01_hi, x23_hi)));
    } else {
      for (int q = 0; q < kPairs; ++q) {
        __m256i x[4];
        for (int t = 0; t < 4; ++t)
          x[t] = t < rows ? _mm256_xor_si256(
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row0 + t * N + 32 * q)), vflip)
                          : _mm256_setzero_si256();
        const __m256i x01_lo = _mm256_unpacklo_epi8(x[0], x[1]), x01_hi = _mm256_unpackhi_epi8(x[0], x[1]);
        const __m256i x23_lo = _mm256_unpacklo_epi8(x[2], x[3]), x23_hi = _mm256_unpackhi_epi8(x[2], x[3]);
        const __m256i c0_3 = _mm256_unpacklo_epi16(x01_lo, x23_lo), c4_7 = _mm256_unpackhi_epi16(x01_lo, x23_lo);
        const __m256i c8_11 = _mm256_unpacklo_epi16(x01_hi, x23_hi), c12_15 = _mm256_unpackhi_epi16(x01_hi, x23_hi);
        put(2 * q, 0, g, _mm256_permute2x128_si256(c0_3, c4_7, 0x20));
        put(2 * q, 1, g, _mm256_permute2x128_si256(c8_11, c12_15, 0x20));
        put(2 * q + 1, 0, g, _mm256_permute2x128_si256(c0_3, c4_7, 0x31));
        put(2 * q + 1, 1, g, _mm256_permute2x128_si256(c8_11, c12_15, 0x31));
      }
    }
  };
  const int64_t full_groups = K / 4;
  for (int64_t g = 0; g < full_groups; ++g) k_group(g, 4);
  if (K % 4 != 0) k_group(full_groups, K % 4);
  for (int p = 0; p < kPanels; ++p)
    for (int h = 0; h < 2; ++h) _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + 16 * p + 8 * h), sum[p][h]);
}

// `panels` whole panels from column c0: pairs in groups of up to 2
// (pair_groups.h), each over all of K, then a last odd panel. Measured,
// the packer alone, 1 thread, GB/s of B, medians of 3 interleaved rounds,
// against one pass over all panels with the sums loaded and stored at every
// k-group: 768 x 768, 16 panels, B in L2 14 -> 46, in L3 14 -> 43; 48
// panels in L3 12 -> 29; 2048 x 2048, 32 panels, 12 -> 22; from memory
// (4096 x 4096) 9-10 either way.
void pack_panels_vnni16_avx2(const unsigned char* b, int64_t N, int64_t K, int64_t c0, int64_t panels,
                             unsigned char flip, int8_t* out, std::size_t panel_bytes, int32_t* sums) {
  for_each_panel_group<2>(panels, [&](auto group, int64_t panel) {
    pack_vnni16_panel_group<decltype(group)::value>(b, N, K, c0 + 16 * panel, flip, out + panel * panel_bytes,
                                                    panel_bytes, sums + 16 * panel);
  });
}

// The kMr row words of one pair group (rows 0-3 in r03, 4-5 in r45, one
// 32-bit pair each) at dst, kMr * 4 bytes and no more: the groups are not
// written in address order, so a wider store would overwrite a neighbour.
template <int kMr>
inline void store_pair_group(int16_t* dst, __m128i r03, __m128i r45) {
  if constexpr (kMr >= 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), r03);
    if constexpr (kMr == 6) _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 8), r45);
    if constexpr (kMr == 5) _mm_storeu_si32(dst + 8, r45);
  } else {
    if constexpr (kMr >= 2) _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), r03);
    if constexpr (kMr == 1) _mm_storeu_si32(dst, r03);
    if constexpr (kMr == 3) _mm_storeu_si32(dst + 4, _mm_unpackhi_epi64(r03, r03));
  }
}

// One block of up to kMr rows of A (kMr = 1 to 6) in the exact kernels'
// layout, MR = kMr, KR = 2, each value widened to int16: pair (g, i) =
// (a[i][2g], a[i][2g + 1]) XOR flip at ((g * kMr) + i) * 2; rows past
// `rows` are zero. Per 16 k: each row's 16 bytes widen to 8 pairs (one
// 32-bit word each); an 8 x 8 word transpose (rows past kMr zero) turns them
// into 8 groups of kMr pairs. kSums: the row sums too (vpmaddwd against
// ones), which only a nonzero zb' needs; without them row_sums is unused.
template <int kMr, bool kSums>
void pack_a_block_int16_avx2(const unsigned char* a, int64_t K, int64_t rows, unsigned char flip, int16_t* out,
                             int32_t* row_sums) {
  const __m128i vflip = _mm_set1_epi8(static_cast<char>(flip));
  const __m256i ones = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  __m256i sums[kMr];
  for (int i = 0; i < kMr; ++i) sums[i] = zero;
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m256i w[6];
    for (int i = 0; i < 6; ++i) {
      if (i < kMr && i < rows) {
        const __m128i bytes = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i * K + k)), vflip);
        w[i] = _mm256_cvtepu8_epi16(bytes);
        if constexpr (kSums) sums[i] = _mm256_add_epi32(sums[i], _mm256_madd_epi16(w[i], ones));
      } else {
        w[i] = zero;
      }
    }
    // Per 128-bit lane (pairs 0-3 | 4-7): t = rows interleaved by word.
    const __m256i t0 = _mm256_unpacklo_epi32(w[0], w[1]), t1 = _mm256_unpackhi_epi32(w[0], w[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(w[2], w[3]), t3 = _mm256_unpackhi_epi32(w[2], w[3]);
    const __m256i t4 = _mm256_unpacklo_epi32(w[4], w[5]), t5 = _mm256_unpackhi_epi32(w[4], w[5]);
    // rows03[q]: rows 0-3 of pair q (low lane) and q + 4 (high lane); rows45[q]: rows 4-5.
    const __m256i rows03[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                               _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
    const __m256i rows45[4] = {_mm256_unpacklo_epi64(t4, zero), _mm256_unpackhi_epi64(t4, zero),
                               _mm256_unpacklo_epi64(t5, zero), _mm256_unpackhi_epi64(t5, zero)};
    int16_t* dst = out + (k / 2) * kMr * 2;
    for (int q = 0; q < 4; ++q) {
      store_pair_group<kMr>(dst + q * kMr * 2, _mm256_castsi256_si128(rows03[q]), _mm256_castsi256_si128(rows45[q]));
      store_pair_group<kMr>(dst + (q + 4) * kMr * 2, _mm256_extracti128_si256(rows03[q], 1),
                            _mm256_extracti128_si256(rows45[q], 1));
    }
  }
  uint32_t tail_sums[kMr] = {};
  const int64_t kgroups = (K + 1) / 2;
  for (int64_t g = k / 2; g < kgroups; ++g)
    for (int i = 0; i < kMr; ++i)
      for (int t = 0; t < 2; ++t) {
        const int64_t kk = 2 * g + t;
        const unsigned char v = i < rows && kk < K ? static_cast<unsigned char>(a[i * K + kk] ^ flip) : 0;
        out[(g * kMr + i) * 2 + t] = v;
        tail_sums[i] += v;
      }
  if constexpr (kSums)
    for (int i = 0; i < rows; ++i) {
      alignas(32) uint32_t lanes[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums[i]);
      uint32_t total = tail_sums[i];
      for (uint32_t lane : lanes) total += lane;  // wrapping, like every zero-point term
      row_sums[i] = static_cast<int32_t>(total);
    }
}

}  // namespace

PackGroup4Fn pack_group4_avx2_fn() { return pack_group4_avx2; }
PackABlockInt16Fn pack_a_block_int16_avx2_fn(int mr, bool row_sums) {
  static constexpr PackABlockInt16Fn kWithSums[] = {
      pack_a_block_int16_avx2<1, true>, pack_a_block_int16_avx2<2, true>, pack_a_block_int16_avx2<3, true>,
      pack_a_block_int16_avx2<4, true>, pack_a_block_int16_avx2<5, true>, pack_a_block_int16_avx2<6, true>};
  static constexpr PackABlockInt16Fn kWithoutSums[] = {
      pack_a_block_int16_avx2<1, false>, pack_a_block_int16_avx2<2, false>, pack_a_block_int16_avx2<3, false>,
      pack_a_block_int16_avx2<4, false>, pack_a_block_int16_avx2<5, false>, pack_a_block_int16_avx2<6, false>};
  if (mr < 1 || mr > 6) return nullptr;
  return (row_sums ? kWithSums : kWithoutSums)[mr - 1];
}
PackPanelsInt16Fn pack_panels_int16_avx2_fn() { return pack_pair_panels_avx2<int16_t>; }
PackPanelsPairBytesFn pack_panels_pair_bytes_avx2_fn() { return pack_pair_panels_avx2<int8_t>; }
PackPanelsVnni16Fn pack_panels_vnni16_avx2_fn() { return pack_panels_vnni16_avx2; }

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
PackGroup4Fn pack_group4_avx2_fn() { return nullptr; }
PackABlockInt16Fn pack_a_block_int16_avx2_fn(int, bool) { return nullptr; }
PackPanelsInt16Fn pack_panels_int16_avx2_fn() { return nullptr; }
PackPanelsPairBytesFn pack_panels_pair_bytes_avx2_fn() { return nullptr; }
PackPanelsVnni16Fn pack_panels_vnni16_avx2_fn() { return nullptr; }
}  // namespace qmatmul::gemm

#endif
