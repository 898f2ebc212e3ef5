// Extra x86 kernel getters beyond the one-per-ISA set in kernels/int8_kernel.h.
//
// The AVX2 kernels share one B packing as well (NR = 16, KR = 2, int16): the
// 6x16 main tile and its 1, 2, 4 and 5-row variants (M = 1..4 and the last
// rows of a block); so do the AVX-VNNI ones (NR = 16, KR = 4, bytes), with
// the same tile heights.
//
// All AVX-512 VNNI kernels share one B packing (NR = 32, KR = 4, u8/s8 bytes),
// so a B panel packed once serves the main 8x32 kernel and every small-M
// kernel below. The small-M kernels are for M = 1..4 (LLM decoding), where the
// work is bound by streaming B: they split the k loop over several
// accumulator sets so that even one row keeps the vpdpbusd pipes busy.
#pragma once

#include <cstdint>

#include "kernels/int8_kernel.h"

namespace qmatmul::kernels {

// Declared in kernels/int8_kernel.h as well: the 6 x 32 kernel
// ("u8s8_6x32c4__avx512vnni"), right for any M <= 6.
const Int8GemmKernel* int8_kernel_avx512vnni_small_m();

// The smallest AVX-512 VNNI kernel with mr >= m, for m in 1..7: one tile per
// row count, m x 32 (all NR = 32, KR = 4, the same B packing as
// int8_kernel_avx512vnni()). nullptr for other m, and when the file was
// compiled without AVX-512 VNNI. With M = 1 and B in L2, 1x32 streams B
// about 1.6x faster than 4x32 (no work on zero-padded rows). The dispatch
// takes the 1..6-row ones for M <= 6; the 7-row one runs the last 7 rows of
// a block as the driver's tail tile (kernels::int8_tail_kernel_for), and so
// M = 7 too: its one block is a single tail tile.
const Int8GemmKernel* int8_kernel_avx512vnni_small_m_for(int m);

// The AVX2 4 x 16 kernel ("u8s8_4x16c2_int16__avx2"), right for any M <= 4,
// and the smallest AVX2 kernel with mr >= m for m in 1..5: 1 -> 1x16,
// 2 -> 2x16, 3 and 4 -> 4x16, 5 -> 5x16 (the B packing of
// int8_kernel_avx2()); nullptr for other m, and when the file was compiled
// without AVX2. The dispatch takes them for M <= 4; the 5-row one runs as
// a tail tile (M = 5 too, as above for 7 rows on AVX-512 VNNI).
const Int8GemmKernel* int8_kernel_avx2_small_m();
const Int8GemmKernel* int8_kernel_avx2_small_m_for(int m);

// The same for AVX-VNNI (the B packing of int8_kernel_avxvnni(): NR = 16,
// KR = 4, bytes): "u8s8_4x16c4__avxvnni" for any M <= 4, and 1 -> 1x16,
// 2 -> 2x16, 3 and 4 -> 4x16, 5 -> 5x16 (a tail tile, as for AVX2).
const Int8GemmKernel* int8_kernel_avxvnni_small_m();
const Int8GemmKernel* int8_kernel_avxvnni_small_m_for(int m);

// The same for AVX-512 BW without VNNI (int8_tile_avx512bw.cpp: the AVX2
// kernels' packings, NR = 16, KR = 2, int16, in zmm): "u8s8_4x16c2_int16__avx512bw"
// for any M <= 4, and 1 -> 1x16, 2 -> 2x16, 3 and 4 -> 4x16, 5 -> 5x16.
const Int8GemmKernel* int8_kernel_avx512bw_small_m();
const Int8GemmKernel* int8_kernel_avx512bw_small_m_for(int m);

// The AMX 16 x 32 kernel ("u8s8_16x32c4__amx", the B packing and A k-group
// of int8_kernel_amx()); nullptr when compiled without AMX.
const Int8GemmKernel* int8_kernel_amx_16_rows();

// The int8 peak probe (vnni_peak_avx512vnni.cpp): runs `iterations` times
// kVnniPeakChains independent vpdpbusd zmm on registers only, and returns
// kVnniPeakSumPerIteration * iterations modulo 2^32 (a check that it ran).
// nullptr when that file was compiled without AVX-512 VNNI; the caller
// checks that the CPU runs it (cpu::features().avx512vnni). Int8PeakLoop
// is the type of every peak probe, this one and the AVX2 ones below.
using Int8PeakLoop = uint32_t (*)(int64_t iterations);
inline constexpr int kVnniPeakChains = 16;
inline constexpr int64_t kVnniPeakOpsPerIteration = kVnniPeakChains * 16 * 4 * 2;  // x lanes x MACs x 2
inline constexpr uint32_t kVnniPeakSumPerIteration = kVnniPeakChains * 4;  // lane 0 of each chain: 1 x 1, 4 times
Int8PeakLoop vnni_peak_loop_avx512vnni();

// The int8 peak probes for CPUs without AVX-512 VNNI (int8_peak_avx2.cpp):
// kAvx2PeakChains independent sums on ymm registers, each step 32 multiply-
// adds of ones, by the saturating method (vpmaddubsw, vpmaddwd by ones,
// vpaddd) or by the exact AVX2 kernel's (two vpmaddwd + vpaddd); each
// returns kAvx2PeakSumPerIteration * iterations modulo 2^32. Both nullptr
// when compiled without AVX2; the caller checks that the CPU runs AVX2.
inline constexpr int kAvx2PeakChains = 12;
inline constexpr int64_t kAvx2PeakOpsPerIteration = kAvx2PeakChains * 32 * 2;  // x MACs x 2
inline constexpr uint32_t kAvx2PeakSumPerIteration = kAvx2PeakChains * 4;  // lane 0 of each chain: 4 a step
struct Avx2PeakLoops {
  Int8PeakLoop saturating = nullptr, exact = nullptr;
};
Avx2PeakLoops int8_peak_loops_avx2();

}  // namespace qmatmul::kernels
