// The AVX-512 VNNI two-panel tiles for few rows (M <= 6): one MR x 64 tile
// from two adjacent packed B panels (NR = 32 each, `panel_stride` bytes
// apart) instead of one MR x 32 tile per panel. With so few rows the work is
// bound by streaming B from L3, and reading two panels at once gives the
// hardware prefetchers two sequential streams to run ahead on; it also halves
// the broadcasts of A per vpdpbusd. Measured on 16 MB of packed B held in L3
// (1 thread): 5 and 6 rows 1.4x the one-panel tile, 1 row 1.2x, 2 and 3 rows
// 1.05-1.15x, 4 rows 1.02-1.06x. From 3 rows the loops also prefetch both
// streams 4 KB ahead (QP_LOAD_B).
//
// The k loops are inline assembly with fixed registers (accumulators in
// zmm0..zmm23, B in zmm24..zmm27, the broadcast of A in zmm28): the same
// loops written with intrinsics compile to spills at 20-24 accumulators.
// Rows 1 and 2 split k over 4 and 2 accumulator sets (k-group g feeds set
// g mod U) to keep at least 16 independent vpdpbusd chains.
#include "kernels/x86/avx512vnni/int8_tile_pair_avx512vnni.h"

#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) && defined(__AVX512VNNI__)

#include <immintrin.h>

namespace qmatmul::kernels::avx512vnni {
namespace {

constexpr int kPanelCols = 32;             // NR of each panel
constexpr int kCols = 2 * kPanelCols;      // columns of a pair tile
constexpr int64_t kBGroup = kPanelCols * 4;  // bytes of one panel per k-group

// Assembly building blocks (AT&T operand order). %[pa]: packed A', %[pb]:
// the first panel, %[st]: the stride to the second, %[n]: iterations,
// %[out]: the stack tile (MR rows of 64 int32).
#define QP_STR(x) #x
// Zeroes four accumulators.
#define QP_ZERO4(r0, r1, r2, r3)                                                                      \
  "vpxord %%zmm" QP_STR(r0) ", %%zmm" QP_STR(r0) ", %%zmm" QP_STR(r0) "\n\t"                         \
  "vpxord %%zmm" QP_STR(r1) ", %%zmm" QP_STR(r1) ", %%zmm" QP_STR(r1) "\n\t"                         \
  "vpxord %%zmm" QP_STR(r2) ", %%zmm" QP_STR(r2) ", %%zmm" QP_STR(r2) "\n\t"                         \
  "vpxord %%zmm" QP_STR(r3) ", %%zmm" QP_STR(r3) ", %%zmm" QP_STR(r3) "\n\t"
// Loads k-group `off` / 128 of this step from both panels into zmm24..27;
// QP_LOAD_B first asks for the lines QP_PREFETCH_AHEAD bytes further on in
// both panels (the second panel's run goes on into the next pair's first
// panel, which comes next; past the end of B a prefetch is dropped, never
// faults). Used from 3 rows. Measured on packed 3-6 x 4096 x 4096 with
// oneDNN in the same loop, 6 interleaved rounds, 1 thread: MatMulInteger
// in two runs M = 3 +2% and +37%, 4 +1% and +24%, 5 +10% and +11%, 6 +19%
// and +8%, QLinear u8 +11-25%; 2 threads 0.91-1.07 (M = 5, 6: 0.96-1.05).
// 2 and 8 KB ahead did about the same, 0.5 and 1 KB less, prefetcht1 (to
// L2) less at 2 threads. At 1 and 2 rows (16 vpdpbusd per 16 or 8 loads of
// B) the requests crowd the load ports: 0.73-0.91 at 1 thread for every
// distance tried, so those loops have none.
#define QP_PREFETCH_AHEAD "4096"
#define QP_PREFETCH_B(off)                                     \
  "prefetcht0 " #off "+" QP_PREFETCH_AHEAD "(%[pb])\n\t"        \
  "prefetcht0 " #off "+64+" QP_PREFETCH_AHEAD "(%[pb])\n\t"     \
  "prefetcht0 " #off "+" QP_PREFETCH_AHEAD "(%[pb],%[st])\n\t"  \
  "prefetcht0 " #off "+64+" QP_PREFETCH_AHEAD "(%[pb],%[st])\n\t"
#define QP_LOAD_B_PLAIN(off)                            \
  "vmovdqu64 " #off "(%[pb]), %%zmm24\n\t"              \
  "vmovdqu64 " #off "+64(%[pb]), %%zmm25\n\t"           \
  "vmovdqu64 " #off "(%[pb],%[st]), %%zmm26\n\t"        \
  "vmovdqu64 " #off "+64(%[pb],%[st]), %%zmm27\n\t"
#define QP_LOAD_B(off) QP_PREFETCH_B(off) QP_LOAD_B_PLAIN(off)
// One row: broadcasts its four A' bytes at `aoff` and adds the products with
// the four B vectors into accumulators r0..r3 (columns 0-15, 16-31, 32-47,
// 48-63).
#define QP_ROW(aoff, r0, r1, r2, r3)                                  \
  "vpbroadcastd " #aoff "(%[pa]), %%zmm28\n\t"                        \
  "vpdpbusd %%zmm24, %%zmm28, %%zmm" QP_STR(r0) "\n\t"                \
  "vpdpbusd %%zmm25, %%zmm28, %%zmm" QP_STR(r1) "\n\t"                \
  "vpdpbusd %%zmm26, %%zmm28, %%zmm" QP_STR(r2) "\n\t"                \
  "vpdpbusd %%zmm27, %%zmm28, %%zmm" QP_STR(r3) "\n\t"
// Adds accumulators s0..s3 into d0..d3 (folding a k split).
#define QP_ADD4(s0, s1, s2, s3, d0, d1, d2, d3)                                                    \
  "vpaddd %%zmm" QP_STR(s0) ", %%zmm" QP_STR(d0) ", %%zmm" QP_STR(d0) "\n\t"                      \
  "vpaddd %%zmm" QP_STR(s1) ", %%zmm" QP_STR(d1) ", %%zmm" QP_STR(d1) "\n\t"                      \
  "vpaddd %%zmm" QP_STR(s2) ", %%zmm" QP_STR(d2) ", %%zmm" QP_STR(d2) "\n\t"                      \
  "vpaddd %%zmm" QP_STR(s3) ", %%zmm" QP_STR(d3) ", %%zmm" QP_STR(d3) "\n\t"
// Stores row accumulators r0..r3 to row `off` / 256 of the stack tile.
#define QP_STORE_ROW(off, r0, r1, r2, r3)                         \
  "vmovdqu64 %%zmm" QP_STR(r0) ", " #off "(%[out])\n\t"           \
  "vmovdqu64 %%zmm" QP_STR(r1) ", " #off "+64(%[out])\n\t"        \
  "vmovdqu64 %%zmm" QP_STR(r2) ", " #off "+128(%[out])\n\t"       \
  "vmovdqu64 %%zmm" QP_STR(r3) ", " #off "+192(%[out])\n\t"
#define QP_LOOP_BEGIN "test %[n], %[n]\n\tjle 2f\n\t.p2align 4\n1:\n\t"
#define QP_LOOP_END(a_step, b_step) \
  "add $" #a_step ", %[pa]\n\tadd $" #b_step ", %[pb]\n\tdec %[n]\n\tjnz 1b\n2:\n\t"
#define QP_OPERANDS                                           \
  : [pa] "+r"(a), [pb] "+r"(b), [n] "+r"(n)                   \
  : [st] "r"(panel_stride), [out] "r"(sums)                   \
  : "cc", "memory", "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", \
    "zmm10", "zmm11", "zmm12", "zmm13", "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19",     \
    "zmm20", "zmm21", "zmm22", "zmm23", "zmm24", "zmm25", "zmm26", "zmm27", "zmm28"

// Finishes a tile the assembly loop left in `sums` (MR rows of 64): adds the
// `tail` k-groups at a / b (and b + panel_stride) it did not take, col_init
// when given, and stores the MR x 64 result to c.
template <int MR>
void finish(const int32_t* sums, int64_t tail, const uint8_t* a, const int8_t* b, int64_t panel_stride,
            const int32_t* col_init, int32_t* c, int64_t ldc) {
  __m512i acc[MR][4];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    for (int q = 0; q < 4; ++q) acc[i][q] = _mm512_loadu_si512(sums + i * kCols + 16 * q);
  for (int64_t g = 0; g < tail; ++g) {
    const __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);
    const __m512i b2 = _mm512_loadu_si512(b + panel_stride), b3 = _mm512_loadu_si512(b + panel_stride + 64);
    for (int i = 0; i < MR; ++i) {
      int32_t word;
      std::memcpy(&word, a + 4 * i, sizeof word);
      const __m512i ai = _mm512_set1_epi32(word);
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], ai, b0);
      acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], ai, b1);
      acc[i][2] = _mm512_dpbusd_epi32(acc[i][2], ai, b2);
      acc[i][3] = _mm512_dpbusd_epi32(acc[i][3], ai, b3);
    }
    a += 4 * MR;
    b += kBGroup;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    for (int q = 0; q < 4; ++q) {
      __m512i v = acc[i][q];
      if (col_init != nullptr) v = _mm512_add_epi32(v, _mm512_loadu_si512(col_init + 16 * q));
      _mm512_storeu_si512(c + i * ldc + 16 * q, v);
    }
}

}  // namespace

// MR x 64 over two panels. The k loop runs in assembly and leaves its sums
// in a stack tile; finish adds the k-groups a k split leaves, col_init, and
// stores. Rows 1 and 2 split k over 4 and 2 accumulator sets (16 chains: a
// step of 4 or 2 k-groups is 16 bytes of A' and 512 or 256 of each panel);
// rows 3 to 6 take one k-group a step (12 to 24 chains).
template <int MR>
void tile_pair(int64_t kgroups, const void* packed_a, const void* packed_b, int64_t panel_stride,
               const int32_t* col_init, int32_t* c, int64_t ldc) {
  constexpr int kSplit = MR == 1 ? 4 : MR == 2 ? 2 : 1;
  const auto* a = static_cast<const uint8_t*>(packed_a);
  const auto* b = static_cast<const int8_t*>(packed_b);
  alignas(64) int32_t sums[MR * kCols];
  int64_t n = kgroups / kSplit;
  if constexpr (MR == 1) {
    asm volatile(QP_ZERO4(0, 1, 2, 3) QP_ZERO4(4, 5, 6, 7) QP_ZERO4(8, 9, 10, 11) QP_ZERO4(12, 13, 14, 15)
                 QP_LOOP_BEGIN
                 QP_LOAD_B_PLAIN(0) QP_ROW(0, 0, 1, 2, 3)
                 QP_LOAD_B_PLAIN(128) QP_ROW(4, 4, 5, 6, 7)
                 QP_LOAD_B_PLAIN(256) QP_ROW(8, 8, 9, 10, 11)
                 QP_LOAD_B_PLAIN(384) QP_ROW(12, 12, 13, 14, 15)
                 QP_LOOP_END(16, 512)
                 QP_ADD4(4, 5, 6, 7, 0, 1, 2, 3) QP_ADD4(12, 13, 14, 15, 8, 9, 10, 11)
                 QP_ADD4(8, 9, 10, 11, 0, 1, 2, 3)
                 QP_STORE_ROW(0, 0, 1, 2, 3)
                 QP_OPERANDS);
  } else if constexpr (MR == 2) {
    asm volatile(QP_ZERO4(0, 1, 2, 3) QP_ZERO4(4, 5, 6, 7) QP_ZERO4(8, 9, 10, 11) QP_ZERO4(12, 13, 14, 15)
                 QP_LOOP_BEGIN
                 QP_LOAD_B_PLAIN(0) QP_ROW(0, 0, 1, 2, 3) QP_ROW(4, 4, 5, 6, 7)
                 QP_LOAD_B_PLAIN(128) QP_ROW(8, 8, 9, 10, 11) QP_ROW(12, 12, 13, 14, 15)
                 QP_LOOP_END(16, 256)
                 QP_ADD4(8, 9, 10, 11, 0, 1, 2, 3) QP_ADD4(12, 13, 14, 15, 4, 5, 6, 7)
                 QP_STORE_ROW(0, 0, 1, 2, 3) QP_STORE_ROW(256, 4, 5, 6, 7)
                 QP_OPERANDS);
  } else if constexpr (MR == 3) {
    asm volatile(QP_ZERO4(0, 1, 2, 3) QP_ZERO4(4, 5, 6, 7) QP_ZERO4(8, 9, 10, 11)
                 QP_LOOP_BEGIN
                 QP_LOAD_B(0) QP_ROW(0, 0, 1, 2, 3) QP_ROW(4, 4, 5, 6, 7) QP_ROW(8, 8, 9, 10, 11)
                 QP_LOOP_END(12, 128)
                 QP_STORE_ROW(0, 0, 1, 2, 3) QP_STORE_ROW(256, 4, 5, 6, 7) QP_STORE_ROW(512, 8, 9, 10, 11)
                 QP_OPERANDS);
  } else if constexpr (MR == 4) {
    asm volatile(QP_ZERO4(0, 1, 2, 3) QP_ZERO4(4, 5, 6, 7) QP_ZERO4(8, 9, 10, 11) QP_ZERO4(12, 13, 14, 15)
                 QP_LOOP_BEGIN
                 QP_LOAD_B(0) QP_ROW(0, 0, 1, 2, 3) QP_ROW(4, 4, 5, 6, 7) QP_ROW(8, 8, 9, 10, 11)
                 QP_ROW(12, 12, 13, 14, 15)
                 QP_LOOP_END(16, 128)
                 QP_STORE_ROW(0, 0, 1, 2, 3) QP_STORE_ROW(256, 4, 5, 6, 7) QP_STORE_ROW(512, 8, 9, 10, 11)
                 QP_STORE_ROW(768, 12, 13, 14, 15)
                 QP_OPERANDS);
  } else if constexpr (MR == 5) {
    asm volatile(QP_ZERO4(0, 1, 2, 3) QP_ZERO4(4, 5, 6, 7) QP_ZERO4(8, 9, 10, 11) QP_ZERO4(12, 13, 14, 15)
                 QP_ZERO4(16, 17, 18, 19)
                 QP_LOOP_BEGIN
                 QP_LOAD_B(0) QP_ROW(0, 0, 1, 2, 3) QP_ROW(4, 4, 5, 6, 7) QP_ROW(8, 8, 9, 10, 11)
                 QP_ROW(12, 12, 13, 14, 15) QP_ROW(16, 16, 17, 18, 19)
                 QP_LOOP_END(20, 128)
                 QP_STORE_ROW(0, 0, 1, 2, 3) QP_STORE_ROW(256, 4, 5, 6, 7) QP_STORE_ROW(512, 8, 9, 10, 11)
                 QP_STORE_ROW(768, 12, 13, 14, 15) QP_STORE_ROW(1024, 16, 17, 18, 19)
                 QP_OPERANDS);
  } else if constexpr (MR == 6) {
    asm volatile(QP_ZERO4(0, 1, 2, 3) QP_ZERO4(4, 5, 6, 7) QP_ZERO4(8, 9, 10, 11) QP_ZERO4(12, 13, 14, 15)
                 QP_ZERO4(16, 17, 18, 19) QP_ZERO4(20, 21, 22, 23)
                 QP_LOOP_BEGIN
                 QP_LOAD_B(0) QP_ROW(0, 0, 1, 2, 3) QP_ROW(4, 4, 5, 6, 7) QP_ROW(8, 8, 9, 10, 11)
                 QP_ROW(12, 12, 13, 14, 15) QP_ROW(16, 16, 17, 18, 19) QP_ROW(20, 20, 21, 22, 23)
                 QP_LOOP_END(24, 128)
                 QP_STORE_ROW(0, 0, 1, 2, 3) QP_STORE_ROW(256, 4, 5, 6, 7) QP_STORE_ROW(512, 8, 9, 10, 11)
                 QP_STORE_ROW(768, 12, 13, 14, 15) QP_STORE_ROW(1024, 16, 17, 18, 19)
                 QP_STORE_ROW(1280, 20, 21, 22, 23)
                 QP_OPERANDS);
  }
  finish<MR>(sums, kgroups % kSplit, a, b, panel_stride, col_init, c, ldc);
}

// The instantiations the kernels of int8_tile_avx512vnni.cpp refer to.
template void tile_pair<1>(int64_t, const void*, const void*, int64_t, const int32_t*, int32_t*, int64_t);
template void tile_pair<2>(int64_t, const void*, const void*, int64_t, const int32_t*, int32_t*, int64_t);
template void tile_pair<3>(int64_t, const void*, const void*, int64_t, const int32_t*, int32_t*, int64_t);
template void tile_pair<4>(int64_t, const void*, const void*, int64_t, const int32_t*, int32_t*, int64_t);
template void tile_pair<5>(int64_t, const void*, const void*, int64_t, const int32_t*, int32_t*, int64_t);
template void tile_pair<6>(int64_t, const void*, const void*, int64_t, const int32_t*, int32_t*, int64_t);

}  // namespace qmatmul::kernels::avx512vnni

#endif  // without AVX-512 VNNI nothing here is compiled, and nothing refers to it
