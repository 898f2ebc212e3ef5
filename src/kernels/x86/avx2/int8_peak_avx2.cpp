// Measuring loops for the int8 peak of a CPU without AVX-512 VNNI, not
// kernels: 12 independent sums on ymm registers, with nothing loaded or
// stored, so that they run as fast as one core issues the instructions.
// Such a CPU has two ways to multiply-add bytes, and `qmatmul bench` takes
// the faster as the machine's int8 peak (%peak; tools/cmd_bench.cpp):
//
//  * saturating: vpmaddubsw (u8 x s8 pairs summed into int16, saturating),
//    vpmaddwd by int16 ones into int32, vpaddd: 32 multiply-adds per chain
//    step. The usual AVX2 int8 method, oneDNN's and ONNX Runtime's, and not
//    exact (255 * 127 * 2 does not fit in int16).
//  * exact: this library's AVX2 kernel's mix (int8_tile_avx2.cpp), two
//    vpmaddwd on int16 operands, each with its vpaddd: the same 32.
//
// Every operand is 1, so each step adds 4 to lane 0 of each chain; the loops
// return the sum of lane 0 over the chains, which tells the caller that
// every instruction ran. Measured on Zen 1 (bench/bench_avx2_multiply_mix
// has the same mixes): the two rates are equal, one multiply per cycle;
// on Zen 5 the exact mix runs at about 0.9 of the other.
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AVX2__)

#include <cstdint>

namespace qmatmul::kernels {
namespace {

static_assert(kAvx2PeakChains == 12, "the asm below names 12 chains");
static_assert(kAvx2PeakSumPerIteration == 48, "12 chains x 4 in lane 0");

// ymm0-11: the chains; ymm12, ymm15: products; ymm13: int16 ones; ymm14:
// byte ones (the exact loop reads ymm13 for both of its operands).
#define QM_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define QM_ZERO(i) "vpxor %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
#define QM_STORE(i) "vmovdqu %%ymm" #i ", " #i "*32(%[out])\n\t"
#define QM_SATURATING(i)                                                               \
  "vpmaddubsw %%ymm14, %%ymm14, %%ymm12\n\tvpmaddwd %%ymm12, %%ymm13, %%ymm12\n\t" \
  "vpaddd %%ymm12, %%ymm" #i ", %%ymm" #i "\n\t"
#define QM_EXACT(i)                                                                                       \
  "vpmaddwd %%ymm13, %%ymm13, %%ymm12\n\tvpaddd %%ymm12, %%ymm" #i ", %%ymm" #i "\n\t"                 \
  "vpmaddwd %%ymm13, %%ymm13, %%ymm15\n\tvpaddd %%ymm15, %%ymm" #i ", %%ymm" #i "\n\t"
#define QM_CLOBBERS                                                                                            \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
      "xmm13", "xmm14", "xmm15", "cc", "memory"

// The loop body `STEP` for every chain, `iterations` times; lane 0 of each
// chain summed.
#define QM_PEAK_LOOP(STEP)                                                                         \
  int32_t out[kAvx2PeakChains * 8];                                                                \
  const int16_t one16 = 1;                                                                         \
  const int8_t one8 = 1;                                                                           \
  asm volatile("vpbroadcastw %[w], %%ymm13\n\tvpbroadcastb %[b], %%ymm14\n\t" QM_CHAINS(QM_ZERO) \
               "test %[n], %[n]\n\tjle 2f\n\t.p2align 4\n1:\n\t" QM_CHAINS(STEP)                   \
               "dec %[n]\n\tjnz 1b\n2:\n\t" QM_CHAINS(QM_STORE) "vzeroupper\n\t"                    \
               : [n] "+r"(iterations)                                                              \
               : [w] "m"(one16), [b] "m"(one8), [out] "r"(out)                                     \
               : QM_CLOBBERS);                                                                     \
  uint32_t sum = 0;                                                                                \
  for (int c = 0; c < kAvx2PeakChains; ++c) sum += static_cast<uint32_t>(out[c * 8]);              \
  return sum

uint32_t saturating_peak_loop(int64_t iterations) { QM_PEAK_LOOP(QM_SATURATING); }
uint32_t exact_peak_loop(int64_t iterations) { QM_PEAK_LOOP(QM_EXACT); }

#undef QM_PEAK_LOOP
#undef QM_CLOBBERS
#undef QM_EXACT
#undef QM_SATURATING
#undef QM_STORE
#undef QM_ZERO
#undef QM_CHAINS

}  // namespace

Avx2PeakLoops int8_peak_loops_avx2() { return {&saturating_peak_loop, &exact_peak_loop}; }

}  // namespace qmatmul::kernels

#else  // compiled without AVX2: "not compiled"

namespace qmatmul::kernels {
Avx2PeakLoops int8_peak_loops_avx2() { return {}; }
}  // namespace qmatmul::kernels

#endif
