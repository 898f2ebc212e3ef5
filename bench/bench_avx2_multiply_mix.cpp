// What limits the AVX2 int8 kernel against a saturating one: the rate at
// which one core issues each method's multiply-add instructions, with
// nothing loaded or stored (registers only, 12 independent accumulators as
// in the 6 x 16 tile). Counters report GOPS = 2 * multiply-adds / time.
//
//   Avx2MultiplyMix/exact_vpmaddwd_vpaddd
//       ours (u8s8_6x16c2_int16__avx2): A and B widened to int16, one
//       vpmaddwd (8 lanes x 2 products) and one vpaddd into the int32 sums
//       per 16 multiply-adds. Every product and pair sum fits, so it is exact.
//       This and the next are the library's own int8 peak probes
//       (kernels::int8_peak_loops_avx2, which `qmatmul bench` uses for %peak).
//   Avx2MultiplyMix/saturating_vpmaddubsw_vpmaddwd_vpaddd
//       the usual AVX2 int8 method: vpmaddubsw (16 lanes x 2 byte products,
//       summed into int16 with saturation: 255 * 127 * 2 does not fit),
//       vpmaddwd by ones into int32, vpaddd, per 32 multiply-adds. Not
//       exact, and what oneDNN's and ONNX Runtime's AVX2 paths run.
//   Avx2MultiplyMix/vpmaddwd_only
//       the multiplies of the first without the adds.
//
// Both methods need two multiply instructions per 32 multiply-adds; the
// exact one needs two adds where the other needs one. On Zen 5 the adds
// compete with the multiplies for the vector pipes, and the exact mix
// issues about 0.9x the multiply-adds per cycle of the saturating one: the
// ceiling of `QMATMUL_ISA=avx2` against oneDNN capped to AVX2 on large
// shapes, where both kernels run near their mix's rate.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "kernels/x86/x86_kernels_extra.h"

namespace {

#if defined(__x86_64__)
// The multiplies alone, 12 independent vpmaddwd on registers a step (ymm13:
// int16 ones); the two mixes come from the library.
#define QM_TWELVE(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define QM_MADD_ONLY(i) "vpmaddwd %%ymm13, %%ymm13, %%ymm" #i "\n\t"
uint32_t madd_only_loop(int64_t iterations) {
  asm volatile(
      "vpcmpeqw %%ymm13, %%ymm13, %%ymm13\n\tvpsrlw $15, %%ymm13, %%ymm13\n\t"
      "1:\n\t" QM_TWELVE(QM_MADD_ONLY) "dec %0\n\tjnz 1b\n\tvzeroupper"
      : "+r"(iterations)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm13",
        "cc");
  return 0;
}
#undef QM_MADD_ONLY
#undef QM_TWELVE

void bm_mix(benchmark::State& state, qmatmul::kernels::Int8PeakLoop loop, double macs_per_iteration) {
  constexpr int64_t kIterations = 4096;
  for (auto _ : state) benchmark::DoNotOptimize(loop(kIterations));
  state.counters["GOPS"] = benchmark::Counter(
      2.0 * macs_per_iteration * kIterations * 1e-9 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
#endif

}  // namespace

int main(int argc, char** argv) {
#if defined(__x86_64__)
  const qmatmul::kernels::Avx2PeakLoops loops = qmatmul::kernels::int8_peak_loops_avx2();
  if (__builtin_cpu_supports("avx2") && loops.saturating != nullptr) {
    // Multiply-adds per iteration: the probes' kAvx2PeakOpsPerIteration / 2;
    // the multiplies alone, 12 sums x 8 lanes x 2.
    constexpr double kProbeMacs = qmatmul::kernels::kAvx2PeakOpsPerIteration / 2;
    benchmark::RegisterBenchmark("Avx2MultiplyMix/exact_vpmaddwd_vpaddd", bm_mix, loops.exact, kProbeMacs);
    benchmark::RegisterBenchmark("Avx2MultiplyMix/saturating_vpmaddubsw_vpmaddwd_vpaddd", bm_mix, loops.saturating,
                                 kProbeMacs);
    benchmark::RegisterBenchmark("Avx2MultiplyMix/vpmaddwd_only", bm_mix, madd_only_loop, 12.0 * 16);
  }
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
