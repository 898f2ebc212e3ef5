// The AVX2 int8 microkernel, for x86 CPUs without any VNNI (Haswell to
// Comet Lake, Zen 1 to Zen 3). It must stay exact, so it never uses
// vpmaddubsw: that instruction adds two u8*s8 products in int16 with
// saturation (255*-128*2 = -65280 does not fit). Instead both operands are
// multiplied as int16 with k-group 2: the driver packs A' pre-widened, B'
// as byte pairs that the kernel sign-extends as it loads them (vpmovsxbw,
// Widening::Int16A), and vpmaddwd multiplies int16 pairs and adds each pair
// into an exact int32
// (|a*b| <= 32640, so the pair sum is within +-65280); a vpaddd accumulates,
// wrapping modulo 2^32 like the VNNI kernels.
//
// Tile 6 x 16: 12 accumulators (two ymm of 8 int32 per row), two B vectors,
// one broadcast of A and one product temporary fill the 16 ymm registers.
// Per k-group: 2 widening B loads, 6 broadcasts, 12 vpmaddwd, 12 vpaddd. The same
// loop with 1 to 4 rows gives the small-M tiles (M = 1..4, LLM decoding),
// and with 1 to 5 rows the last rows of a block (the driver's tail tile):
// they read the same packed B. Three rows ran the 4-row tile over a zero
// row until the 3-row one was measured against it on Zen 1 (packed B, 3
// interleaved rounds, 1 / 2 threads, MatMulInteger and QLinear u8): 3 x
// 4096 x 4096 1.37-1.43 / 1.23-1.24, 3 x 768 x 768 1.27-1.45 / 1.19-1.23,
// and as a tail, 9 x 4096 x 4096 1.15-1.21 / 1.08, 15 x 4096 x 4096 1.05-
// 1.06 / 1.05-1.06.
// Packing: NR = 16, KR = 2; A' int16, B' bytes (32 bytes per k-group).
//
// Why B as bytes. With few rows the kernel streams B from memory, and B
// packed as int16 (as it was until this layout) doubled the bytes read.
// Measured on Zen 1 (family 23, model 1; AVX2 only), qmatmul bench,
// QLinearMatMul u8, packed B, K = N = 4096, medians of 2 interleaved runs
// of the int16 and byte builds, 1 / 2 threads, GOPS: 1 row 15.6 -> 22.0 /
// 25.1 -> 38.2, 2 rows 27.3 -> 29.8 / 45.0 -> 54.2, 4 rows 35.1 -> 38.0 /
// 63.5 -> 71.2, 6 rows 34.7 -> 41.8 / 67.8 -> 80.1. The widening
// (vpmovsxbw) runs on other ports than vpmaddwd, but it is not free where B
// comes from cache: with packed B, 8 rows (a 6-row tile and a 2-row tail,
// 4 widenings per 16 vpmaddwd) ran 4-11% slower and 7 rows (a 1-row tail,
// 4 per 14) 12-14% slower (MatMulInteger, 4 interleaved runs, 1 / 2
// threads: 44.8 -> 42.9 / 84.6 -> 75.0 and 45.3 -> 39.1 / 81.1 -> 71.3),
// while at 128 rows and more (2 per 12) 3 interleaved runs read within
// their noise (0.95-1.07). Packed weights also take half the memory.
//
// The price of exactness. Both loops issue two multiplies per 32 MACs;
// this one also needs a vpaddd per multiply, where the inexact vpmaddubsw +
// vpmaddwd(1) + vpaddd loop needs one per two. Measured on the project's
// Zen 4 machine (CPUID family 25, model 17) in register-only loops, scaled
// so that 12 independent vpmaddwd take 6 cycles: this loop's k-group (12
// vpmaddwd + 12 dependent vpaddd, 192 MACs) takes 8.0-9.5 cycles, the
// inexact loop does 384 MACs in 12.1-13.5. The vector ALUs retire about 3
// of these ops per cycle whatever the mix, so the exact kernel's ceiling is
// about 0.75 (0.7-0.8) of the inexact one's speed. Other tile shapes (4x16
// with the adds four products behind, 3x32 with B from memory) and A
// pre-broadcast in packing (full loads instead of vpbroadcastd) ran no
// faster. On a Zen 5 machine (family 26) the gap is smaller: register-only
// loops (bench/bench_avx2_multiply_mix.cpp) gave 202 GOPS exact against 229
// inexact, a ceiling of about 0.88; this kernel alone ran 177-197 GOPS from
// L1, and 2048^3 ran as fast at K = 256 and 512 as at 2048 (no blocking
// loss to recover).
#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVX2__)

#include <immintrin.h>

#include "kernels/x86/tile_mx16_ymm.h"

namespace qmatmul::kernels {
namespace {

constexpr int kKr = 2;  // one vpmaddwd pair

// Two int16 products per int32 lane, exact (|a*b| <= 32640), summed with
// wrapping, from a k-group of B' as 32 bytes: columns 0-7's pairs, then
// 8-15's, each sign-extended to int16.
struct MaddInt16Pairs {
  static constexpr int kBGroupBytes = 32;
  static __m256i load_b_half(const unsigned char* b) {  // 8 columns' pairs
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
  }
  static __m256i apply(__m256i acc, __m256i a, __m256i b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }
};

constexpr Mx16TileKernels kKernels = ymm_tile_kernels<MaddInt16Pairs>(
    {"u8s8_6x16c2_int16__avx2", "u8s8_5x16c2_int16__avx2", "u8s8_4x16c2_int16__avx2",
     "u8s8_3x16c2_int16__avx2", "u8s8_2x16c2_int16__avx2", "u8s8_1x16c2_int16__avx2"},
    Isa::Avx2, kKr, Widening::Int16A);

}  // namespace

const Int8GemmKernel* int8_kernel_avx2() { return &kKernels.rows6; }
const Int8GemmKernel* int8_kernel_avx2_small_m() { return &kKernels.rows4; }
const Int8GemmKernel* int8_kernel_avx2_small_m_for(int m) { return kKernels.for_rows(m); }

}  // namespace qmatmul::kernels

#else  // compiled without AVX2: the getter reports "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_avx2() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx2_small_m() { return nullptr; }
const Int8GemmKernel* int8_kernel_avx2_small_m_for(int) { return nullptr; }
}  // namespace qmatmul::kernels

#endif
