// What limits the AVX2 int8 kernel against a saturating one: the rate at
// which one core issues each method's multiply-add instructions, with
// nothing loaded or stored (registers only, 12 independent accumulators as
// in the 6 x 16 tile). Counters report GOPS = 2 * multiply-adds / time.
//
//   Avx2MultiplyMix/exact_vpmaddwd_vpaddd
//       ours (u8s8_6x16c2_int16__avx2): A and B widened to int16, one
//       vpmaddwd (8 lanes x 2 products) and one vpaddd into the int32 sums
//       per 16 multiply-adds. Every product and pair sum fits, so it is exact.
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

namespace {

#if defined(__x86_64__)
#define QM_TWELVE(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
// ymm0-11: the sums; ymm12: scratch; ymm13: ones (int16); ymm14, ymm15: the operands.
#define QM_EXACT(i) "vpmaddwd %%ymm14, %%ymm15, %%ymm12\n\tvpaddd %%ymm12, %%ymm" #i ", %%ymm" #i "\n\t"
#define QM_MADD_ONLY(i) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #i "\n\t"
#define QM_SATURATING(i)                                                                    \
  "vpmaddubsw %%ymm14, %%ymm15, %%ymm12\n\tvpmaddwd %%ymm12, %%ymm13, %%ymm12\n\t" \
  "vpaddd %%ymm12, %%ymm" #i ", %%ymm" #i "\n\t"
#define QM_CLOBBERS                                                                                            \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
      "xmm13", "xmm14", "xmm15"
#define QM_MIX_LOOP(name, BODY)                                                                      \
  __attribute__((noinline)) void name(int64_t iterations) {                                         \
    asm volatile(                                                                                    \
        "vpxor %%ymm0, %%ymm0, %%ymm0\n\t"                                                           \
        "vpcmpeqw %%ymm13, %%ymm13, %%ymm13\n\tvpsrlw $15, %%ymm13, %%ymm13\n\t"                     \
        "vmovdqa %%ymm13, %%ymm14\n\tvmovdqa %%ymm13, %%ymm15\n\t"                                   \
        "1:\n\t" QM_TWELVE(BODY) "dec %0\n\tjnz 1b\n\tvzeroupper"                                    \
        : "+r"(iterations)                                                                           \
        :                                                                                            \
        : QM_CLOBBERS, "cc");                                                                        \
  }

QM_MIX_LOOP(exact_loop, QM_EXACT)
QM_MIX_LOOP(madd_only_loop, QM_MADD_ONLY)
QM_MIX_LOOP(saturating_loop, QM_SATURATING)

void bm_mix(benchmark::State& state, void (*loop)(int64_t), double macs_per_iteration) {
  constexpr int64_t kIterations = 4096;
  for (auto _ : state) loop(kIterations);
  state.counters["GOPS"] = benchmark::Counter(
      2.0 * macs_per_iteration * kIterations * 1e-9 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
#endif

}  // namespace

int main(int argc, char** argv) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) {
    // Multiply-adds per iteration: 12 sums x 8 lanes x 2 (vpmaddwd), or
    // x 16 lanes x 2 (vpmaddubsw).
    benchmark::RegisterBenchmark("Avx2MultiplyMix/exact_vpmaddwd_vpaddd", bm_mix, exact_loop, 12.0 * 16);
    benchmark::RegisterBenchmark("Avx2MultiplyMix/saturating_vpmaddubsw_vpmaddwd_vpaddd", bm_mix, saturating_loop,
                                 12.0 * 32);
    benchmark::RegisterBenchmark("Avx2MultiplyMix/vpmaddwd_only", bm_mix, madd_only_loop, 12.0 * 16);
  }
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
