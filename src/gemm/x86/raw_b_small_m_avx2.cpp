// The AVX2 kernels for 1 to 64 rows of A (M <= kMaxRowsAvx2) against an
// unpacked, row-major B, for CPUs without AVX-512 VNNI: like the AVX-512
// ones (raw_b_small_m_avx512vnni.cpp) they read B's rows in place and never
// write a packed copy. Without them an unpacked call with few rows packed
// B into the exact AVX2 kernel's int16 layout first, writing twice B's
// bytes and reading them back for a handful of multiply-adds per byte.
//
// Exact, as the AVX2 tile kernel is (int8_tile_avx2.cpp): no vpmaddubsw.
// Each step takes 2 kPairs consecutive rows of B. For 16 columns and
// one k-pair, the two rows' 16 bytes are interleaved as bytes (vpunpcklbw /
// vpunpckhbw on xmm) and each half sign-extended to int16 pairs (B'[k][j],
// B'[k+1][j]), in column order; vpmaddwd with a row's pair broadcast gives
// eight exact int32 sums of two products, which vpaddd accumulates with
// wrapping.
//
// A row's zero point is folded into its pairs (the folded form of
// raw_b_small_m.h): the pair is (A'[k] - za', A'[k+1] - za') as int16, so
// the sums are already sum_k (a' - za') b', and no column sums of B' are
// needed (col_sums comes back zero). |a' - za'| <= 255, so each product is
// within +-32640 and the pair sums stay exact. Against summing B' per
// column beside the products (two vpaddw of int16 per k-pair, widened once
// a step), measured in the kernel alone (bench_int8_kernels RawBStream, 2
// rounds, GOPS): 1, 2, 4 rows with B in L2 16.4-16.7 -> 21.4, 22.6-22.9 ->
// 28.8-29.1, 26.2-26.6 -> 29.3-29.9; from memory 12.6-12.8 -> 15.4-15.7,
// 19.1-19.4 -> 23.1-23.7, 24.1-24.4 -> 27.4-27.5. Through the driver
// (qmatmul bench, unpacked, MatMulInteger and QLinear u8, 3 interleaved
// rounds, 1 / 2 threads): 1, 2, 3, 4, 6, 8, 16 x 4096 x 4096 1.20-1.22 /
// 1.17-1.18, 1.24-1.26 / 1.25-1.27, 1.16-1.17 / 1.17, 1.14-1.15 / 1.16-1.17,
// 1.17-1.18 / 1.16-1.17, 1.12-1.14 / 1.11-1.13, 1.05-1.07 / 1.06-1.07; 2 x
// 1024 x 1024 1.34-1.38 / 1.30.
//
// Interleaving the bytes in 128 bits before widening, rather than widening
// each row and interleaving words in 256 bits, leaves the sums in column
// order (the ymm unpacks work within 128-bit lanes and left each chunk
// permuted, to be put back at the end) and costs fewer micro-ops where ymm
// operations split in two: on Zen 1 (QLinear u8, unpacked, 3 interleaved
// rounds, 1 / 2 threads, M = 1, 2, 4, 8, 16 x 4096 x 4096) 1.006-1.043x.
// A row's A' pairs for a step are widened once per step into a
// small array, and broadcast from it for every chunk of the block. Up to
// 4 rows every row's sums stay in registers through a step (chunk_step); from 5 rows they do not fit beside B', so the step's
// pairs are interleaved first and each row's sums are updated in turn
// (chunk_step_rows). Without the column sums 5 and 6 rows would fit in
// registers too, but that ran 0.87-0.94x (5, 6 x 4096 x 4096, 5 x 1024 x
// 1024, 6 x 2048 x 2048, 3 interleaved rounds, 1 / 2 threads). Every chunk's sums are loaded and stored once per
// step, and the chunk first asks for its line of the next step's rows (B
// is read as short row segments, N bytes apart, which the hardware
// prefetchers barely follow).
//
// When N is a multiple of 4096, a step's 8 rows of B fall in one set of an
// 8-way L1 at each column, and the next step's lines asked for at the
// chunk's column land in that same set, evicting the lines the step still
// reads for three more chunks. There the next step's lines are asked for
// 512 bytes (8 lines) behind the chunk, in sets the step has finished with,
// and the block's last lines after its last chunk. Measured on Zen 1
// (QLinear u8, unpacked, 3 interleaved rounds, 1 / 2 threads), one line
// behind against the chunk's own line: 1 x 4096 x 4096 1.25 / 1.12, 1 x
// 11008 x 4096 1.25 / 1.13, 2 and 8 x 4096 x 4096 1.00-1.01 (3 to 16 rows
// 0.99-1.08 in 2 rounds); then 8 lines behind against one: 1, 2, 4, 8 x
// 4096 x 4096 1.11 / 1.07, 1.08 / 1.05, 1.04 / 1.02, 1.01 / 1.01, 1 x
// 11008 x 4096 1.08 / 1.01 (16 lines about the same, 32 lines 0.85-1.00
// on 2 threads, whose blocks are 2048 columns; 2 lines 0.86-1.10, 4 lines
// 0.99-1.11). With other N a line behind read 0.90-0.94 (MatMulInteger 1 x
// 4096 x 4160, 1 x 4096 x 11008, 1 x 2048 x 2048) and 8 lines behind
// 0.96-0.99 (1 and 2 x 4096 x 4160, 1 x 4096 x 11008; 2048 x 2048
// 0.98-1.05), so there it stays the chunk's own.
//
// The narrow form (Xmm8, raw_b_small_m_avx2_narrow_fn, 1 row) takes 8
// columns a chunk in xmm: each row's 8 bytes widened as they are loaded
// (vpmovsxbw xmm, m64), then the two rows' words interleaved. It is for
// CPUs that run each 256-bit operation as two halves: on Zen 1, measured
// with register-only loops at about 2.5 GHz, vpmovsxbw ymm ran 0.5 a cycle
// against 2 for its xmm form, vpunpck* xmm 2, vpmaddwd xmm 1 and ymm 0.5,
// so the 16-column form was bound by widening B (2 vpunpck + 2 vpmovsxbw
// ymm, 5 cycles for 32 multiply-adds) where the narrow one needs 4 (8
// shuffles on two pipes, 4 vpmaddwd xmm on one). raw_b_small_m.cpp has its
// gains. Its chunks of a whole step (no odd pair, no short step) run
// unrolled, without the per-pair checks (kFull), which it needed to gain
// (MatMulInteger 1 x 4096 x 4160, 1 thread: 19.7 -> 22.9 GOPS); the
// 16-column form does not, since it read 0.98-0.99 so (QLinear u8, 1, 2, 4
// x 4096 x 4096, 1 x 1024 x 1024, 1 x 4096 x 4160, 4 interleaved rounds,
// 1 / 2 threads).
//
// Measured (QLinear u8, unpacked, QMATMUL_ISA=avx2, 3 interleaved rounds,
// 1 / 2 threads, M = 1, 2, 4 x 4096 x 4096, 1 and 4 x 1024 x 1024, with
// the column sums of the time): 4 k-pairs a step against 8 +0-55% (+26-55%
// at 4096 x 4096), 2 read 0.67-0.91 and 16 0.42-0.83; prefetching two
// steps ahead instead of one read 0.77-1.26, mostly below 1. Asking also
// for the step's own rows 128, 256 or 512 bytes ahead into L1 read
// 0.89-0.97 (QLinear u8, 1, 2, 4, 8 x 4096 x 4096, 2 x 2048 x 2048, 3
// rounds, 1 / 2 threads).
// Compiled with AVX2 flags; nullptr getter without.
#include "gemm/raw_b_small_m.h"

#if defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace qmatmul::gemm {
namespace {

constexpr int kPairs = 4;      // k-pairs per step (8 rows of B; see the header)
constexpr int kMaxRowsInRegisters = 4;  // from 5 rows the sums go through L1, one row at a time
// The template row count of the one kernel for 17 to kMaxRowsAvx2 rows: its
// A' pairs are sized for kMaxRowsAvx2 rows and it takes its count at run
// time (m); from 5 rows a count only sets a loop's length
// (chunk_step_rows). Measured against B packed in the tasks (QLinear u8,
// QMATMUL_ISA=avx2, no oneDNN, 3 interleaved rounds, 1 / 2 threads): 17,
// 24, 32, 48, 56, 64 x 4096 x 4096 1.99 / 1.89, 2.02 / 1.65, 1.75 / 1.63,
// 1.20 / 1.07, 1.27 / 1.21, 0.98 / 1.40; 40 x 2048 x 4096 1.37 / 1.48;
// with B of 4 MB or less not (32 x 2048 x 2048, 24 x 1024 x 1024: 0.94-
// 0.98), so from kRawBLargeBytes (raw_b_min_bytes_avx2).
constexpr int kRowsAtRunTime = kMaxRowsAvx2;

// The two widths of a chunk. Each gives a k-pair of B's rows as two
// registers of int16 pairs (B'[k][j], B'[k+1][j]) in column order, the
// first half of the chunk's columns, then the second, and the arithmetic
// on the sums. A chunk of fewer than kCols valid columns (kPartial) goes
// through a zeroed copy, so that no byte past the block is read; its
// pairs past the valid columns are zero.

// 16 columns in two ymm: the rows' 16 bytes interleaved in 128 bits, each
// half then widened to 256 (vpmovsxbw ymm).
struct Ymm16 {
  static constexpr int64_t kCols = 16;
  static constexpr bool kUnrollWholeSteps = false;  // see the header
  using Reg = __m256i;
  template <bool kFlip, bool kPartial>
  static void pair_rows(const unsigned char* r0, const unsigned char* r1, int n, Reg (&out)[2]) {
    __m128i x0, x1 = _mm_setzero_si128();
    if constexpr (kPartial) {
      alignas(16) unsigned char t0[16] = {}, t1[16] = {};
      std::memcpy(t0, r0, static_cast<std::size_t>(n));
      if (r1 != nullptr) std::memcpy(t1, r1, static_cast<std::size_t>(n));
      x0 = _mm_load_si128(reinterpret_cast<const __m128i*>(t0));
      if (r1 != nullptr) x1 = _mm_load_si128(reinterpret_cast<const __m128i*>(t1));
      if constexpr (kFlip) {  // the bytes past n stay zero
        const __m128i valid = _mm_cmpgt_epi8(_mm_set1_epi8(static_cast<char>(n)),
                                             _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        x0 = _mm_xor_si128(x0, _mm_and_si128(valid, _mm_set1_epi8(static_cast<char>(0x80))));
        if (r1 != nullptr) x1 = _mm_xor_si128(x1, _mm_and_si128(valid, _mm_set1_epi8(static_cast<char>(0x80))));
      }
    } else {
      x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r0));
      if (r1 != nullptr) x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r1));
      if constexpr (kFlip) {
        x0 = _mm_xor_si128(x0, _mm_set1_epi8(static_cast<char>(0x80)));
        if (r1 != nullptr) x1 = _mm_xor_si128(x1, _mm_set1_epi8(static_cast<char>(0x80)));
      }
    }
    out[0] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(x0, x1));
    out[1] = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(x0, x1));
  }
  static Reg broadcast(int32_t v) { return _mm256_set1_epi32(v); }
  static Reg madd_add(Reg s, Reg a, Reg b) { return _mm256_add_epi32(s, _mm256_madd_epi16(a, b)); }
  static Reg load(const int32_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static void store(int32_t* p, Reg v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); }
  static Reg zero() { return _mm256_setzero_si256(); }
};

// 8 columns in two xmm (the narrow form): each row's 8 bytes widened as
// they are loaded (vpmovsxbw xmm, m64; with the flip, vpmovzxbw and minus
// 128), then the two rows' words interleaved (vpunpcklwd / vpunpckhwd).
struct Xmm8 {
  static constexpr int64_t kCols = 8;
  static constexpr bool kUnrollWholeSteps = true;
  using Reg = __m128i;
  template <bool kFlip>
  static __m128i widen(const unsigned char* r) {
    const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r));
    if constexpr (kFlip) return _mm_sub_epi16(_mm_cvtepu8_epi16(x), _mm_set1_epi16(128));  // int8(b XOR 0x80)
    return _mm_cvtepi8_epi16(x);
  }
  template <bool kFlip, bool kPartial>
  static void pair_rows(const unsigned char* r0, const unsigned char* r1, int n, Reg (&out)[2]) {
    __m128i w0, w1 = _mm_setzero_si128();
    if constexpr (kPartial) {
      alignas(16) unsigned char t0[8] = {}, t1[8] = {};
      std::memcpy(t0, r0, static_cast<std::size_t>(n));
      if (r1 != nullptr) std::memcpy(t1, r1, static_cast<std::size_t>(n));
      const __m128i valid = _mm_cmpgt_epi16(_mm_set1_epi16(static_cast<int16_t>(n)), _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7));
      w0 = _mm_and_si128(valid, widen<kFlip>(t0));
      if (r1 != nullptr) w1 = _mm_and_si128(valid, widen<kFlip>(t1));
    } else {
      w0 = widen<kFlip>(r0);
      if (r1 != nullptr) w1 = widen<kFlip>(r1);
    }
    out[0] = _mm_unpacklo_epi16(w0, w1);
    out[1] = _mm_unpackhi_epi16(w0, w1);
  }
  static Reg broadcast(int32_t v) { return _mm_set1_epi32(v); }
  static Reg madd_add(Reg s, Reg a, Reg b) { return _mm_add_epi32(s, _mm_madd_epi16(a, b)); }
  static Reg load(const int32_t* p) { return _mm_load_si128(reinterpret_cast<const __m128i*>(p)); }
  static void store(int32_t* p, Reg v) { _mm_store_si128(reinterpret_cast<__m128i*>(p), v); }
  static Reg zero() { return _mm_setzero_si128(); }
};

// One chunk of one step: pairs [0, n) of the step (rows 2p, 2p+1 of
// `rows`; row 2p+1 is zero when p == odd_pair), columns c .. c+ncols-1.
// kFull: a whole step (n == kPairs, no odd pair), its loop unrolled.
template <class V, int M, bool kFlip, bool kPartial, bool kFull>
inline void chunk_step(const int32_t (&a_pairs)[M][kPairs], const unsigned char* rows, int n, int odd_pair,
                       int64_t N, int64_t c, int ncols, int32_t* acc, int64_t ld) {
  constexpr int64_t kHalf = V::kCols / 2;
  typename V::Reg s[M][2];
#pragma GCC unroll 8
  for (int m = 0; m < M; ++m) {
    s[m][0] = V::load(acc + m * ld + c);
    s[m][1] = V::load(acc + m * ld + c + kHalf);
  }
#pragma GCC unroll 4
  for (int p = 0; p < (kFull ? kPairs : n); ++p) {
    typename V::Reg b[2];
    const unsigned char* r0 = rows + 2 * p * N + c;
    V::template pair_rows<kFlip, kPartial>(r0, !kFull && p == odd_pair ? nullptr : r0 + N, ncols, b);
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) {
      const auto am = V::broadcast(a_pairs[m][p]);
      s[m][0] = V::madd_add(s[m][0], am, b[0]);
      s[m][1] = V::madd_add(s[m][1], am, b[1]);
    }
  }
#pragma GCC unroll 8
  for (int m = 0; m < M; ++m) {
    V::store(acc + m * ld + c, s[m][0]);
    V::store(acc + m * ld + c + kHalf, s[m][1]);
  }
}

// The same for m = 5 to 64 rows (of the M that a_pairs has room for), whose
// sums do not fit in the 16 registers beside the step's B': the step's
// pairs are interleaved first (2 kPairs registers), then each row's sums
// are loaded, updated over the pairs and stored in turn.
template <class V, int M, bool kFlip, bool kPartial, bool kFull>
inline void chunk_step_rows(const int32_t (&a_pairs)[M][kPairs], int m_rows, const unsigned char* rows, int n,
                            int odd_pair, int64_t N, int64_t c, int ncols, int32_t* acc, int64_t ld) {
  constexpr int64_t kHalf = V::kCols / 2;
  typename V::Reg b[kPairs][2];
#pragma GCC unroll 4
  for (int p = 0; p < kPairs; ++p) {
    if (!kFull && p >= n) {  // past the last pair: zeros, which add nothing
      b[p][0] = b[p][1] = V::zero();
      continue;
    }
    const unsigned char* r0 = rows + 2 * p * N + c;
    V::template pair_rows<kFlip, kPartial>(r0, !kFull && p == odd_pair ? nullptr : r0 + N, ncols, b[p]);
  }
#pragma GCC unroll 1
  for (int m = 0; m < m_rows; ++m) {
    int32_t* row = acc + m * ld + c;
    auto s0 = V::load(row), s1 = V::load(row + kHalf);
#pragma GCC unroll 4
    for (int p = 0; p < kPairs; ++p) {
      const auto am = V::broadcast(a_pairs[m][p]);
      s0 = V::madd_add(s0, am, b[p][0]);
      s1 = V::madd_add(s1, am, b[p][1]);
    }
    V::store(row, s0);
    V::store(row + kHalf, s1);
  }
}

// m rows (M, or up to M for kRowsAtRunTime).
template <class V, int M, bool kFlip>
void run_steps(const uint8_t* a, int m_rows, int64_t kp, const int32_t* a_zero, const unsigned char* b, int64_t K,
               int64_t N, int64_t cols, int32_t* acc, int64_t ld) {
  const int64_t pairs = (K + 1) / 2;
  // How far behind the chunk the next step's lines are asked for (above).
  const int64_t behind = N % 4096 == 0 ? 512 : 0;
  for (int64_t p0 = 0; p0 < pairs; p0 += kPairs) {
    const int n = static_cast<int>(std::min<int64_t>(kPairs, pairs - p0));
    // The last pair of an odd K has one row; its second row reads as zero.
    const int odd_pair = K % 2 == 1 && p0 + n == pairs ? n - 1 : -1;
    // Row m's pairs (A'[k] - za', A'[k+1] - za') as int32 words of two
    // int16, k = 2 (p0 + p); the row past an odd K meets zeros of B, so its
    // word is 0. A' past K is zero in the driver's rows only up to a
    // multiple of 4, so the bytes are read one by one.
    int32_t a_pairs[M][kPairs];
    for (int m = 0; m < m_rows; ++m)
      for (int p = 0; p < n; ++p) {
        const int64_t k = 2 * (p0 + p);
        const auto lo = static_cast<uint16_t>(a[m * kp + k] - a_zero[m]);
        const auto hi = static_cast<uint16_t>(k + 1 < K ? a[m * kp + k + 1] - a_zero[m] : 0);
        a_pairs[m][p] = static_cast<int32_t>(lo | static_cast<uint32_t>(hi) << 16);
      }
    const unsigned char* rows = b + 2 * p0 * N;
    // One chunk: sums in registers up to kMaxRowsInRegisters rows, else a
    // row at a time.
    const auto chunk = [&](auto partial, auto full, int64_t c, int ncols) {
      constexpr bool kPartial = decltype(partial)::value, kFull = decltype(full)::value;
      if constexpr (M <= kMaxRowsInRegisters)
        chunk_step<V, M, kFlip, kPartial, kFull>(a_pairs, rows, n, odd_pair, N, c, ncols, acc, ld);
      else
        chunk_step_rows<V, M, kFlip, kPartial, kFull>(a_pairs, m_rows, rows, n, odd_pair, N, c, ncols, acc, ld);
    };
    // The next step's rows, a 64-byte line at a time: line l of each.
    const auto prefetch_next_step = [&](int64_t l) {
      for (int t = 2 * kPairs; t < 4 * kPairs && 2 * p0 + t < K; ++t)
        _mm_prefetch(reinterpret_cast<const char*>(rows + t * N + l), _MM_HINT_T1);
    };
    const bool next_step = p0 + kPairs < pairs;
    // Every chunk of the block, the last one partial if cols is not a
    // multiple of kCols.
    const auto sweep = [&](auto full) {
      int64_t c = 0;
      for (; c + V::kCols <= cols; c += V::kCols) {
        if (c % 64 == 0 && c >= behind && next_step) prefetch_next_step(c - behind);
        chunk(std::false_type{}, full, c, static_cast<int>(V::kCols));
      }
      if (behind > 0 && next_step)  // the lines the loop left for after it
        for (int64_t l = std::max<int64_t>(0, (c + 63) / 64 * 64 - behind); l < cols; l += 64) prefetch_next_step(l);
      if (c < cols) chunk(std::true_type{}, full, c, static_cast<int>(cols - c));
    };
    if constexpr (V::kUnrollWholeSteps) {
      if (n == kPairs && odd_pair < 0) {
        sweep(std::true_type{});
        continue;
      }
    }
    sweep(std::false_type{});
  }
}

template <class V, int M>
int64_t raw_b_small_m(const uint8_t* a, int m, int64_t kp, const int32_t* a_zero, const unsigned char* b, int64_t K,
                      int64_t N, int64_t cols, unsigned char flip, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const int rows = M == kRowsAtRunTime ? m : M;
  const auto padded = static_cast<std::size_t>((cols + V::kCols - 1) / V::kCols * V::kCols);
  for (int i = 0; i < rows; ++i) std::memset(acc + i * ld, 0, sizeof(int32_t) * padded);
  std::memset(col_sums, 0, sizeof(int32_t) * padded);  // the folded form: no column sums
  if (flip != 0)
    run_steps<V, M, true>(a, rows, kp, a_zero, b, K, N, cols, acc, ld);
  else
    run_steps<V, M, false>(a, rows, kp, a_zero, b, K, N, cols, acc, ld);
  return 0;  // column 0 at index 0: the loads need no alignment
}

template <class V, std::size_t... I>
constexpr std::array<RawBSmallMFn, sizeof...(I)> kernels_by_rows(std::index_sequence<I...>) {
  return {raw_b_small_m<V, static_cast<int>(I) + 1>...};
}

}  // namespace

RawBSmallMFn raw_b_small_m_avx2_fn(int m) {
  static constexpr auto kKernels = kernels_by_rows<Ymm16>(std::make_index_sequence<kMaxRowsOwnKernel>{});
  if (m < 1 || m > kMaxRowsAvx2) return nullptr;
  if (m > kMaxRowsOwnKernel) return raw_b_small_m<Ymm16, kRowsAtRunTime>;
  return kKernels[static_cast<std::size_t>(m - 1)];
}

RawBSmallMFn raw_b_small_m_avx2_narrow_fn(int m) {
  static constexpr auto kKernels = kernels_by_rows<Xmm8>(std::make_index_sequence<kMaxRowsNarrowAvx2>{});
  if (m < 1 || m > kMaxRowsNarrowAvx2) return nullptr;
  return kKernels[static_cast<std::size_t>(m - 1)];
}

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
RawBSmallMFn raw_b_small_m_avx2_fn(int) { return nullptr; }
RawBSmallMFn raw_b_small_m_avx2_narrow_fn(int) { return nullptr; }
}  // namespace qmatmul::gemm

#endif
