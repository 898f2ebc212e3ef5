// The AVX-512 VNNI kernel for a few rows of A (M <= 6) against an unpacked,
// row-major B: it reads B's rows straight from the caller's matrix and never
// writes a packed copy.
//
// Packing B costs more than the whole product when M is this small: every
// byte of B is read, shuffled, stored and read again for a handful of
// multiply-adds. Here each step takes G k-groups (4G consecutive rows of B)
// and walks the column block 64 columns at a time: the 4 row segments of a
// k-group are interleaved in registers into the KR = 4 layout that vpdpbusd
// wants (vpermd puts each 128-bit lane's 4-byte column groups in place, then
// byte and word unpacks interleave the rows, giving columns 0-15, 16-31,
// 32-47, 48-63 in order), and each row of A' multiplies them into running
// sums kept in the caller's small accumulator block (L1). B is read as 4G
// sequential row streams, which the hardware prefetchers follow; the sums
// of a 64-column chunk are loaded and stored once per step.
//
// The column sums of B' come from the same registers (vpdpbusd with a vector
// of ones), so the zero-point algebra of zero_point.h needs no other pass.
// All sums wrap modulo 2^32, as in the packed kernels: results are the same
// bits. Compiled with AVX-512 F/BW + VNNI flags; nullptr getter without.
#include "gemm/raw_b_small_m.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
// GCC 12 reports its own _mm512_undefined_* helpers (self-initialised) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace qmatmul::gemm {
namespace {

constexpr int64_t kChunk = 64;  // columns per register group (4 zmm of int32)

inline __m512i broadcast_a(const uint8_t* p) {
  int32_t w;
  std::memcpy(&w, p, sizeof w);
  return _mm512_set1_epi32(w);
}

// Rows 4g .. 4g+3 of a step, columns c .. c+63 (only those under `mask`
// read when kMasked), interleaved into the KR = 4 layout: o[q] holds columns
// 16q .. 16q+15. kTail: rows at or past valid_rows read as zeros (the last,
// partial k-group).
template <bool kFlip, bool kTail, bool kMasked>
inline void interleave_group(const unsigned char* rows, int g, int64_t valid_rows, int64_t N, int64_t c,
                             __mmask64 mask, __m512i (&o)[4]) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(0x80));
  // Lane L of the permuted row gets 4-byte column groups L, 4+L, 8+L, 12+L.
  const __m512i lanes = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  __m512i r[4];
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t) {
    r[t] = _mm512_setzero_si512();  // rows past K: zero, not a shifted zero
    if (kTail && 4 * g + t >= valid_rows) continue;
    const unsigned char* src = rows + (4 * g + t) * N + c;
    // Masked loads only for the first and last chunks: on this machine a
    // masked load in the main loop halves the rate at which B streams in.
    __m512i v = kMasked ? _mm512_maskz_loadu_epi8(mask, src) : _mm512_loadu_si512(src);
    if constexpr (kFlip) v = _mm512_xor_si512(v, vflip);
    r[t] = _mm512_permutexvar_epi32(lanes, v);
  }
  const __m512i r01_lo = _mm512_unpacklo_epi8(r[0], r[1]), r01_hi = _mm512_unpackhi_epi8(r[0], r[1]);
  const __m512i r23_lo = _mm512_unpacklo_epi8(r[2], r[3]), r23_hi = _mm512_unpackhi_epi8(r[2], r[3]);
  o[0] = _mm512_unpacklo_epi16(r01_lo, r23_lo);
  o[1] = _mm512_unpackhi_epi16(r01_lo, r23_lo);
  o[2] = _mm512_unpacklo_epi16(r01_hi, r23_hi);
  o[3] = _mm512_unpackhi_epi16(r01_hi, r23_hi);
}

// One 64-column chunk of one step (k-groups [g0, g0 + G)) for M <= 4: the
// sums of every row and the column sums are loaded once, updated group by
// group, stored once. av: the rows' A' words, broadcast.
template <int M, int G, bool kFlip, bool kTail, bool kMasked>
inline void chunk_step(const __m512i (&av)[G][M], const unsigned char* rows, int64_t valid_rows, int64_t N,
                       int64_t c, __mmask64 mask, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s[M + 1][4];  // rows of A', then the column sums
#pragma GCC unroll 8
  for (int m = 0; m <= M; ++m)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) s[m][q] = _mm512_load_si512(m < M ? acc + m * ld + c + 16 * q : col_sums + c + 16 * q);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) {
    __m512i o[4];
    interleave_group<kFlip, kTail, kMasked>(rows, g, valid_rows, N, c, mask, o);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) s[M][q] = _mm512_dpbusd_epi32(s[M][q], ones, o[q]);
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) s[m][q] = _mm512_dpbusd_epi32(s[m][q], av[g][m], o[q]);
  }
#pragma GCC unroll 8
  for (int m = 0; m <= M; ++m)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) _mm512_store_si512(m < M ? acc + m * ld + c + 16 * q : col_sums + c + 16 * q, s[m][q]);
}

// The same for more rows (M > 4), whose sums do not fit in registers at
// once: the step's groups are interleaved first (G x 4 registers), then the
// column sums and each block of up to 4 rows are loaded, updated over the
// groups and stored in turn. `a` points at the step's first A' word of row 0.
template <int M, int G, bool kFlip, bool kTail, bool kMasked>
inline void chunk_step_row_blocks(const uint8_t* a, int64_t kp, const unsigned char* rows, int64_t valid_rows,
                                  int64_t N, int64_t c, __mmask64 mask, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i o[G][4];
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) interleave_group<kFlip, kTail, kMasked>(rows, g, valid_rows, N, c, mask, o[g]);
  __m512i s[4][4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) s[0][q] = _mm512_load_si512(col_sums + c + 16 * q);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) s[0][q] = _mm512_dpbusd_epi32(s[0][q], ones, o[g][q]);
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) _mm512_store_si512(col_sums + c + 16 * q, s[0][q]);
#pragma GCC unroll 4
  for (int m0 = 0; m0 < M; m0 += 4) {
    const int rows_here = M - m0 < 4 ? M - m0 : 4;
#pragma GCC unroll 4
    for (int i = 0; i < rows_here; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) s[i][q] = _mm512_load_si512(acc + (m0 + i) * ld + c + 16 * q);
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
      for (int i = 0; i < rows_here; ++i) {
        const __m512i ai = broadcast_a(a + (m0 + i) * kp + 4 * g);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) s[i][q] = _mm512_dpbusd_epi32(s[i][q], ai, o[g][q]);
      }
#pragma GCC unroll 4
    for (int i = 0; i < rows_here; ++i)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) _mm512_store_si512(acc + (m0 + i) * ld + c + 16 * q, s[i][q]);
  }
}

// One step, k-groups [g0, g0 + G), over columns [0, cols) of `b`: chunks
// with plain loads, masked loads for the first chunk when `head` (a mask of
// its valid bytes) says some are not valid, and for the last partial one.
template <int M, int G, bool kFlip, bool kTail>
void k_step(const uint8_t* a, int64_t kp, int64_t g0, const unsigned char* b, int64_t K, int64_t N,
            int64_t cols, __mmask64 head, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const unsigned char* rows = b + 4 * g0 * N;
  const int64_t valid_rows = kTail ? K - 4 * g0 : 4 * G;
  const auto tail_mask = [](int64_t n) { return n >= kChunk ? ~__mmask64(0) : (__mmask64(1) << n) - 1; };
  const auto chunk = [&](auto masked, int64_t c, __mmask64 mask) {
    constexpr bool kMasked = decltype(masked)::value;
    if constexpr (M <= 4) {
      __m512i av[G][M];
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
        for (int m = 0; m < M; ++m) av[g][m] = broadcast_a(a + m * kp + 4 * (g0 + g));
      chunk_step<M, G, kFlip, kTail, kMasked>(av, rows, valid_rows, N, c, mask, acc, ld, col_sums);
    } else {
      chunk_step_row_blocks<M, G, kFlip, kTail, kMasked>(a + 4 * g0, kp, rows, valid_rows, N, c, mask, acc, ld,
                                                         col_sums);
    }
  };
  int64_t c = 0;
  if (head != ~__mmask64(0)) {
    chunk(std::true_type{}, 0, head & tail_mask(cols));
    c = kChunk;
  }
  for (; c + kChunk <= cols; c += kChunk) chunk(std::false_type{}, c, 0);
  if (c < cols) chunk(std::true_type{}, c, tail_mask(cols - c));
}

template <int M, int G, bool kFlip>
void run_steps(const uint8_t* a, int64_t kp, const unsigned char* b, int64_t K, int64_t N, int64_t cols,
               __mmask64 head, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const int64_t full_groups = K / 4;
  int64_t g = 0;
  for (; g + G <= full_groups; g += G) k_step<M, G, kFlip, false>(a, kp, g, b, K, N, cols, head, acc, ld, col_sums);
  for (; g < full_groups; ++g) k_step<M, 1, kFlip, false>(a, kp, g, b, K, N, cols, head, acc, ld, col_sums);
  if (K % 4 != 0) k_step<M, 1, kFlip, true>(a, kp, g, b, K, N, cols, head, acc, ld, col_sums);
}

// When every row starts at the same offset within a 64-byte line (N a
// multiple of 64), the block is shifted back to the line start so that the
// row loads are aligned (a load split across two lines streams at about
// half the rate here): the first `shift` bytes of the first chunk are masked
// off, and column j's sums land at index j + shift.
template <int M, int G>
int64_t raw_b_small_m(const uint8_t* a, int64_t kp, const unsigned char* b, int64_t K, int64_t N, int64_t cols,
                      unsigned char flip, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const int64_t shift = N % kChunk == 0 ? static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(b) % kChunk) : 0;
  const __mmask64 head = ~__mmask64(0) << shift;
  const unsigned char* start = b - shift;  // masked-off bytes are never read
  const int64_t width = cols + shift;
  const int64_t padded = (width + kChunk - 1) / kChunk * kChunk;
  for (int m = 0; m < M; ++m) std::memset(acc + m * ld, 0, sizeof(int32_t) * static_cast<std::size_t>(padded));
  std::memset(col_sums, 0, sizeof(int32_t) * static_cast<std::size_t>(padded));
  if (flip != 0)
    run_steps<M, G, true>(a, kp, start, K, N, width, head, acc, ld, col_sums);
  else
    run_steps<M, G, false>(a, kp, start, K, N, width, head, acc, ld, col_sums);
  return shift;
}

}  // namespace

// k-groups per step: enough independent vpdpbusd chains per chunk (M = 1
// has only 5 sums per k-group) while the sums stay in registers. Up to M = 6
// (measured): beyond it the sums' loads and stores, (M + 1) x 4 per chunk
// and step, cost more than packing B and running the tile kernels.
RawBSmallMFn raw_b_small_m_avx512vnni_fn(int m) {
  switch (m) {
    case 1: return raw_b_small_m<1, 4>;
    case 2: return raw_b_small_m<2, 2>;
    case 3: return raw_b_small_m<3, 2>;
    case 4: return raw_b_small_m<4, 2>;
    case 5: return raw_b_small_m<5, 2>;
    case 6: return raw_b_small_m<6, 2>;
    default: return nullptr;
  }
}

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
RawBSmallMFn raw_b_small_m_avx512vnni_fn(int) { return nullptr; }
}  // namespace qmatmul::gemm

#endif
