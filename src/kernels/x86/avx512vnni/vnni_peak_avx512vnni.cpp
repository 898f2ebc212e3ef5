// A measuring loop for the machine's int8 peak, not a kernel: vpdpbusd on
// zmm registers in 16 independent chains, with nothing loaded or stored, so
// that it runs as fast as one core can issue them. That rate depends on the
// CPU generation (Zen 5 issues two 512-bit vpdpbusd per cycle; Zen 4 one,
// since its 512-bit operations run on 256-bit units) and on the clock, which
// a VM does not report. `qmatmul bench` reports %peak against what this loop
// measures rather than against a figure for one CPU (tools/cmd_bench.cpp).
// 16 chains cover a vpdpbusd latency of up to 8 cycles at two per cycle.
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__)
// GCC 12 reports its own _mm512_undefined_* helpers (self-initialised) as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace qmatmul::kernels {
namespace {

// Every vpdpbusd adds 1 * 1 four times to each lane of its chain, so after n
// iterations lane 0 of each of the 16 chains holds 4n: returns their sum,
// 64n modulo 2^32, which tells the caller that every instruction ran.
uint32_t vnni_peak_loop(int64_t iterations) {
  static_assert(kVnniPeakChains == 16, "the asm below names 16 chains");
  static_assert(kVnniPeakSumPerIteration == 64, "16 chains x 4 products of 1 x 1 in lane 0");
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i c[kVnniPeakChains];
  // The sums start at zero in the asm itself (write-only operands: an asm
  // takes at most 30, and in-out ones count twice).
#define QM_ZERO(i) "vpxord %[c" #i "], %[c" #i "], %[c" #i "]\n\t"
#define QM_DP(i) "vpdpbusd %[o], %[o], %[c" #i "]\n\t"
  asm volatile(
      QM_ZERO(0) QM_ZERO(1) QM_ZERO(2) QM_ZERO(3) QM_ZERO(4) QM_ZERO(5) QM_ZERO(6) QM_ZERO(7)          //
      QM_ZERO(8) QM_ZERO(9) QM_ZERO(10) QM_ZERO(11) QM_ZERO(12) QM_ZERO(13) QM_ZERO(14) QM_ZERO(15)  //
      "test %[n], %[n]\n\tjle 2f\n\t.p2align 4\n1:\n\t"                                               //
      QM_DP(0) QM_DP(1) QM_DP(2) QM_DP(3) QM_DP(4) QM_DP(5) QM_DP(6) QM_DP(7)                          //
      QM_DP(8) QM_DP(9) QM_DP(10) QM_DP(11) QM_DP(12) QM_DP(13) QM_DP(14) QM_DP(15)                    //
      "dec %[n]\n\tjnz 1b\n2:\n\t"
      : [c0] "=&v"(c[0]), [c1] "=&v"(c[1]), [c2] "=&v"(c[2]), [c3] "=&v"(c[3]), [c4] "=&v"(c[4]),
        [c5] "=&v"(c[5]), [c6] "=&v"(c[6]), [c7] "=&v"(c[7]), [c8] "=&v"(c[8]), [c9] "=&v"(c[9]),
        [c10] "=&v"(c[10]), [c11] "=&v"(c[11]), [c12] "=&v"(c[12]), [c13] "=&v"(c[13]), [c14] "=&v"(c[14]),
        [c15] "=&v"(c[15]), [n] "+r"(iterations)
      : [o] "v"(ones)
      : "cc");
#undef QM_ZERO
#undef QM_DP
  uint32_t sum = 0;
  for (const __m512i& x : c) sum += static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(x)));
  return sum;
}

}  // namespace

Int8PeakLoop vnni_peak_loop_avx512vnni() { return &vnni_peak_loop; }

}  // namespace qmatmul::kernels

#else

namespace qmatmul::kernels {
Int8PeakLoop vnni_peak_loop_avx512vnni() { return nullptr; }
}  // namespace qmatmul::kernels

#endif
