// Google Benchmark microbenchmarks of the public operators, end to end (B
// packing, A packing, kernels, zero-point terms and requantization): the
// library-level counterpart of bench_int8_kernels.cpp, and a quick way to
// track one shape while tuning (`--benchmark_filter='QLinear.*/M:128/'`). The
// side-by-side comparison with oneDNN is `qmatmul bench` (tools/cmd_bench.cpp).
//
//   BM_MatMulInteger/M:/K:/N:/packed:/threads:   u8 x s8 -> s32, a_zero_point 128
//   BM_QLinearU8S8U8/...                          u8 x s8 -> u8, per-tensor scales
//   BM_QLinearS8S8S8/...                          s8 x s8 -> s8
//
// <packed> 1 = B prepacked once with PackedB::pack outside the timed loop,
// 0 = plain B (packed inside every call). Counter GOPS = 2*M*K*N * iterations /
// wall time / 1e9; peak_pct = GOPS against 1050 GOPS per thread (AVX-512 VNNI on Zen 5
// at ~4.1 GHz). Wall-clock time, since the operators run their own threads.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "qmatmul/qmatmul.h"

namespace {

using qmatmul::ElementType;
using qmatmul::Tensor;
using qmatmul::TensorView;

constexpr double kPeakGopsPerCore = 1050.0;

// A few representative shapes: decode, small batch, BERT-base, square.
const int64_t kShapes[][3] = {
    {1, 4096, 4096}, {8, 4096, 4096}, {128, 768, 768}, {128, 4096, 4096}, {512, 1024, 4096},
};

Tensor random_tensor(ElementType type, qmatmul::Shape dims, unsigned seed) {
  Tensor t(type, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  auto* p = static_cast<unsigned char*>(t.raw());
  for (std::size_t i = 0; i < t.byte_size(); ++i) p[i] = static_cast<unsigned char>(byte(rng));
  return t;
}

template <typename T>
Tensor scalar(ElementType type, T value) {
  Tensor t(type, {});
  *t.data<T>() = value;
  return t;
}

struct Problem {
  int64_t m, k, n;
  bool packed;
  int threads;
  explicit Problem(const benchmark::State& state)
      : m(state.range(0)), k(state.range(1)), n(state.range(2)), packed(state.range(3) != 0),
        threads(static_cast<int>(state.range(4))) {}
};

// GOPS and peak_pct as plain counters, from the wall time of the whole timed
// loop (`seconds`; the same clock UseRealTime reports).
void report(benchmark::State& state, const Problem& p, double seconds) {
  const double ops = 2.0 * double(p.m) * double(p.k) * double(p.n) * double(state.iterations());
  const double gops = seconds > 0 ? ops / seconds / 1e9 : 0.0;
  state.counters["GOPS"] = gops;
  state.counters["peak_pct"] = 100.0 * gops / (kPeakGopsPerCore * p.threads);
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_MatMulInteger(benchmark::State& state) {
  const Problem p(state);
  qmatmul::Options opt;
  opt.threads = p.threads;
  const Tensor a = random_tensor(ElementType::Uint8, {p.m, p.k}, 1);
  const Tensor b = random_tensor(ElementType::Int8, {p.k, p.n}, 2);
  const Tensor azp = scalar<uint8_t>(ElementType::Uint8, 128), bzp = scalar<int8_t>(ElementType::Int8, 0);
  Tensor y(ElementType::Int32, {p.m, p.n});
  const qmatmul::PackedB pb = p.packed ? qmatmul::PackedB::pack(b, opt) : qmatmul::PackedB();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (p.packed) {
      qmatmul::matmul_integer(a, pb, azp.view(), bzp.view(), y.mutable_view(), opt);
    } else {
      qmatmul::matmul_integer(a, b, azp.view(), bzp.view(), y.mutable_view(), opt);
    }
    benchmark::DoNotOptimize(y.raw());
    benchmark::ClobberMemory();
  }
  report(state, p, since(start));
}

// QLinearMatMul with A and Y of `type` (uint8 or int8), B int8.
void qlinear(benchmark::State& state, ElementType type) {
  const Problem p(state);
  qmatmul::Options opt;
  opt.threads = p.threads;
  const bool u8 = type == ElementType::Uint8;
  const Tensor a = random_tensor(type, {p.m, p.k}, 1);
  const Tensor b = random_tensor(ElementType::Int8, {p.k, p.n}, 2);
  const Tensor a_scale = scalar<float>(ElementType::Float32, 0.02f);
  const Tensor b_scale = scalar<float>(ElementType::Float32, 0.005f);
  // y spreads over about +-32 quanta: realistic, not saturated.
  const Tensor y_scale =
      scalar<float>(ElementType::Float32, static_cast<float>(0.02 * 0.005 * 74 * 74 * std::sqrt(double(p.k)) / 32));
  const Tensor azp = u8 ? scalar<uint8_t>(type, 128) : scalar<int8_t>(type, 3);
  const Tensor bzp = scalar<int8_t>(ElementType::Int8, 0);
  const Tensor yzp = u8 ? scalar<uint8_t>(type, 128) : scalar<int8_t>(type, 0);
  Tensor y(type, {p.m, p.n});
  const qmatmul::PackedB pb = p.packed ? qmatmul::PackedB::pack(b, opt) : qmatmul::PackedB();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (p.packed) {
      qmatmul::qlinear_matmul(a, a_scale, azp, pb, b_scale, bzp, y_scale, yzp, y.mutable_view(), opt);
    } else {
      qmatmul::qlinear_matmul(a, a_scale, azp, b, b_scale, bzp, y_scale, yzp, y.mutable_view(), opt);
    }
    benchmark::DoNotOptimize(y.raw());
    benchmark::ClobberMemory();
  }
  report(state, p, since(start));
}

void BM_QLinearU8S8U8(benchmark::State& state) { qlinear(state, ElementType::Uint8); }
void BM_QLinearS8S8S8(benchmark::State& state) { qlinear(state, ElementType::Int8); }

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "packed", "threads"});
  for (const auto& s : kShapes) {
    for (int64_t packed : {0, 1}) {
      for (int64_t threads : {1, 2}) b->Args({s[0], s[1], s[2], packed, threads});
    }
  }
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK(BM_MatMulInteger)->Apply(shapes);
BENCHMARK(BM_QLinearU8S8U8)->Apply(shapes);
BENCHMARK(BM_QLinearS8S8S8)->Apply(shapes);

BENCHMARK_MAIN();
