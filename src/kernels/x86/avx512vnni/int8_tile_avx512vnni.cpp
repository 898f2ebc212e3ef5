// The AVX-512 VNNI int8 microkernels: the fastest path on CPUs with
// AVX512_VNNI (Ice Lake and later Xeons, Zen 4 / Zen 5). Each k-group of four
// bytes is one vpdpbusd: a row's four u8 values of A' broadcast to all 16
// lanes, times four s8 values of B' per column, summed into that column's
// int32 lane (wrapping, never saturating: not vpdpbusds). Every tile is 32
// columns wide (two zmm per row) and all share one B packing (NR = 32,
// KR = 4, bytes), so a B panel packed once serves every kernel here:
//
//  * u8s8_8x32c4: the main kernel. 16 accumulators cover the 4-cycle
//    vpdpbusd latency at 2 per cycle; per k-group it loads 2 zmm of B and
//    broadcasts 8 words of A. Runs at the machine's vpdpbusd peak.
//  * u8s8_5x32c4, u8s8_6x32c4: the same loop for M = 5 and M = 6 (10 and
//    12 chains), where the 8-row tile would spend a quarter or more of its
//    work on padding rows; u8s8_7x32c4 for a block's last 7 rows (the
//    driver's tail tile), which is also how M = 7 runs.
//  * u8s8_{1,2,3,4}x32c4: for M <= 4 (LLM decoding), bound by streaming B.
//    With so few rows one k-group has too few independent vpdpbusd chains,
//    so the k loop is split over 2 or 4 accumulator sets (k-group g feeds set
//    g mod U), summed at the end. That loop is inline assembly: GCC 12 turns
//    the same code written with intrinsics into a register-shuffling mess
//    (two vmovdqa per vpdpbusd and spills), at half the speed.
//  * u8s8_8x32c4 also has a half-width form (tile_half, and
//    tile_half_a_in_place): the tile's first 16 columns from the same
//    panel, one zmm of B and 8 vpdpbusd per k-group, for a last panel of at
//    most 16 columns, which the full tile would compute at twice the cost.
//  * u8s8_8x32c4 also reads A in place (tile_a_in_place): the same loop
//    with row i's bytes at a + i * lda, for A that needs no packing pass
//    (no row sums), saving that pass and its copy of A. int8 A is shifted
//    to the u8 domain on the fly: its broadcast becomes a vpxord of the
//    row's word, broadcast from memory, with 0x80 bytes (as fast, measured).
//  * u8s8_8x32c4 also requantizes (tile_requant): for QLinearMatMul when
//    the column term is the whole correction, the same k loop (in assembly,
//    see sums_8x32_asm), then each row of accumulators straight to bytes
//    (requant_row_avx512.h), with no int32 tile buffer and no epilogue call.
//  * The 1- to 6-row kernels also have a two-panel form (tile_pair, in
//    int8_tile_pair_avx512vnni.cpp), MR x 64 from two panels at once, which
//    the driver uses whenever a panel has a single row tile.
//
// The MR x 32 tiles honour the prefetch hint (one prefetcht0 per k-group);
// the assembly loops for M <= 4 ignore it, since they stream B anyway.
//
// B loads are fastest when packed B panels are 64-byte aligned; any
// alignment is correct (unaligned loads throughout).
#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/avx512vnni/int8_tile_pair_avx512vnni.h"
#include "kernels/x86/requant_row_avx512.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
// GCC 12 reports its own _mm512_undefined_* helpers (self-initialised) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <immintrin.h>

namespace qmatmul::kernels {
namespace {

constexpr int kNr = 32;                 // two zmm of int32 per row
constexpr int kKr = 4;                  // one vpdpbusd k-group
constexpr int64_t kBGroup = kNr * kKr;  // bytes of B' per k-group

// Reads four bytes of A' for one row and broadcasts them as an int32; with
// kFlipA, bytes of int8 A moved to the u8 domain (xor 0x80: a + 128).
template <bool kFlipA = false>
inline __m512i broadcast_a(const uint8_t* p) {
  int32_t w;
  std::memcpy(&w, p, sizeof w);
  const __m512i v = _mm512_set1_epi32(w);
  return kFlipA ? _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))) : v;
}

// Adds k-groups [0, kgroups) of an MR x 32 tile into acc (intrinsics; used
// by the main kernel and for the few k-groups the assembly loops leave), or
// of its first 16 columns only when NB (zmm per row) is 1.
// Row i's k-group g of A' is at a + i * a_row + g * a_group: packed A
// (a_row = KR, a_group = MR * KR, both constants) or A read in place
// (a_row = lda, a_group = KR).
// kPrefetch: touch one line of `prefetch` per k-group (the driver's hint).
// kFlipA: A is int8 read in place (broadcast_a).
template <int MR, bool kPrefetch = false, int NB = 2, bool kFlipA = false>
inline void accumulate(__m512i (&acc)[MR][NB], int64_t kgroups, const uint8_t* a, const int8_t* b,
                       const char* prefetch = nullptr, int64_t a_row = kKr, int64_t a_group = MR * kKr) {
  for (int64_t g = 0; g < kgroups; ++g) {
    if constexpr (kPrefetch) _mm_prefetch(prefetch + g * kPrefetchBytesPerKgroup, _MM_HINT_T0);
    __m512i bv[NB];
#pragma GCC unroll 2
    for (int h = 0; h < NB; ++h) bv[h] = _mm512_loadu_si512(b + 64 * h);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512i ai = broadcast_a<kFlipA>(a + i * a_row);
#pragma GCC unroll 2
      for (int h = 0; h < NB; ++h) acc[i][h] = _mm512_dpbusd_epi32(acc[i][h], ai, bv[h]);
    }
    a += a_group;
    b += kBGroup;
  }
}

// Stores the tile (NB x 16 columns), plus col_init in every row when given.
template <int MR, int NB = 2>
inline void store(const __m512i (&acc)[MR][NB], const int32_t* col_init, int32_t* c, int64_t ldc) {
  if (col_init != nullptr) {
    __m512i init[NB];
#pragma GCC unroll 2
    for (int h = 0; h < NB; ++h) init[h] = _mm512_loadu_si512(col_init + 16 * h);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
      for (int h = 0; h < NB; ++h) _mm512_storeu_si512(c + i * ldc + 16 * h, _mm512_add_epi32(acc[i][h], init[h]));
    return;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < NB; ++h) _mm512_storeu_si512(c + i * ldc + 16 * h, acc[i][h]);
}

// An MR x 32 tile (or its first 16 columns, NB = 1) from zero: accumulate
// (with the prefetch hint when given) and store. A' addressed as in
// accumulate.
template <int MR, int NB = 2, bool kFlipA = false>
inline void tile_from_zero(int64_t kgroups, const uint8_t* a, int64_t a_row, int64_t a_group, const void* packed_b,
                           const int32_t* col_init, int32_t* c, int64_t ldc, const void* prefetch) {
  __m512i acc[MR][NB];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int h = 0; h < NB; ++h) acc[i][h] = _mm512_setzero_si512();
  const auto* b = static_cast<const int8_t*>(packed_b);
  if (prefetch != nullptr)
    accumulate<MR, true, NB, kFlipA>(acc, kgroups, a, b, static_cast<const char*>(prefetch), a_row, a_group);
  else
    accumulate<MR, false, NB, kFlipA>(acc, kgroups, a, b, nullptr, a_row, a_group);
  store<MR, NB>(acc, col_init, c, ldc);
}

template <int MR>
void tile_mx32(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
               int32_t* c, int64_t ldc, const void* prefetch) {
  tile_from_zero<MR>(kgroups, static_cast<const uint8_t*>(packed_a), kKr, MR * kKr, packed_b, col_init, c, ldc,
                     prefetch);
}

// The same tile (NB zmm per row) with A read in place (row stride lda
// bytes, int8 when a_flip is 0x80): no packing pass.
template <int MR, int NB>
void tile_a_in_place(int64_t kgroups, const void* a_rows, int64_t lda, uint8_t a_flip, const void* packed_b,
                     const int32_t* col_init, int32_t* c, int64_t ldc, const void* prefetch) {
  const auto* a = static_cast<const uint8_t*>(a_rows);
  if (a_flip != 0)
    tile_from_zero<MR, NB, true>(kgroups, a, lda, kKr, packed_b, col_init, c, ldc, prefetch);
  else
    tile_from_zero<MR, NB>(kgroups, a, lda, kKr, packed_b, col_init, c, ldc, prefetch);
}

// The half-width forms: the first 16 columns of the 32-column panel.
template <int MR>
void tile_mx16_half(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                    int32_t* c, int64_t ldc, const void* prefetch) {
  tile_from_zero<MR, 1>(kgroups, static_cast<const uint8_t*>(packed_a), kKr, MR * kKr, packed_b, col_init, c, ldc,
                        prefetch);
}


// Assembly building blocks (AT&T operand order). Operands: %[pa], %[pb]
// packed A' / B' pointers, %[n] block count, %[av] the broadcast of A.
#define QM_ZERO(r) "vpxord %[" #r "], %[" #r "], %[" #r "]\n\t"
#define QM_LDB(off, r) "vmovdqu64 " #off "(%[pb]), %[" #r "]\n\t"
#define QM_BCA(off) "vpbroadcastd " #off "(%[pa]), %[av]\n\t"
#define QM_DP(b, acc) "vpdpbusd %[" #b "], %[av], %[" #acc "]\n\t"
#define QM_LOOP_BEGIN "test %[n], %[n]\n\tjle 2f\n\t.p2align 4\n1:\n\t"
#define QM_LOOP_END(a_step, b_step) \
  "add $" #a_step ", %[pa]\n\tadd $" #b_step ", %[pb]\n\tdec %[n]\n\tjnz 1b\n2:\n\t"
#define QM_TEMPS [b0] "=&v"(b0), [b1] "=&v"(b1), [b2] "=&v"(b2), [b3] "=&v"(b3), [av] "=&v"(av)
#define QM_PTRS [pa] "+r"(a), [pb] "+r"(b), [n] "+r"(n)

// How the requantizing form reads A: packed, or in place (uint8, or int8
// shifted to the u8 domain as it is read).
enum class AForm { Packed, InPlace, InPlaceFlipped };

// The 8 x 32 k loop in assembly, for the requantizing form below: written
// with intrinsics and followed by the requantization in the same function,
// GCC 12 copies every accumulator between two registers at each k-group.
// The sums start at zero in the loop's own code (write-only operands: an asm
// takes at most 30, and in-out ones count twice). Row i's A' word of
// k-group g: packed A at a + 32 g + 4 i; A in place at a + i * lda + 4 g,
// the rows' offsets 0 .. 7 x lda by scaled addressing from lda and its
// multiples 3, 5 and 7, broadcast (QM_ROW) or, for int8 A, xor-ed with 0x80
// bytes held in zmm31 (QM_ROW_FLIPPED, vpxord with a broadcast memory
// operand). kPrefetch: one prefetcht0 of the hint per k-group.
#define QM_ROW(addr, c0, c1) "vpbroadcastd " addr ", %[av]\n\t" QM_DP(b0, c0) QM_DP(b1, c1)
#define QM_ROW_FLIPPED(addr, c0, c1) "vpxord " addr "%{1to16%}, %%zmm31, %[av]\n\t" QM_DP(b0, c0) QM_DP(b1, c1)
#define QM_FLIP_SETUP "movl $0x80808080, %%eax\n\tvpbroadcastd %%eax, %%zmm31\n\t"
#define QM_SUMS_8X32(SETUP, ROW, PF, R0, R1, R2, R3, R4, R5, R6, R7, A_STEP)                                     \
  asm(SETUP QM_ZERO(c00) QM_ZERO(c01) QM_ZERO(c10) QM_ZERO(c11) QM_ZERO(c20) QM_ZERO(c21) QM_ZERO(c30)           \
          QM_ZERO(c31) QM_ZERO(c40) QM_ZERO(c41) QM_ZERO(c50) QM_ZERO(c51) QM_ZERO(c60) QM_ZERO(c61) QM_ZERO(c70) \
              QM_ZERO(c71)                                                                                        \
      "cmp %[pend], %[pb]\n\tjae 2f\n\t.p2align 4\n1:\n\t" PF                                                 \
      "vmovdqu64 (%[pb]), %[b0]\n\tvmovdqu64 64(%[pb]), %[b1]\n\t"                                           \
      ROW(R0, c00, c01) ROW(R1, c10, c11) ROW(R2, c20, c21) ROW(R3, c30, c31)                                  \
      ROW(R4, c40, c41) ROW(R5, c50, c51) ROW(R6, c60, c61) ROW(R7, c70, c71)                                  \
      "add $" A_STEP ", %[pa]\n\tsub $-128, %[pb]\n\tcmp %[pend], %[pb]\n\tjne 1b\n2:\n\t"                     \
      : [c00] "=&v"(c[0][0]), [c01] "=&v"(c[0][1]), [c10] "=&v"(c[1][0]), [c11] "=&v"(c[1][1]),                  \
        [c20] "=&v"(c[2][0]), [c21] "=&v"(c[2][1]), [c30] "=&v"(c[3][0]), [c31] "=&v"(c[3][1]),                  \
        [c40] "=&v"(c[4][0]), [c41] "=&v"(c[4][1]), [c50] "=&v"(c[5][0]), [c51] "=&v"(c[5][1]),                  \
        [c60] "=&v"(c[6][0]), [c61] "=&v"(c[6][1]), [c70] "=&v"(c[7][0]), [c71] "=&v"(c[7][1]), [b0] "=&v"(b0), \
        [b1] "=&v"(b1), [av] "=&v"(av), [pa] "+r"(a), [pb] "+r"(b), [pf] "+r"(pf)                                 \
      : [pend] "r"(b_end), [r1] "r"(lda), [r3] "r"(r3), [r5] "r"(r5), [r7] "r"(r7)                              \
      : "memory", "cc", "eax", "xmm31")
#define QM_SUMS_8X32_OF(...) QM_SUMS_8X32(__VA_ARGS__)  // expands the row lists first
#define QM_PREFETCH_HINT "prefetcht0 (%[pf])\n\tadd $64, %[pf]\n\t"
#define QM_PACKED_ROWS "(%[pa])", "4(%[pa])", "8(%[pa])", "12(%[pa])", "16(%[pa])", "20(%[pa])", "24(%[pa])", "28(%[pa])"
#define QM_IN_PLACE_ROWS                                                                                         \
  "(%[pa])", "(%[pa],%[r1])", "(%[pa],%[r1],2)", "(%[pa],%[r3])", "(%[pa],%[r1],4)", "(%[pa],%[r5])", \
      "(%[pa],%[r3],2)", "(%[pa],%[r7])"
template <AForm kA, bool kPrefetch>
inline void sums_8x32_asm(__m512i (&c)[8][2], int64_t kgroups, const uint8_t* a, int64_t lda, const int8_t* b,
                          const char* pf) {
  const int8_t* b_end = b + kgroups * kBGroup;
  const int64_t r3 = 3 * lda, r5 = 5 * lda, r7 = 7 * lda;
  __m512i b0, b1, av;
  constexpr bool kInPlace = kA != AForm::Packed;
  if constexpr (kA == AForm::InPlaceFlipped && kPrefetch)
    QM_SUMS_8X32_OF(QM_FLIP_SETUP, QM_ROW_FLIPPED, QM_PREFETCH_HINT, QM_IN_PLACE_ROWS, "4");
  else if constexpr (kA == AForm::InPlaceFlipped)
    QM_SUMS_8X32_OF(QM_FLIP_SETUP, QM_ROW_FLIPPED, "", QM_IN_PLACE_ROWS, "4");
  else if constexpr (kInPlace && kPrefetch)
    QM_SUMS_8X32_OF("", QM_ROW, QM_PREFETCH_HINT, QM_IN_PLACE_ROWS, "4");
  else if constexpr (kInPlace)
    QM_SUMS_8X32_OF("", QM_ROW, "", QM_IN_PLACE_ROWS, "4");
  else if constexpr (kPrefetch)
    QM_SUMS_8X32_OF("", QM_ROW, QM_PREFETCH_HINT, QM_PACKED_ROWS, "32");
  else
    QM_SUMS_8X32_OF("", QM_ROW, "", QM_PACKED_ROWS, "32");
}
#undef QM_ROW
#undef QM_ROW_FLIPPED
#undef QM_FLIP_SETUP
#undef QM_SUMS_8X32
#undef QM_SUMS_8X32_OF
#undef QM_PREFETCH_HINT
#undef QM_PACKED_ROWS
#undef QM_IN_PLACE_ROWS

// The requantizing form (tile_requant, int8_kernel.h): the 8 x 32 sums plus
// col_init, requantized row by row from the accumulators (the shared code of
// requant_row_avx512.h) and stored as 32 bytes per row.
template <AForm kA, bool kPrefetch, bool kExactProduct, bool kBounded>
void tile_requant_8x32_variant(int64_t kgroups, const uint8_t* a, int64_t lda, const int8_t* b,
                               const int32_t* col_init, const RequantParams& rq, unsigned char* y, int64_t ldy,
                               const char* prefetch) {
  __m512i acc[8][2];
  sums_8x32_asm<kA, kPrefetch>(acc, kgroups, a, lda, b, prefetch);
  const __m512i init0 = col_init != nullptr ? _mm512_loadu_si512(col_init) : _mm512_setzero_si512();
  const __m512i init1 = col_init != nullptr ? _mm512_loadu_si512(col_init + 16) : _mm512_setzero_si512();
  const RequantRowVectors v = load_requant_row_vectors(rq);
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const __m512i c0 = _mm512_add_epi32(acc[i][0], init0), c1 = _mm512_add_epi32(acc[i][1], init1);
    const __m256i c[4] = {_mm512_castsi512_si256(c0), _mm512_extracti64x4_epi64(c0, 1), _mm512_castsi512_si256(c1),
                          _mm512_extracti64x4_epi64(c1, 1)};
    requantize_row32<kExactProduct, kBounded>(c, v, y + i * ldy);
  }
}

void tile_requant_8x32(int64_t kgroups, const void* a, int64_t lda, uint8_t a_flip, const void* packed_b,
                       const int32_t* col_init, const RequantParams& rq, void* y, int64_t ldy, const void* prefetch) {
  const auto* a_bytes = static_cast<const uint8_t*>(a);
  const auto* b = static_cast<const int8_t*>(packed_b);
  auto* out = static_cast<unsigned char*>(y);
  const auto* pf = static_cast<const char*>(prefetch);
  const auto run = [&]<AForm kA, bool kExactProduct, bool kBounded>() {
    if (pf != nullptr)
      tile_requant_8x32_variant<kA, true, kExactProduct, kBounded>(kgroups, a_bytes, lda, b, col_init, rq, out, ldy,
                                                                   pf);
    else
      tile_requant_8x32_variant<kA, false, kExactProduct, kBounded>(kgroups, a_bytes, lda, b, col_init, rq, out,
                                                                    ldy, pf);
  };
  with_requant_flags(rq, [&]<bool kExactProduct, bool kBounded>() {
    if (lda == 0)
      run.template operator()<AForm::Packed, kExactProduct, kBounded>();
    else if (a_flip == 0)
      run.template operator()<AForm::InPlace, kExactProduct, kBounded>();
    else
      run.template operator()<AForm::InPlaceFlipped, kExactProduct, kBounded>();
  });
}

// 1 x 32 with the k loop split 4 ways: 8 accumulator chains. A block of 4
// k-groups is 16 bytes of A' and 512 of B'.
void tile_1x32(int64_t kgroups, const void* packed_a, const void* packed_b,
               const int32_t* col_init, int32_t* c, int64_t ldc,
               const void* /*prefetch: B streams anyway*/) {
  const auto* a = static_cast<const uint8_t*>(packed_a);
  const auto* b = static_cast<const int8_t*>(packed_b);
  int64_t n = kgroups / 4;
  __m512i s0, s1, s2, s3, s4, s5, s6, s7, b0, b1, b2, b3, av;
  asm(QM_ZERO(s0) QM_ZERO(s1) QM_ZERO(s2) QM_ZERO(s3) QM_ZERO(s4) QM_ZERO(s5) QM_ZERO(s6)
          QM_ZERO(s7) QM_LOOP_BEGIN
      QM_LDB(0, b0) QM_LDB(64, b1) QM_LDB(128, b2) QM_LDB(192, b3)
      QM_BCA(0) QM_DP(b0, s0) QM_DP(b1, s1)
      QM_BCA(4) QM_DP(b2, s2) QM_DP(b3, s3)
      QM_LDB(256, b0) QM_LDB(320, b1) QM_LDB(384, b2) QM_LDB(448, b3)
      QM_BCA(8) QM_DP(b0, s4) QM_DP(b1, s5)
      QM_BCA(12) QM_DP(b2, s6) QM_DP(b3, s7)
      QM_LOOP_END(16, 512)
      : [s0] "=&v"(s0), [s1] "=&v"(s1), [s2] "=&v"(s2), [s3] "=&v"(s3), [s4] "=&v"(s4),
        [s5] "=&v"(s5), [s6] "=&v"(s6), [s7] "=&v"(s7), QM_TEMPS, QM_PTRS
      :
      : "cc", "memory");
  __m512i acc[1][2] = {{_mm512_add_epi32(_mm512_add_epi32(s0, s2), _mm512_add_epi32(s4, s6)),
                        _mm512_add_epi32(_mm512_add_epi32(s1, s3), _mm512_add_epi32(s5, s7))}};
  accumulate<1>(acc, kgroups % 4, a, b);
  store<1>(acc, col_init, c, ldc);
}

// 2 x 32 with the k loop split 2 ways: 8 accumulator chains. A block of 2
// k-groups is 16 bytes of A' and 256 of B'.
void tile_2x32(int64_t kgroups, const void* packed_a, const void* packed_b,
               const int32_t* col_init, int32_t* c, int64_t ldc,
               const void* /*prefetch: B streams anyway*/) {
  const auto* a = static_cast<const uint8_t*>(packed_a);
  const auto* b = static_cast<const int8_t*>(packed_b);
  int64_t n = kgroups / 2;
  __m512i s00, s01, s10, s11, t00, t01, t10, t11, b0, b1, b2, b3, av;
  asm(QM_ZERO(s00) QM_ZERO(s01) QM_ZERO(s10) QM_ZERO(s11) QM_ZERO(t00) QM_ZERO(t01)
          QM_ZERO(t10) QM_ZERO(t11) QM_LOOP_BEGIN
      QM_LDB(0, b0) QM_LDB(64, b1) QM_LDB(128, b2) QM_LDB(192, b3)
      QM_BCA(0) QM_DP(b0, s00) QM_DP(b1, s01)
      QM_BCA(4) QM_DP(b0, s10) QM_DP(b1, s11)
      QM_BCA(8) QM_DP(b2, t00) QM_DP(b3, t01)
      QM_BCA(12) QM_DP(b2, t10) QM_DP(b3, t11)
      QM_LOOP_END(16, 256)
      : [s00] "=&v"(s00), [s01] "=&v"(s01), [s10] "=&v"(s10), [s11] "=&v"(s11),
        [t00] "=&v"(t00), [t01] "=&v"(t01), [t10] "=&v"(t10), [t11] "=&v"(t11), QM_TEMPS,
        QM_PTRS
      :
      : "cc", "memory");
  __m512i acc[2][2] = {{_mm512_add_epi32(s00, t00), _mm512_add_epi32(s01, t01)},
                       {_mm512_add_epi32(s10, t10), _mm512_add_epi32(s11, t11)}};
  accumulate<2>(acc, kgroups % 2, a, b);
  store<2>(acc, col_init, c, ldc);
}

// 3 x 32 with the k loop split 2 ways: 12 accumulator chains. A block of 2
// k-groups is 24 bytes of A' and 256 of B'. For M = 3, where the 4-row tile
// would spend a quarter of its vpdpbusd on a zero row.
void tile_3x32(int64_t kgroups, const void* packed_a, const void* packed_b,
               const int32_t* col_init, int32_t* c, int64_t ldc,
               const void* /*prefetch: B streams anyway*/) {
  const auto* a = static_cast<const uint8_t*>(packed_a);
  const auto* b = static_cast<const int8_t*>(packed_b);
  int64_t n = kgroups / 2;
  __m512i s00, s01, s10, s11, s20, s21, t00, t01, t10, t11, t20, t21, b0, b1, b2, b3, av;
  asm(QM_ZERO(s00) QM_ZERO(s01) QM_ZERO(s10) QM_ZERO(s11) QM_ZERO(s20) QM_ZERO(s21)
          QM_ZERO(t00) QM_ZERO(t01) QM_ZERO(t10) QM_ZERO(t11) QM_ZERO(t20) QM_ZERO(t21) QM_LOOP_BEGIN
      QM_LDB(0, b0) QM_LDB(64, b1) QM_LDB(128, b2) QM_LDB(192, b3)
      QM_BCA(0) QM_DP(b0, s00) QM_DP(b1, s01)
      QM_BCA(4) QM_DP(b0, s10) QM_DP(b1, s11)
      QM_BCA(8) QM_DP(b0, s20) QM_DP(b1, s21)
      QM_BCA(12) QM_DP(b2, t00) QM_DP(b3, t01)
      QM_BCA(16) QM_DP(b2, t10) QM_DP(b3, t11)
      QM_BCA(20) QM_DP(b2, t20) QM_DP(b3, t21)
      QM_LOOP_END(24, 256)
      : [s00] "=&v"(s00), [s01] "=&v"(s01), [s10] "=&v"(s10), [s11] "=&v"(s11),
        [s20] "=&v"(s20), [s21] "=&v"(s21), [t00] "=&v"(t00), [t01] "=&v"(t01),
        [t10] "=&v"(t10), [t11] "=&v"(t11), [t20] "=&v"(t20), [t21] "=&v"(t21), QM_TEMPS,
        QM_PTRS
      :
      : "cc", "memory");
  __m512i acc[3][2] = {{_mm512_add_epi32(s00, t00), _mm512_add_epi32(s01, t01)},
                       {_mm512_add_epi32(s10, t10), _mm512_add_epi32(s11, t11)},
                       {_mm512_add_epi32(s20, t20), _mm512_add_epi32(s21, t21)}};
  accumulate<3>(acc, kgroups % 2, a, b);
  store<3>(acc, col_init, c, ldc);
}

// 4 x 32 with the k loop split 2 ways: 16 accumulator chains. A block of 2
// k-groups is 32 bytes of A' and 256 of B'.
void tile_4x32(int64_t kgroups, const void* packed_a, const void* packed_b,
               const int32_t* col_init, int32_t* c, int64_t ldc,
               const void* /*prefetch: B streams anyway*/) {
  const auto* a = static_cast<const uint8_t*>(packed_a);
  const auto* b = static_cast<const int8_t*>(packed_b);
  int64_t n = kgroups / 2;
  __m512i s00, s01, s10, s11, s20, s21, s30, s31;
  __m512i t00, t01, t10, t11, t20, t21, t30, t31, b0, b1, b2, b3, av;
  asm(QM_ZERO(s00) QM_ZERO(s01) QM_ZERO(s10) QM_ZERO(s11) QM_ZERO(s20) QM_ZERO(s21)
          QM_ZERO(s30) QM_ZERO(s31) QM_ZERO(t00) QM_ZERO(t01) QM_ZERO(t10) QM_ZERO(t11)
              QM_ZERO(t20) QM_ZERO(t21) QM_ZERO(t30) QM_ZERO(t31) QM_LOOP_BEGIN
      QM_LDB(0, b0) QM_LDB(64, b1) QM_LDB(128, b2) QM_LDB(192, b3)
      QM_BCA(0) QM_DP(b0, s00) QM_DP(b1, s01)
      QM_BCA(4) QM_DP(b0, s10) QM_DP(b1, s11)
      QM_BCA(8) QM_DP(b0, s20) QM_DP(b1, s21)
      QM_BCA(12) QM_DP(b0, s30) QM_DP(b1, s31)
      QM_BCA(16) QM_DP(b2, t00) QM_DP(b3, t01)
      QM_BCA(20) QM_DP(b2, t10) QM_DP(b3, t11)
      QM_BCA(24) QM_DP(b2, t20) QM_DP(b3, t21)
      QM_BCA(28) QM_DP(b2, t30) QM_DP(b3, t31)
      QM_LOOP_END(32, 256)
      : [s00] "=&v"(s00), [s01] "=&v"(s01), [s10] "=&v"(s10), [s11] "=&v"(s11),
        [s20] "=&v"(s20), [s21] "=&v"(s21), [s30] "=&v"(s30), [s31] "=&v"(s31),
        [t00] "=&v"(t00), [t01] "=&v"(t01), [t10] "=&v"(t10), [t11] "=&v"(t11),
        [t20] "=&v"(t20), [t21] "=&v"(t21), [t30] "=&v"(t30), [t31] "=&v"(t31), QM_TEMPS,
        QM_PTRS
      :
      : "cc", "memory");
  __m512i acc[4][2] = {{_mm512_add_epi32(s00, t00), _mm512_add_epi32(s01, t01)},
                       {_mm512_add_epi32(s10, t10), _mm512_add_epi32(s11, t11)},
                       {_mm512_add_epi32(s20, t20), _mm512_add_epi32(s21, t21)},
                       {_mm512_add_epi32(s30, t30), _mm512_add_epi32(s31, t31)}};
  accumulate<4>(acc, kgroups % 2, a, b);
  store<4>(acc, col_init, c, ldc);
}

#undef QM_ZERO
#undef QM_LDB
#undef QM_BCA
#undef QM_DP
#undef QM_LOOP_BEGIN
#undef QM_LOOP_END
#undef QM_TEMPS
#undef QM_PTRS

const Int8GemmKernel k8x32 = {"u8s8_8x32c4__avx512vnni", Isa::Avx512Vnni, 8, kNr, kKr, Widening::Bytes,
                              tile_mx32<8>, nullptr, tile_a_in_place<8, 2>, tile_requant_8x32,
                              tile_mx16_half<8>, tile_a_in_place<8, 1>};
const Int8GemmKernel k7x32 = {"u8s8_7x32c4__avx512vnni", Isa::Avx512Vnni, 7, kNr, kKr, Widening::Bytes, tile_mx32<7>};
const Int8GemmKernel k6x32 = {"u8s8_6x32c4__avx512vnni", Isa::Avx512Vnni, 6, kNr, kKr, Widening::Bytes,
                              tile_mx32<6>, avx512vnni::tile_pair<6>};
const Int8GemmKernel k5x32 = {"u8s8_5x32c4__avx512vnni", Isa::Avx512Vnni, 5, kNr, kKr, Widening::Bytes,
                              tile_mx32<5>, avx512vnni::tile_pair<5>};
const Int8GemmKernel k4x32 = {"u8s8_4x32c4__avx512vnni", Isa::Avx512Vnni, 4, kNr, kKr, Widening::Bytes,
                              tile_4x32, avx512vnni::tile_pair<4>};
const Int8GemmKernel k3x32 = {"u8s8_3x32c4__avx512vnni", Isa::Avx512Vnni, 3, kNr, kKr, Widening::Bytes,
                              tile_3x32, avx512vnni::tile_pair<3>};
const Int8GemmKernel k2x32 = {"u8s8_2x32c4__avx512vnni", Isa::Avx512Vnni, 2, kNr, kKr, Widening::Bytes,
                              tile_2x32, avx512vnni::tile_pair<2>};
const Int8GemmKernel k1x32 = {"u8s8_1x32c4__avx512vnni", Isa::Avx512Vnni, 1, kNr, kKr, Widening::Bytes,
                              tile_1x32, avx512vnni::tile_pair<1>};

}  // namespace

const Int8GemmKernel* int8_kernel_avx512vnni() { return &k8x32; }
const Int8GemmKernel* int8_kernel_avx512vnni_small_m() { return &k6x32; }

const Int8GemmKernel* int8_kernel_avx512vnni_small_m_for(int m) {
  switch (m) {
    case 1: return &k1x32;
    case 2: return &k2x32;
    case 3: return &k3x32;
    case 4: return &k4x32;
    case 5: return &k5x32;
    case 6: return &k6x32;
    case 7: return &k7x32;
    default: return nullptr;
  }
}

}  // namespace qmatmul::kernels

#else  // compiled without AVX-512 VNNI: the getters report "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avx512vnni() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512vnni_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512vnni_small_m_for(int) { return nullptr; }
}  // namespace qmatmul::kernels

#endif
