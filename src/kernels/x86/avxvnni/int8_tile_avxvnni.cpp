// The AVX-VNNI int8 microkernel: for CPUs with the VEX-encoded vpdpbusd but
// no AVX-512 (Alder Lake / Raptor Lake / Arrow Lake cores, Zen 5 when
// AVX-512 is off). Only 16 ymm registers exist there, so the tile is the
// classic 6 x 16: 12 accumulators (two ymm of 8 int32 per row), two B
// vectors and one broadcast of A. Each k-group of four bytes is one
// vpdpbusd per accumulator: four u8 values of A' broadcast to all lanes
// times four s8 values of B' per column, summed into that column's int32
// lane (wrapping, never saturating: not vpdpbusds).
//
// The same loop with 1, 2 or 4 rows gives the small-M tiles for M = 1..4
// (LLM decoding), and with 1, 2, 4 or 5 rows the last rows of a block (the
// driver's tail tile): they read the same packed B and skip the work on
// zero-padded rows.
//
// Packing: NR = 16, KR = 4, u8/s8 bytes (widened = false); a packed B panel
// is 64 bytes per k-group, so 32-byte alignment keeps every load in one line.
#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVXVNNI__) && defined(__AVX2__)

#include <immintrin.h>

#include "kernels/x86/col_init_ymm.h"

namespace qmatmul::kernels {
namespace {

constexpr int kNr = 16;  // two ymm of int32 per row
constexpr int kKr = 4;   // one vpdpbusd k-group

inline __m256i broadcast_a(const uint8_t* p) {
  int32_t w;
  std::memcpy(&w, p, sizeof w);
  return _mm256_set1_epi32(w);
}

// MR rows; kPrefetch: touch one line of the driver's prefetch region per k-group.
template <int kMr, bool kPrefetch>
void tile_mx16_avxvnni_loop(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                            int32_t* c, int64_t ldc, const void* prefetch) {
  const auto* a = static_cast<const uint8_t*>(packed_a);
  const auto* b = static_cast<const int8_t*>(packed_b);

  __m256i acc[kMr][2];
  init_acc_ymm<kMr>(col_init, acc);

  const auto* pf = static_cast<const char*>(prefetch);
  for (int64_t g = 0; g < kgroups; ++g) {
    if constexpr (kPrefetch) _mm_prefetch(pf + g * kPrefetchBytesPerKgroup, _MM_HINT_T0);
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32));
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const __m256i ai = broadcast_a(a + i * kKr);
      acc[i][0] = _mm256_dpbusd_avx_epi32(acc[i][0], ai, b0);
      acc[i][1] = _mm256_dpbusd_avx_epi32(acc[i][1], ai, b1);
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
void tile_mx16_avxvnni(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init,
                       int32_t* c, int64_t ldc, const void* prefetch) {
  if (prefetch != nullptr)
    tile_mx16_avxvnni_loop<kMr, true>(kgroups, packed_a, packed_b, col_init, c, ldc, prefetch);
  else
    tile_mx16_avxvnni_loop<kMr, false>(kgroups, packed_a, packed_b, col_init, c, ldc, nullptr);
}

const Int8GemmKernel k6x16 = {"u8s8_6x16c4__avxvnni", Isa::AvxVnni, 6, kNr, kKr, false, tile_mx16_avxvnni<6>};
const Int8GemmKernel k5x16 = {"u8s8_5x16c4__avxvnni", Isa::AvxVnni, 5, kNr, kKr, false, tile_mx16_avxvnni<5>};
const Int8GemmKernel k4x16 = {"u8s8_4x16c4__avxvnni", Isa::AvxVnni, 4, kNr, kKr, false, tile_mx16_avxvnni<4>};
const Int8GemmKernel k2x16 = {"u8s8_2x16c4__avxvnni", Isa::AvxVnni, 2, kNr, kKr, false, tile_mx16_avxvnni<2>};
const Int8GemmKernel k1x16 = {"u8s8_1x16c4__avxvnni", Isa::AvxVnni, 1, kNr, kKr, false, tile_mx16_avxvnni<1>};

}  // namespace

const Int8GemmKernel* int8_kernel_avxvnni() { return &k6x16; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m() { return &k4x16; }

const Int8GemmKernel* int8_kernel_avxvnni_small_m_for(int m) {
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

#else  // compiled without AVX-VNNI: the getter reports "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avxvnni() { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m_for(int) { return nullptr; }
}  // namespace qmatmul::kernels

#endif
