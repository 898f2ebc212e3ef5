// Google Benchmark of float8 QLinearMatMul-21 through the public API:
// float8e4m3fn x float8e4m3fn -> float8e4m3fn with per-tensor scales and zero
// points (the acceptance shapes of the float8 work), plus e5m2 weights and a
// uint8 x float8 mixed case. Counter GOPS = 2*M*K*N * iterations / wall time
// / 1e9 (wall-clock: the operator runs its own threads). The path is the one
// the library picks (AVX-512 when the int8 dispatch chose avx512vnni; force
// the portable one with QMATMUL_ISA=avx2 or portable).
//
//   BM_Float8E4M3/M:/K:/N:/threads:
//   BM_Float8E4M3xE5M2/...     a e4m3fn, b e5m2, y e4m3fn
//   BM_Uint8xE4M3/...          a uint8, b e4m3fn, y uint8
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "qmatmul/qmatmul.h"

namespace {

using qmatmul::ElementType;
using qmatmul::Tensor;

// Finite codes only (no NaN, no Inf), uniform over the code space.
Tensor random_codes(ElementType type, qmatmul::Shape dims, unsigned seed) {
  Tensor t(type, std::move(dims));
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(t.raw());
  for (std::size_t i = 0; i < t.byte_size(); ++i) {
    uint8_t c = static_cast<uint8_t>(rng());
    if (type == ElementType::Float8E4M3FN && (c & 0x7F) == 0x7F) c ^= 1;       // NaN -> finite
    if (type == ElementType::Float8E5M2 && (c & 0x7C) == 0x7C) c &= 0xF3;      // Inf/NaN -> finite
    p[i] = c;
  }
  return t;
}

Tensor scalar_f32(float v) {
  Tensor t(ElementType::Float32, {});
  *t.data<float>() = v;
  return t;
}

void run(benchmark::State& state, ElementType ta, ElementType tb, ElementType ty) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  qmatmul::Options opt;
  opt.threads = static_cast<int>(state.range(3));
  const Tensor a = random_codes(ta, {m, k}, 1), b = random_codes(tb, {k, n}, 2);
  const Tensor za(ta, {}), zb(tb, {}), zy(ty, {});
  const Tensor as = scalar_f32(0.02f), bs = scalar_f32(0.03f), ys = scalar_f32(1.5f);
  Tensor y(ty, {m, n});
  for (auto _ : state) {
    qmatmul::qlinear_matmul(a, as, za, b, bs, zb, ys, zy, y.mutable_view(), opt);
    benchmark::DoNotOptimize(y.raw());
    benchmark::ClobberMemory();
  }
  state.counters["GOPS"] = benchmark::Counter(2.0 * static_cast<double>(m * k * n) * static_cast<double>(state.iterations()) / 1e9,
                                              benchmark::Counter::kIsRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "threads"});
  const int64_t s[][3] = {{1, 4096, 4096}, {128, 4096, 4096}, {512, 1024, 4096}};
  for (const auto& d : s)
    for (int64_t t : {1, 2}) b->Args({d[0], d[1], d[2], t});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void BM_Float8E4M3(benchmark::State& state) {
  run(state, ElementType::Float8E4M3FN, ElementType::Float8E4M3FN, ElementType::Float8E4M3FN);
}
void BM_Float8E4M3xE5M2(benchmark::State& state) {
  run(state, ElementType::Float8E4M3FN, ElementType::Float8E5M2, ElementType::Float8E4M3FN);
}
void BM_Uint8xE4M3(benchmark::State& state) {
  run(state, ElementType::Uint8, ElementType::Float8E4M3FN, ElementType::Uint8);
}

BENCHMARK(BM_Float8E4M3)->Apply(shapes);
BENCHMARK(BM_Float8E4M3xE5M2)->Apply(shapes);
BENCHMARK(BM_Uint8xE4M3)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
