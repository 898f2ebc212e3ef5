// The AVX-VNNI int8 microkernel: for CPUs with the VEX-encoded vpdpbusd but
// no AVX-512 (Alder Lake / Raptor Lake / Arrow Lake cores, Zen 5 when
// AVX-512 is off). Only 16 ymm registers exist there, so the tile is the
// classic 6 x 16: 12 accumulators (two ymm of 8 int32 per row), two B
// vectors and one broadcast of A. Each k-group of four bytes is one
// vpdpbusd per accumulator: four u8 values of A' broadcast to all lanes
// times four s8 values of B' per column, summed into that column's int32
// lane (wrapping, never saturating: not vpdpbusds).
//
// The same loop with 1 to 4 rows gives the small-M tiles for M = 1..4
// (LLM decoding), and with 1 to 5 rows the last rows of a block (the
// driver's tail tile): they read the same packed B and skip the work on
// zero-padded rows.
//
// Packing: NR = 16, KR = 4, u8/s8 bytes (Widening::Bytes); a packed B panel
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

constexpr int kKr = 4;  // one vpdpbusd k-group

// Four u8 x s8 products per int32 lane, wrapping (vpdpbusd, not vpdpbusds),
// from a k-group of B' as 64 bytes.
struct DotBytes {
  static constexpr int kBGroupBytes = 64;
  static __m256i load_b_half(const unsigned char* b) {  // 8 columns' groups
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  }
  static __m256i apply(__m256i acc, __m256i a, __m256i b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
};

constexpr Mx16TileKernels kKernels = ymm_tile_kernels<DotBytes>(
    {"u8s8_6x16c4__avxvnni", "u8s8_5x16c4__avxvnni", "u8s8_4x16c4__avxvnni",
     "u8s8_3x16c4__avxvnni", "u8s8_2x16c4__avxvnni", "u8s8_1x16c4__avxvnni"},
    Isa::AvxVnni, kKr, Widening::Bytes);

}  // namespace

const Int8GemmKernel* int8_kernel_avxvnni() { return &kKernels.rows6; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m() { return &kKernels.rows4; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m_for(int m) { return kKernels.for_rows(m); }

}  // namespace qmatmul::kernels

#else  // compiled without AVX-VNNI: the getter reports "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avxvnni() { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avxvnni_small_m_for(int) { return nullptr; }
}  // namespace qmatmul::kernels

#endif
