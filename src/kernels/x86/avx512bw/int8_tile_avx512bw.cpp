// The exact int16 kernel of the AVX2 path in 512-bit registers, for x86 CPUs
// with AVX-512 BW but no VNNI (Skylake-SP/X and its derivatives before
// Cascade Lake). Like the AVX2 kernel it never uses vpmaddubsw, whose int16
// pair sum saturates (255 * -128 * 2 = -65280): both operands come packed
// pre-widened to int16 (Widening::Int16, KR = 2), vpmaddwd multiplies int16
// pairs into exact int32 (|a * b| <= 32640, a pair within +-65280) and a
// vpaddd accumulates, wrapping modulo 2^32 like every other kernel.
//
// Its packings are the AVX2 path's, with B pre-widened (B: NR = 16
// columns, one k-group = 16 int16 pairs = 64 bytes = one zmm; A: MR = 6
// rows, 4 bytes a row per k-group), so the AVX2 packers (pack_avx2.cpp, the
// int16 form of the pair layout) and epilogues serve it as they are; the
// AVX2 kernel itself reads B as bytes and widens it as it loads. A zmm holds a whole k-group of the panel, so a row
// needs one vpmaddwd per k-group where the AVX2 tile needs two: to keep
// enough independent chains, the k loop takes two k-groups a step into two
// accumulator sets (even and odd k-groups), added once at the end. Tile
// 6 x 16: 12 accumulators, per two k-groups 2 B loads, 12 broadcasts, 12
// vpmaddwd and 12 vpaddd, twice the AVX2 tile's work per instruction.
// Measured on the project's Zen 5 machine (which has VNNI; QMATMUL_ISA=
// avx512bw forces this path): the 6 x 16 tile alone 255-275 GOPS from L1
// against 182-191 for the AVX2 tile (bench_int8_kernels Int8Tile, Int8Panel),
// above the 229 of the AVX2 saturating loop's register-only ceiling
// (bench_avx2_multiply_mix); qmatmul bench, 1 thread, 2 interleaved rounds
// against QMATMUL_ISA=avx2: 1.16-1.34x at 2048^3, 512 x 1024 x 4096, 128 x
// 4096 x 4096 and 128 x 768 x 768 (raw and packed B) and 16 x 4096 x 4096
// (packed B; unpacked, the AVX2 raw-B kernel runs there).
// oneDNN capped to AVX512_CORE (vpmaddubsw, inexact: it differed from the
// exact result in nearly every element of the full-range bench data) ran
// 1.6x this path there.
// The same loop with 5, 4, 3, 2 and 1 rows gives the tiles for few rows and for
// a block's last rows. The full tile has a requantizing form for
// QLinearMatMul (the AVX2 requantization, on each zmm's two halves).
// Compiled with AVX-512 F/BW flags; the getters return nullptr without.
#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX2__) && defined(__FMA__)

// GCC 12 reports its own _mm512_undefined_* helpers (self-initialised) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels/x86/requant_row_avx2.h"
#include "kernels/x86/tile_set_mx16.h"

namespace qmatmul::kernels {
namespace {

constexpr int kKr = 2;              // one vpmaddwd pair
constexpr int kTileCols = 16;       // one zmm of int32 per row
constexpr int kAGroupBytes = 4;     // one row's k-group of A' (two int16)
constexpr int kBGroupBytes = 64;    // one k-group of a B' panel (16 int16 pairs)

inline __m512i broadcast_pair(const unsigned char* p) {
  int32_t word;
  std::memcpy(&word, p, sizeof word);
  return _mm512_set1_epi32(word);
}

// The k loop of kMr rows: acc = col_init (every row) plus the tile's
// products, exact int16 pair products summed with wrapping. kPrefetch:
// touch one line of the driver's prefetch region per k-group.
template <int kMr, bool kPrefetch>
inline void accumulate_mx16_zmm(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                                const void* prefetch, __m512i (&acc)[kMr]) {
  const auto* a = static_cast<const unsigned char*>(packed_a);
  const auto* b = static_cast<const unsigned char*>(packed_b);
  const auto* pf = static_cast<const char*>(prefetch);
  __m512i sum[2 * kMr];  // rows' sums of the even k-groups, then of the odd ones
#pragma GCC unroll 16
  for (int i = 0; i < 2 * kMr; ++i) sum[i] = _mm512_setzero_si512();
  int64_t g = 0;
  for (; g + 2 <= kgroups; g += 2) {
    if constexpr (kPrefetch) {
      _mm_prefetch(pf + g * kPrefetchBytesPerKgroup, _MM_HINT_T0);
      _mm_prefetch(pf + (g + 1) * kPrefetchBytesPerKgroup, _MM_HINT_T0);
    }
    const __m512i bv[2] = {_mm512_loadu_si512(b), _mm512_loadu_si512(b + kBGroupBytes)};
    // A' of the two k-groups: 2 kMr words in a row, k-group g's rows first.
#pragma GCC unroll 16
    for (int r = 0; r < 2 * kMr; ++r)
      sum[r] = _mm512_add_epi32(sum[r], _mm512_madd_epi16(broadcast_pair(a + r * kAGroupBytes), bv[r / kMr]));
    a += 2 * kMr * kAGroupBytes;
    b += 2 * kBGroupBytes;
  }
  if (g < kgroups) {  // an odd count: the last k-group
    if constexpr (kPrefetch) _mm_prefetch(pf + g * kPrefetchBytesPerKgroup, _MM_HINT_T0);
    const __m512i b0 = _mm512_loadu_si512(b);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i)
      sum[i] = _mm512_add_epi32(sum[i], _mm512_madd_epi16(broadcast_pair(a + i * kAGroupBytes), b0));
  }
  const __m512i init = col_init != nullptr ? _mm512_loadu_si512(col_init) : _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) acc[i] = _mm512_add_epi32(_mm512_add_epi32(sum[i], sum[kMr + i]), init);
}

template <int kMr, bool kPrefetch>
void tile_mx16_zmm_loop(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                        int32_t* c, int64_t ldc, const void* prefetch) {
  __m512i acc[kMr];
  accumulate_mx16_zmm<kMr, kPrefetch>(kgroups, packed_a, packed_b, col_init, prefetch, acc);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) _mm512_storeu_si512(c + i * ldc, acc[i]);
}

// The tile function (Int8TileFn): the loop with or without the prefetch hint.
template <int kMr>
void tile_mx16_zmm(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init, int32_t* c,
                   int64_t ldc, const void* prefetch) {
  if (prefetch != nullptr)
    tile_mx16_zmm_loop<kMr, true>(kgroups, packed_a, packed_b, col_init, c, ldc, prefetch);
  else
    tile_mx16_zmm_loop<kMr, false>(kgroups, packed_a, packed_b, col_init, c, ldc, nullptr);
}

// The requantizing form (tile_requant, int8_kernel.h): the sums plus
// col_init, requantized in registers to 16 bytes per row at y, each zmm as
// two halves of 8 columns (requant_row_avx2.h, the AVX2 epilogue's
// arithmetic). A is packed (lda 0, a_flip unused).
template <int kMr, bool kPrefetch>
void tile_mx16_zmm_requant_loop(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                                const RequantParams& rq, unsigned char* y, int64_t ldy, const void* prefetch) {
  __m512i acc[kMr];
  accumulate_mx16_zmm<kMr, kPrefetch>(kgroups, packed_a, packed_b, col_init, prefetch, acc);
  const __m256d lo = _mm256_set1_pd(rq.uint8_output ? 0.0 : -128.0);
  const __m256d hi = _mm256_set1_pd(rq.uint8_output ? 255.0 : 127.0);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    const __m128i low = requant8_words(_mm512_castsi512_si256(acc[i]), rq.multiplier, rq.y_zero_point, lo, hi,
                                       rq.bounded, rq.exact_product);
    const __m128i high = requant8_words(_mm512_extracti64x4_epi64(acc[i], 1), rq.multiplier + 8,
                                        rq.y_zero_point + 8, lo, hi, rq.bounded, rq.exact_product);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i * ldy), words_to_bytes(low, high, rq.uint8_output));
  }
}

template <int kMr>
void tile_mx16_zmm_requant(int64_t kgroups, const void* a, int64_t /*lda: always 0, packed A*/,
                           uint8_t /*a_flip: unused with packed A*/, const void* packed_b, const int32_t* col_init,
                           const RequantParams& rq, void* y, int64_t ldy, const void* prefetch) {
  auto* out = static_cast<unsigned char*>(y);
  if (prefetch != nullptr)
    tile_mx16_zmm_requant_loop<kMr, true>(kgroups, a, packed_b, col_init, rq, out, ldy, prefetch);
  else
    tile_mx16_zmm_requant_loop<kMr, false>(kgroups, a, packed_b, col_init, rq, out, ldy, nullptr);
}

constexpr Mx16TileKernels kKernels = {
    {"u8s8_6x16c2_int16__avx512bw", Isa::Avx512Bw, 6, kTileCols, kKr, Widening::Int16, tile_mx16_zmm<6>, nullptr, nullptr,
     tile_mx16_zmm_requant<6>},
    {"u8s8_5x16c2_int16__avx512bw", Isa::Avx512Bw, 5, kTileCols, kKr, Widening::Int16, tile_mx16_zmm<5>},
    {"u8s8_4x16c2_int16__avx512bw", Isa::Avx512Bw, 4, kTileCols, kKr, Widening::Int16, tile_mx16_zmm<4>},
    {"u8s8_3x16c2_int16__avx512bw", Isa::Avx512Bw, 3, kTileCols, kKr, Widening::Int16, tile_mx16_zmm<3>},
    {"u8s8_2x16c2_int16__avx512bw", Isa::Avx512Bw, 2, kTileCols, kKr, Widening::Int16, tile_mx16_zmm<2>},
    {"u8s8_1x16c2_int16__avx512bw", Isa::Avx512Bw, 1, kTileCols, kKr, Widening::Int16, tile_mx16_zmm<1>}};

}  // namespace

const Int8GemmKernel* int8_kernel_avx512bw() { return &kKernels.rows6; }
const Int8GemmKernel* int8_kernel_avx512bw_small_m() { return &kKernels.rows4; }
const Int8GemmKernel* int8_kernel_avx512bw_small_m_for(int m) { return kKernels.for_rows(m); }

}  // namespace qmatmul::kernels

#else  // compiled without AVX-512 BW: the getters report "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avx512bw() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512bw_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx512bw_small_m_for(int) { return nullptr; }
}  // namespace qmatmul::kernels

#endif
