// The MR x 16 int8 tile loop of the 256-bit (ymm) kernels, shared by the
// AVX2 and AVX-VNNI kernel files: each compiles its own copy with its own
// flags (internal linkage). Their packings differ in what a k-group holds
// (AVX2: two k values, A' widened to int16, B' as bytes; AVX-VNNI: four
// bytes), but a k-group of A' is 4 bytes a row in both, and one of B' fills
// two ymm (16 columns) once loaded. So the loop, the broadcast of A and the
// store are the same, and only two steps differ, given by the kernel's
// MultiplyAdd: load_b_half(b) loads half a k-group of the panel, 8 columns
// in one ymm (16 bytes sign-extended to int16 pairs, or 32 bytes), the
// second half kBGroupBytes / 2 after the first, and kBGroupBytes is the
// k-group's size in the panel (32 or 64); apply(acc, a, b) returns
// acc plus the k-group's products (vpmaddwd + vpaddd, or vpdpbusd). Both
// files build the same tile heights from it (ymm_tile_kernels), and pick
// the tile for a call or a tail of m rows by one rule (for_rows). Every
// height also has a requantizing form for QLinearMatMul
// (tile_mx16_ymm_requant), as the AVX-512 VNNI kernel does: the driver runs
// it for a call's full tiles (the 6-row ones, or a small-M call's own). The
// 6-row tile also has a half-width form (tile_mx16_ymm_half), which the
// driver runs for a last panel of at most 8 columns: measured on Zen 1
// (AVX2, 3 interleaved rounds, MatMulInteger and QLinear u8, 1 / 2 threads,
// packed and raw B) against the whole tile, 12 batches of 197 x 64 x 197
// and 2364 x 64 x 197 1.03-1.05, 512 x 256 x 200 1.02-1.04, 128 x 768 x
// 776 (one such panel in 49) 0.99-1.01.
//
// The accumulators start from col_init (every row the same 16 values)
// instead of zero, so the sum costs nothing in the k loop. Two other places
// were measured slower: adding it at the final store made GCC 12 keep the
// 12 accumulators in memory through the whole k loop (the 16 ymm registers
// are all taken), at half the speed; a second pass over the stored tile made
// AVX2 MatMulInteger calls whose tiles go straight into the output 20-28%
// slower (the reload waits on the stores).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/requant_row_avx2.h"
#include "kernels/x86/tile_set_mx16.h"

namespace qmatmul::kernels {
namespace {

constexpr int kYmmTileCols = 16;           // two ymm of int32 per row
constexpr int kYmmAGroupBytes = 4;         // one row's k-group of A'

// The k loop of kMr rows: acc = col_init (every row) plus the tile's
// products. kPrefetch: touch one line of the driver's prefetch region per
// 64 bytes of B read.
// kVecs: 2 for the whole tile, 1 for its first 8 columns (the half-width
// form), whose loop still loads a whole k-group of the panel but widens and
// multiplies only its first half.
template <int kMr, bool kPrefetch, typename MultiplyAdd, int kVecs = 2>
inline void accumulate_mx16(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                            const void* prefetch, __m256i (&acc)[kMr][kVecs]) {
  const auto* a = static_cast<const unsigned char*>(packed_a);
  const auto* b = static_cast<const unsigned char*>(packed_b);

  __m256i init0 = _mm256_setzero_si256(), init1 = _mm256_setzero_si256();
  if (col_init != nullptr) {
    init0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init));
    init1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init + 8));
  }
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    acc[i][0] = init0;
    if constexpr (kVecs == 2) acc[i][1] = init1;
  }

  const auto* pf = static_cast<const char*>(prefetch);
  for (int64_t g = 0; g < kgroups; ++g) {
    // One line of the region per 64 bytes of B read: every k-group for
    // AVX-VNNI, every second one for AVX2 (int8_kernel.h). A line per
    // k-group of 32 bytes covered the next two panels, so that each panel
    // was prefetched twice: measured on Zen 1 (packed B, 3 interleaved
    // rounds, 1 / 2 threads), this rate against that one: MatMulInteger 8,
    // 12, 16 x 4096 x 4096 1.12 / 1.04, 1.05 / 1.02, 1.12 / 1.18, 7 rows
    // 0.99 / 1.04, 128 rows and 2048^3 0.99-1.02; QLinear u8 7, 8, 16 x
    // 4096 x 4096 1.03 / 1.03, 1.02 / 1.03, 1.02 / 1.02, 512 x 1024 x 4096
    // 1.02 / 1.00.
    if constexpr (kPrefetch) {
      if ((g * MultiplyAdd::kBGroupBytes) % kPrefetchBytesPerKgroup == 0)
        _mm_prefetch(pf + g * MultiplyAdd::kBGroupBytes, _MM_HINT_T0);
    }
    const __m256i b0 = MultiplyAdd::load_b_half(b);
    __m256i b1;
    if constexpr (kVecs == 2) b1 = MultiplyAdd::load_b_half(b + MultiplyAdd::kBGroupBytes / 2);
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      int32_t word;  // row i's k-group of A', broadcast
      std::memcpy(&word, a + i * kYmmAGroupBytes, sizeof word);
      const __m256i ai = _mm256_set1_epi32(word);
      acc[i][0] = MultiplyAdd::apply(acc[i][0], ai, b0);
      if constexpr (kVecs == 2) acc[i][1] = MultiplyAdd::apply(acc[i][1], ai, b1);
    }
    a += kMr * kYmmAGroupBytes;
    b += MultiplyAdd::kBGroupBytes;
  }
}

template <int kMr, bool kPrefetch, typename MultiplyAdd>
void tile_mx16_ymm_loop(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                        int32_t* c, int64_t ldc, const void* prefetch) {
  __m256i acc[kMr][2];
  accumulate_mx16<kMr, kPrefetch, MultiplyAdd>(kgroups, packed_a, packed_b, col_init, prefetch, acc);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc + 8), acc[i][1]);
  }
}

// The half-width form (tile_half, int8_kernel.h): the first 8 columns of
// the tile, for a last panel of at most 8 columns, whose others are only
// zero padding. With or without the prefetch hint, as the whole tile.
template <int kMr, bool kPrefetch, typename MultiplyAdd>
void tile_mx8_ymm_loop(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                       int32_t* c, int64_t ldc, const void* prefetch) {
  __m256i acc[kMr][1];
  accumulate_mx16<kMr, kPrefetch, MultiplyAdd, 1>(kgroups, packed_a, packed_b, col_init, prefetch, acc);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc), acc[i][0]);
}

template <int kMr, typename MultiplyAdd>
void tile_mx16_ymm_half(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                        int32_t* c, int64_t ldc, const void* prefetch) {
  if (prefetch != nullptr)
    tile_mx8_ymm_loop<kMr, true, MultiplyAdd>(kgroups, packed_a, packed_b, col_init, c, ldc, prefetch);
  else
    tile_mx8_ymm_loop<kMr, false, MultiplyAdd>(kgroups, packed_a, packed_b, col_init, c, ldc, nullptr);
}

// The requantizing form (tile_requant, int8_kernel.h) of the full-height
// tile: the sums plus col_init, requantized in registers to 16 bytes per row
// at y (requant_row_avx2.h, the AVX2 epilogue's arithmetic). A is packed
// (lda 0): these kernels have no form that reads A in place. Spares the
// int32 tile's trip through the driver's buffer and the epilogue call.
template <int kMr, bool kPrefetch, typename MultiplyAdd>
void tile_mx16_ymm_requant_loop(int64_t kgroups, const void* packed_a, const void* packed_b,
                                const int32_t* col_init, const RequantParams& rq, unsigned char* y, int64_t ldy,
                                const void* prefetch) {
  __m256i acc[kMr][2];
  accumulate_mx16<kMr, kPrefetch, MultiplyAdd>(kgroups, packed_a, packed_b, col_init, prefetch, acc);
  const __m256d lo = _mm256_set1_pd(rq.uint8_output ? 0.0 : -128.0);
  const __m256d hi = _mm256_set1_pd(rq.uint8_output ? 255.0 : 127.0);
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    const __m128i low = requant8_words(acc[i][0], rq.multiplier, rq.y_zero_point, lo, hi, rq.bounded, rq.exact_product);
    const __m128i high =
        requant8_words(acc[i][1], rq.multiplier + 8, rq.y_zero_point + 8, lo, hi, rq.bounded, rq.exact_product);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i * ldy), words_to_bytes(low, high, rq.uint8_output));
  }
}

// The requantizing tile function (Int8TileRequantFn), likewise.
template <int kMr, typename MultiplyAdd>
void tile_mx16_ymm_requant(int64_t kgroups, const void* a, int64_t /*lda: always 0, packed A*/,
                           uint8_t /*a_flip: unused with packed A*/, const void* packed_b,
                           const int32_t* col_init, const RequantParams& rq, void* y, int64_t ldy,
                           const void* prefetch) {
  auto* out = static_cast<unsigned char*>(y);
  if (prefetch != nullptr)
    tile_mx16_ymm_requant_loop<kMr, true, MultiplyAdd>(kgroups, a, packed_b, col_init, rq, out, ldy, prefetch);
  else
    tile_mx16_ymm_requant_loop<kMr, false, MultiplyAdd>(kgroups, a, packed_b, col_init, rq, out, ldy, nullptr);
}

// The tile function (Int8TileFn): the loop with or without the prefetch hint.
template <int kMr, typename MultiplyAdd>
void tile_mx16_ymm(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init, int32_t* c,
                   int64_t ldc, const void* prefetch) {
  if (prefetch != nullptr)
    tile_mx16_ymm_loop<kMr, true, MultiplyAdd>(kgroups, packed_a, packed_b, col_init, c, ldc, prefetch);
  else
    tile_mx16_ymm_loop<kMr, false, MultiplyAdd>(kgroups, packed_a, packed_b, col_init, c, ldc, nullptr);
}

// The five kernels a ymm file builds over its one B packing (tile_set_mx16.h),
// named `names` (6, 5, 4, 3, 2 and 1 rows).
template <typename MultiplyAdd>
constexpr Mx16TileKernels ymm_tile_kernels(const char* const (&names)[6], Isa isa, int kr, Widening widening) {
  return {{names[0], isa, 6, kYmmTileCols, kr, widening, tile_mx16_ymm<6, MultiplyAdd>, nullptr, nullptr,
           tile_mx16_ymm_requant<6, MultiplyAdd>, tile_mx16_ymm_half<6, MultiplyAdd>},
          {names[1], isa, 5, kYmmTileCols, kr, widening, tile_mx16_ymm<5, MultiplyAdd>, nullptr, nullptr,
           tile_mx16_ymm_requant<5, MultiplyAdd>},
          {names[2], isa, 4, kYmmTileCols, kr, widening, tile_mx16_ymm<4, MultiplyAdd>, nullptr, nullptr,
           tile_mx16_ymm_requant<4, MultiplyAdd>},
          {names[3], isa, 3, kYmmTileCols, kr, widening, tile_mx16_ymm<3, MultiplyAdd>, nullptr, nullptr,
           tile_mx16_ymm_requant<3, MultiplyAdd>},
          {names[4], isa, 2, kYmmTileCols, kr, widening, tile_mx16_ymm<2, MultiplyAdd>, nullptr, nullptr,
           tile_mx16_ymm_requant<2, MultiplyAdd>},
          {names[5], isa, 1, kYmmTileCols, kr, widening, tile_mx16_ymm<1, MultiplyAdd>, nullptr, nullptr,
           tile_mx16_ymm_requant<1, MultiplyAdd>}};
}

}  // namespace
}  // namespace qmatmul::kernels
