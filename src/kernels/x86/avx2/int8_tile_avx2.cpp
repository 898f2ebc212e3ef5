// The AVX2 int8 microkernel, for x86 CPUs without any VNNI (Haswell to
// Comet Lake, Zen 1 to Zen 3). It must stay exact, so it never uses
// vpmaddubsw: that instruction adds two u8*s8 products in int16 with
// saturation (255*-128*2 = -65280 does not fit). Instead the driver packs
// both operands pre-widened to int16 (widened = true) with k-group 2, and
// vpmaddwd multiplies int16 pairs and adds each pair into an exact int32
// (|a*b| <= 32640, so the pair sum is within +-65280); a vpaddd accumulates,
// wrapping modulo 2^32 like the VNNI kernels.
//
// Tile 6 x 16: 12 accumulators (two ymm of 8 int32 per row), two B vectors,
// one broadcast of A and one product temporary fill the 16 ymm registers.
// Per k-group: 2 B loads, 6 broadcasts, 12 vpmaddwd, 12 vpaddd. The same
// loop with 1, 2 or 4 rows gives the small-M tiles (M = 1..4, LLM decoding),
// and with 1, 2, 4 or 5 rows the last rows of a block (the driver's tail
// tile): they read the same packed B and skip the work on zero-padded rows.
// Packing: NR = 16, KR = 2, int16 (64 bytes of B' per k-group).
//
// The price of exactness, measured on a Zen 5 core: this loop takes about 7
// cycles per k-group (192 MACs), while the inexact vpmaddubsw + vpmaddwd(1)
// + vpaddd loop does 384 MACs in 12. Both issue two multiplies per 32 MACs;
// this one also needs a vpaddd per multiply where that one needs one per
// two, and the adds compete for the same pipes. So about 0.86 of the
// inexact kernel's speed is the ceiling here.
#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVX2__)

#include <immintrin.h>

#include "kernels/x86/col_init_ymm.h"

namespace qmatmul::kernels {
namespace {

constexpr int kNr = 16;  // two ymm of int32 per row
constexpr int kKr = 2;   // one vpmaddwd pair

// Broadcasts one row's k-group (two int16 values of A') as a 32-bit word.
inline __m256i broadcast_a(const int16_t* p) {
  int32_t w;
  std::memcpy(&w, p, sizeof w);
  return _mm256_set1_epi32(w);
}

// MR rows; kPrefetch: touch one line of the driver's prefetch region per k-group.
template <int kMr, bool kPrefetch>
void tile_mx16_avx2_loop(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init, int32_t* c,
                         int64_t ldc, const void* prefetch) {
  const auto* a = static_cast<const int16_t*>(packed_a);
  const auto* b = static_cast<const int16_t*>(packed_b);

  __m256i acc[kMr][2];
  init_acc_ymm<kMr>(col_init, acc);

  const auto* pf = static_cast<const char*>(prefetch);
  for (int64_t g = 0; g < kgroups; ++g) {
    if constexpr (kPrefetch) _mm_prefetch(pf + g * kPrefetchBytesPerKgroup, _MM_HINT_T0);
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const __m256i ai = broadcast_a(a + i * kKr);
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(ai, b0));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(ai, b1));
    }
    a += kMr * kKr;
    b += kNr * kKr;
  }

#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc + 8), acc[i][1]);
  }
}

template <int kMr>
void tile_mx16_avx2(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                    int32_t* c, int64_t ldc, const void* prefetch) {
  if (prefetch != nullptr)
    tile_mx16_avx2_loop<kMr, true>(kgroups, packed_a, packed_b, col_init, c, ldc, prefetch);
  else
    tile_mx16_avx2_loop<kMr, false>(kgroups, packed_a, packed_b, col_init, c, ldc, nullptr);
}

const Int8GemmKernel k6x16 = {"u8s8_6x16c2_int16__avx2", Isa::Avx2, 6, kNr, kKr, true, tile_mx16_avx2<6>};
const Int8GemmKernel k5x16 = {"u8s8_5x16c2_int16__avx2", Isa::Avx2, 5, kNr, kKr, true, tile_mx16_avx2<5>};
const Int8GemmKernel k4x16 = {"u8s8_4x16c2_int16__avx2", Isa::Avx2, 4, kNr, kKr, true, tile_mx16_avx2<4>};
const Int8GemmKernel k2x16 = {"u8s8_2x16c2_int16__avx2", Isa::Avx2, 2, kNr, kKr, true, tile_mx16_avx2<2>};
const Int8GemmKernel k1x16 = {"u8s8_1x16c2_int16__avx2", Isa::Avx2, 1, kNr, kKr, true, tile_mx16_avx2<1>};

}  // namespace

const Int8GemmKernel* int8_kernel_avx2() { return &k6x16; }
const Int8GemmKernel* int8_kernel_avx2_small_m() { return &k4x16; }

const Int8GemmKernel* int8_kernel_avx2_small_m_for(int m) {
  switch (m) {
    case 1: return &k1x16;
    case 2: return &k2x16;
    case 3:
    case 4: return &k4x16;
    case 5: return &k5x16;
    default: return nullptr;
  }
}

}  // namespace qmatmul::kernels

#else  // compiled without AVX2: the getter reports "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avx2() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx2_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx2_small_m_for(int) { return nullptr; }
}  // namespace qmatmul::kernels

#endif
