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

#include "kernels/x86/tile_mx16_ymm.h"

namespace qmatmul::kernels {
namespace {

constexpr int kNr = kYmmTileCols;
constexpr int kKr = 4;  // one vpdpbusd k-group

// Four u8 x s8 products per int32 lane, wrapping (vpdpbusd, not vpdpbusds).
struct DotBytes {
  static __m256i apply(__m256i acc, __m256i a, __m256i b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
};

template <int kMr>
constexpr Int8TileFn tile_mx16_avxvnni = tile_mx16_ymm<kMr, DotBytes>;

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
