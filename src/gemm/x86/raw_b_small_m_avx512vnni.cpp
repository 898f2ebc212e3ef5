// The AVX-512 VNNI kernels for a few rows of A (M <= 16) against an unpacked,
// row-major B: it reads B's rows straight from the caller's matrix and never
// writes a packed copy.
//
// Packing B costs more than the whole product when M is this small: every
// byte of B is read, shuffled, stored and read again for a handful of
// multiply-adds. Here each step takes G k-groups (4G consecutive rows of B)
// and walks the column block 64 columns at a time: the 4 row segments of a
// k-group are interleaved in registers into the KR = 4 layout that vpdpbusd
// wants by byte and word unpacks, and each row of A' multiplies them into
// running sums kept in the caller's small accumulator block (L1). B is read
// as 4G row streams of a block's width, which the hardware prefetchers
// barely follow at these lengths, so the kernels also prefetch B ahead of
// their loads (k_step says when and where); the sums of a 64-column chunk
// are loaded and stored once per step.
//
// The unpacks work within 128-bit lanes, so the four registers of a chunk
// hold its columns in a fixed permuted order (register q, lane L: columns
// 16L + 4q .. 16L + 4q + 3). Every sum is kept in that order through the
// whole K loop, and each 64-column chunk of sums is put back in column
// order once at the end (a 4 x 4 transpose of 128-bit lanes), instead of a
// cross-lane permute of every row of B: measured at 4096 x 4096, 1 thread,
// that permute cost a third of the time at M = 4 to 6.
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

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "gemm/x86/transpose_lanes_avx512.h"

namespace qmatmul::gemm {
namespace {

constexpr int64_t kChunk = 64;  // columns per register group (4 zmm of int32)

// The template row count of the one kernel for 17 to kMaxRows rows, which
// takes its count at run time (m): from 3 rows the sums go through L1 a row
// at a time (chunk_step_rows), so a row count only sets a loop's length,
// and it runs as the 16-row large-B form does (4 k-groups a step), except
// that it prefetches the next step's rows (k_step). A kernel compiled for
// each count would add about 30 KB of code per count for nothing.
constexpr int kRowsAtRunTime = kMaxRowsOwnKernel + 1;

inline __m512i broadcast_a(const uint8_t* p) {
  int32_t w;
  std::memcpy(&w, p, sizeof w);
  return _mm512_set1_epi32(w);
}

// Rows 4g .. 4g+3 of a step, columns c .. c+63 (only those under `mask`
// read when kMasked), interleaved into the KR = 4 layout in the chunk order
// of the header: lane L of o[q] holds columns 16L + 4q .. 16L + 4q + 3.
// kTail: rows at or past valid_rows read as zeros (the last, partial
// k-group).
template <bool kFlip, bool kTail, bool kMasked>
inline void interleave_group(const unsigned char* rows, int g, int64_t valid_rows, int64_t N, int64_t c,
                             __mmask64 mask, __m512i (&o)[4]) {
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(0x80));
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
    r[t] = v;
  }
  const __m512i r01_lo = _mm512_unpacklo_epi8(r[0], r[1]), r01_hi = _mm512_unpackhi_epi8(r[0], r[1]);
  const __m512i r23_lo = _mm512_unpacklo_epi8(r[2], r[3]), r23_hi = _mm512_unpackhi_epi8(r[2], r[3]);
  o[0] = _mm512_unpacklo_epi16(r01_lo, r23_lo);
  o[1] = _mm512_unpackhi_epi16(r01_lo, r23_lo);
  o[2] = _mm512_unpacklo_epi16(r01_hi, r23_hi);
  o[3] = _mm512_unpackhi_epi16(r01_hi, r23_hi);
}

// One 64-column chunk of one step (k-groups [g0, g0 + G)) for M <= 2: the
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

// The same for more rows (m = 3 to kMaxRows), whose sums do not fit in registers
// beside the step's B': the step's G groups are interleaved first (4G
// registers), then the column sums and each row's sums are loaded, updated
// over the groups and stored in turn, one row at a time (a loop). `a` points
// at the step's first A' word of row 0 (rows kp apart). With G = 4 each
// row's 4 sums are loaded and stored once per 16 vpdpbusd. What ran before
// loaded and stored them once per 2 or 3; against it (1 / 2 threads,
// unpacked, interleaved rounds):
// - 3 and 4 rows (every sum in registers through a step of G = 2): the
//   kernel alone (bench_int8_kernels RawBStream, 3 rounds) +16-36% with B
//   in L2, +28-32% from L3 (16 MB); qmatmul bench with oneDNN's sides in
//   the loop, 6 rounds, M = 3 x 4096 x 4096 +11-13% / +2-4%, M = 4
//   +16-25% / +16-34%, 4 x 1024 x 4096 +19-25%. M = 2 lost 2-10% and
//   keeps its registers.
// - 5 to 16 rows, B of 4 MB (blocks of 3 rows, of 2 from 10 rows, G = 3):
//   5, 8, 12, 16 x 1024 x 4096, 8 x 4096 x 1024 and 6 x 2048 x 2048, no
//   oneDNN, 6 rounds: MatMulInteger +7-26% / +2-20%, QLinear +6-25% /
//   0-18%; the kernel alone with B in L2 (4096 x 256): M = 5-8 +15-30%,
//   10-16 +8%.
// - B of 16 MB, the large-B form, QLinear with oneDNN's sides in the loop
//   (4096 x 4096): 10 to 16 rows (2-row blocks) M = 16 +3-13% / +6-11%
//   (10 rounds), M = 10, 12, 14 +2-7% / +2-7% (8 rounds); 6 to 9 rows
//   (3-row blocks, then prefetching three steps ahead) +11-21% / +3-17%
//   (8 rounds, s8), prefetching two steps ahead (k_step's scheme then);
//   5 rows -1-3% / +1-4% (8 rounds), taken too so that every row count
//   from 3 runs this one loop. A first 4-round run with three steps ahead
//   had lost 3-28% at 5, 7 and 8 rows.
// G = 5 ran as fast as 4 (kernel alone); G = 6 spills (0.65x).
template <int G, bool kFlip, bool kTail, bool kMasked>
inline void chunk_step_rows(const uint8_t* a, int m, int64_t kp, const unsigned char* rows, int64_t valid_rows,
                            int64_t N, int64_t c, __mmask64 mask, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i o[G][4];
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) interleave_group<kFlip, kTail, kMasked>(rows, g, valid_rows, N, c, mask, o[g]);
  __m512i s[4];
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) s[q] = _mm512_load_si512(col_sums + c + 16 * q);
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) s[q] = _mm512_dpbusd_epi32(s[q], ones, o[g][q]);
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) _mm512_store_si512(col_sums + c + 16 * q, s[q]);
#pragma GCC unroll 1
  for (int i = 0; i < m; ++i) {
    int32_t* row = acc + i * ld + c;
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) s[q] = _mm512_load_si512(row + 16 * q);
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) {
      const __m512i ai = broadcast_a(a + i * kp + 4 * g);
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) s[q] = _mm512_dpbusd_epi32(s[q], ai, o[g][q]);
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) _mm512_store_si512(row + 16 * q, s[q]);
  }
}

// Rows whose large-B form is a kernel of its own: the forms differ only in
// prefetching B's rows ahead (k_step), which rows 2 to 4 always do.
template <int M>
constexpr bool kOwnLargeBForm = M == 1 || M > 4;

// How far along its rows a chunk of up to kMaxRowsOwnKernel rows asks for
// B ahead of its loads (k_step): 6 chunks.
constexpr int64_t kPrefetchAheadBytes = 6 * kChunk;

// One step, k-groups [g0, g0 + G), over columns [0, cols) of `b`: chunks
// with plain loads, masked loads for the first chunk when `head` (a mask of
// its valid bytes) says some are not valid, and for the last partial one.
template <int M, int G, bool kLargeB, bool kFlip, bool kTail>
void k_step(const uint8_t* a, int m, int64_t kp, int64_t g0, const unsigned char* b, int64_t K, int64_t N,
            int64_t cols, __mmask64 head, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const unsigned char* rows = b + 4 * g0 * N;
  const int64_t valid_rows = kTail ? K - 4 * g0 : 4 * G;
  const auto tail_mask = [](int64_t n) { return n >= kChunk ? ~__mmask64(0) : (__mmask64(1) << n) - 1; };
  // Each chunk first asks for a later part of B's rows (into L2; into L1
  // at 1 row, see kInRowHint), so that it is on its way while this step
  // works: B is read as short row segments (256 to 4096 bytes, each on its
  // own 4 KB page at N = 4096), which the hardware prefetchers barely
  // follow.
  // Always from 2 to 4 rows: qmatmul bench, unpacked, 4096 x 4096, 6
  // interleaved rounds, 1 / 2 threads: M = 2 +8% / -1% (no prefetch
  // before), M = 3 +24% / +19% and M = 4 +35% / +30% (before: prefetcht0,
  // into L1). At 1 row and from 5 rows only in the large-B form (kLargeB),
  // since the gain depends on the shape and on where B is: from 5 rows, the
  // kernel alone, B cold (one of five 16 MB copies per call), 1 thread:
  // +24% at M = 5, +47% at 8, +31% at 16; B of 4 MB, which stays in L3,
  // lost 3-8% (8 and 16 x 1024 x 4096).
  constexpr bool kPrefetch = !kOwnLargeBForm<M> || kLargeB;
  // What is asked for. Up to kMaxRowsOwnKernel rows (kPrefetchInRow): the
  // same 4G rows kPrefetchAheadBytes further along (the next step's rows
  // once that passes the block's end), so that every row is read as one
  // stream running a little ahead of its loads. Against asking for the
  // next step's rows at the chunk's own columns (one step ahead, two at 6
  // to 9 rows, spread over the block's chunks at strides of 2048 as below),
  // QLinear u8, unpacked, no oneDNN, medians of 6-8 interleaved rounds, 1 /
  // 2 threads: 4096 x 4096 M = 1 1.17 / 1.34, 2 1.09 / 1.14, 4 1.14 /
  // 1.27, 6 1.25 / 1.08, 8 1.36 / 1.08, 12 1.28 / 1.06, 16 1.14 / 1.02;
  // 8 x 11008 x 4096 0.97 / 1.18; 1 x 8192 x 2048 1.22 / 1.27, 3 x 2048
  // x 8192 1.04 / 1.22, 16 x 2048 x 8192 1.06 / 1.07; at N = 4160 (1, 4,
  // 8 rows) 0.99-1.11; B that stays in cache (2, 3, 4 x 1024 x 4096 or
  // 1024) 1.04-1.14. 256 bytes ahead did about as well, 640 and 1024 worse
  // from 6 rows.
  // From 17 rows (the kernel that takes its count at run time, 256-column
  // blocks) the next step's rows instead: there the rows ahead lost (24 x
  // 4096 x 4096 0.60-0.75 / 0.95-0.98, 48 rows 0.94 / 0.93-0.99). Where
  // B's rows are a multiple of 2048 bytes apart, the 16 rows of a step at
  // one column fall in one or two 8-way L1 sets, so row t of the next step
  // is asked for at chunk c + t instead (wrapping in the block), 16 sets a
  // chunk; over the step, every line is still asked for once (4 x 4096 x
  // 4096 and 8 x 8192 x 2048 gained 1.06-1.39 from that when it was the
  // scheme of every row count).
  constexpr bool kPrefetchInRow = M <= kMaxRowsOwnKernel;
  // Into L2, but into L1 at 1 row, whose sums leave L1 to B (16 rows at a
  // time, 6 lines ahead: 6 KB): against L2, QLinear u8 and MatMulInteger,
  // unpacked, no oneDNN, medians of 6-8 interleaved rounds, 1 / 2 threads:
  // 1 x 4096 x 4096 1.11 / 1.03, 1 x 8192 x 2048 1.18 / 1.09, 1 x 4096 x
  // 11008 1.19 / 1.28, 1 x 11008 x 4096 0.93-0.97 / 1.08-1.11. At 2 rows
  // it read 0.84-1.09 / 1.02-1.11, from 4 rows 0.88-1.14.
  constexpr _mm_hint kInRowHint = M == 1 ? _MM_HINT_T0 : _MM_HINT_T1;
  const int64_t block_chunks = (cols + kChunk - 1) / kChunk;
  const bool spread_prefetch = G == 4 && N % 2048 == 0 && block_chunks >= 4 * G;
  // Chunk c asks for column c + ahead_col of the rows ahead_steps steps on,
  // or one step further once that passes the block's end.
  const int64_t ahead_steps = kPrefetchAheadBytes / cols, ahead_col = kPrefetchAheadBytes % cols;
  const auto chunk = [&](auto masked, int64_t c, __mmask64 mask) {
    constexpr bool kMasked = decltype(masked)::value;
    if constexpr (kPrefetch && kPrefetchInRow) {
      int64_t col = c + ahead_col, steps = ahead_steps;
      if (col >= cols) {
        col -= cols;
        ++steps;
      }
      const unsigned char* ahead = rows + steps * 4 * G * N + col;
#pragma GCC unroll 16
      for (int t = 0; t < 4 * G; ++t) _mm_prefetch(reinterpret_cast<const char*>(ahead + t * N), kInRowHint);
    } else if constexpr (kPrefetch) {
      if (spread_prefetch) {
        const int64_t first = c / kChunk;
#pragma GCC unroll 16
        for (int t = 0; t < 4 * G; ++t) {
          int64_t q = first + t;  // < 2 * block_chunks
          if (q >= block_chunks) q -= block_chunks;
          _mm_prefetch(reinterpret_cast<const char*>(rows + (4 * G + t) * N + q * kChunk), _MM_HINT_T1);
        }
      } else {
#pragma GCC unroll 16
        for (int t = 4 * G; t < 8 * G; ++t)
          _mm_prefetch(reinterpret_cast<const char*>(rows + t * N + c), _MM_HINT_T1);
      }
    }
    if constexpr (M <= 2) {
      __m512i av[G][M];
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
        for (int m = 0; m < M; ++m) av[g][m] = broadcast_a(a + m * kp + 4 * (g0 + g));
      chunk_step<M, G, kFlip, kTail, kMasked>(av, rows, valid_rows, N, c, mask, acc, ld, col_sums);
    } else {
      chunk_step_rows<G, kFlip, kTail, kMasked>(a + 4 * g0, m, kp, rows, valid_rows, N, c, mask, acc, ld, col_sums);
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

template <int M, int G, bool kLargeB, bool kFlip>
void run_steps(const uint8_t* a, int m, int64_t kp, const unsigned char* b, int64_t K, int64_t N, int64_t cols,
               __mmask64 head, int32_t* acc, int64_t ld, int32_t* col_sums) {
  const int64_t full_groups = K / 4;
  int64_t g = 0;
  for (; g + G <= full_groups; g += G)
    k_step<M, G, kLargeB, kFlip, false>(a, m, kp, g, b, K, N, cols, head, acc, ld, col_sums);
  for (; g < full_groups; ++g) k_step<M, 1, kLargeB, kFlip, false>(a, m, kp, g, b, K, N, cols, head, acc, ld, col_sums);
  if (K % 4 != 0) k_step<M, 1, kLargeB, kFlip, true>(a, m, kp, g, b, K, N, cols, head, acc, ld, col_sums);
}

// The block both kernels walk. When every row starts at the same offset
// within a 64-byte line (N a multiple of 64), the block is shifted back to
// the line start so that the row loads are aligned (a load split across two
// lines streams at about half the rate here): the first `shift` bytes of the
// first chunk are masked off (`head`; never read), and column j's sums land
// at index j + shift. The m rows of sums and the column sums start at zero.
struct LineAlignedBlock {
  const unsigned char* start;
  int64_t shift, width;
  __mmask64 head;
};

inline LineAlignedBlock start_block(const unsigned char* b, int64_t N, int64_t cols, int m, int32_t* acc, int64_t ld,
                                    int32_t* col_sums) {
  const int64_t shift = N % kChunk == 0 ? static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(b) % kChunk) : 0;
  const LineAlignedBlock block{b - shift, shift, cols + shift, ~__mmask64(0) << shift};
  const auto padded = static_cast<std::size_t>((block.width + kChunk - 1) / kChunk * kChunk);
  for (int i = 0; i < m; ++i) std::memset(acc + i * ld, 0, sizeof(int32_t) * padded);
  std::memset(col_sums, 0, sizeof(int32_t) * padded);
  return block;
}

// Puts the sums of `rows` rows (ld apart) back in column order, for every
// 64-column chunk of the block's `width` columns: in chunk order, register q
// lane L holds columns 16L + 4q ..; the transpose of the 4 x 4 lanes gives
// register q the columns 16q .. 16q + 15.
void restore_column_order(int32_t* sums, int64_t ld, int rows, int64_t width) {
  for (int i = 0; i < rows; ++i)
    for (int64_t c = 0; c < width; c += kChunk) {
      int32_t* p = sums + i * ld + c;
      const __m512i z[4] = {_mm512_load_si512(p), _mm512_load_si512(p + 16), _mm512_load_si512(p + 32),
                            _mm512_load_si512(p + 48)};
      __m512i out[4];
      transpose_128bit_lanes(z, out);
      for (int q = 0; q < 4; ++q) _mm512_store_si512(p + 16 * q, out[q]);
    }
}

template <int M, int G, bool kLargeB>
int64_t raw_b_small_m(const uint8_t* a, int m, int64_t kp, const int32_t* /*a_zero: the plain form*/,
                      const unsigned char* b, int64_t K, int64_t N, int64_t cols, unsigned char flip, int32_t* acc,
                      int64_t ld, int32_t* col_sums) {
  const int rows = M == kRowsAtRunTime ? m : M;
  const LineAlignedBlock blk = start_block(b, N, cols, rows, acc, ld, col_sums);
  if (flip != 0)
    run_steps<M, G, kLargeB, true>(a, rows, kp, blk.start, K, N, blk.width, blk.head, acc, ld, col_sums);
  else
    run_steps<M, G, kLargeB, false>(a, rows, kp, blk.start, K, N, blk.width, blk.head, acc, ld, col_sums);
  restore_column_order(acc, ld, rows, blk.width);
  restore_column_order(col_sums, 0, 1, blk.width);
  return blk.shift;
}

// k-groups per step: 2 at M = 2, whose sums stay in registers beside them;
// else 4, for enough independent vpdpbusd chains at M = 1 (only 5 sums per
// k-group, in registers) and from M = 3, whose sums go through L1 (see
// chunk_step_rows).
template <int M>
constexpr int kStepGroups = M == 2 ? 2 : 4;

// From 2 to 4 rows both forms are the same kernel.
template <bool kLargeB, std::size_t... I>
constexpr std::array<RawBSmallMFn, sizeof...(I)> kernels_by_rows(std::index_sequence<I...>) {
  return {raw_b_small_m<I + 1, kStepGroups<I + 1>, (kOwnLargeBForm<I + 1> && kLargeB)>...};
}

}  // namespace

RawBSmallMFn raw_b_small_m_avx512vnni_fn(int m, bool large_b) {
  static constexpr auto kKernels = kernels_by_rows<false>(std::make_index_sequence<kMaxRowsOwnKernel>{});
  static constexpr auto kLargeBKernels = kernels_by_rows<true>(std::make_index_sequence<kMaxRowsOwnKernel>{});
  if (m < 1 || m > kMaxRows) return nullptr;
  if (m > kMaxRowsOwnKernel) return large_b ? raw_b_small_m<kRowsAtRunTime, 4, true> : nullptr;
  return (large_b ? kLargeBKernels : kKernels)[static_cast<std::size_t>(m - 1)];
}

}  // namespace qmatmul::gemm

#else

namespace qmatmul::gemm {
RawBSmallMFn raw_b_small_m_avx512vnni_fn(int, bool) { return nullptr; }
}  // namespace qmatmul::gemm

#endif
