// Microbenchmarks of the int8 tile kernels alone, without packing or the
// driver: how close each kernel gets to its ISA's multiply-add peak, and how
// fast the small-M kernels stream B. Every kernel compiled in and runnable on
// this CPU is registered; counters report GOPS = 2 * MR * NR * K / time.
//
//   Int8Tile/<kernel>/<kgroups>    one tile's packed A and B, reused: L1 (64,
//                                  256 k-groups) or L2 (2048) resident
//   Int8Panel/<kernel>             as the driver runs it: one 256-k-group B
//                                  panel in L1, a 192-row block of A from L2
//   Int8StreamB/<kernel>/<KiB>     small M: one A tile against consecutive B
//                                  panels totalling <KiB> (L2 or DRAM), as in
//                                  LLM decoding; also reports GB/s of B
//   Int8StreamBPair/<kernel>/<KiB> the same two panels per call (tile_pair),
//                                  as the driver runs packed B with few rows
//   RawBStream/<kernel>/<KiB>      M <= 16 against an unpacked row-major B
//                                  of <KiB> (K = 4096), read in place
//   RawBReadOnly/<cols>/<KiB>      no arithmetic: B's lines loaded in the
//                                  raw-B kernels' order (column blocks of
//                                  <cols>, 16 rows a step), the rate that
//                                  order of reads gets from L3 or memory
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gemm/raw_b_small_m.h"
#include "kernels/dispatch.h"
#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

namespace {

using qmatmul::kernels::Int8GemmKernel;
using qmatmul::kernels::Isa;

// Whether this CPU runs `isa`: the library's own answer (the dispatch
// table's "can the CPU run it" column), so the benchmark registers exactly
// the kernels that qmatmul could choose here, whatever QMATMUL_ISA says.
bool cpu_runs(Isa isa) { return qmatmul::kernels::cpu_supports(isa); }

// A 64-byte aligned buffer of small nonzero bytes (the driver's buffers are
// 64-byte aligned too; misaligned B panels cost up to 1.7x on Zen 5).
struct Aligned {
  explicit Aligned(size_t bytes) : size((bytes + 63) / 64 * 64) {
    data = static_cast<uint8_t*>(std::aligned_alloc(64, size));
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<uint8_t>((i * 37 + 11) % 97);
  }
  ~Aligned() { std::free(data); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  size_t size;
  uint8_t* data;
};

size_t a_bytes(const Int8GemmKernel& k, int64_t kgroups) {
  const int64_t akr = a_kgroup(k), a_groups = (kgroups * k.kr + akr - 1) / akr;  // A's own k-group (AMX)
  return static_cast<size_t>(a_groups * k.mr * akr * a_element_bytes(k));
}
size_t b_bytes(const Int8GemmKernel& k, int64_t kgroups) {
  return static_cast<size_t>(kgroups * k.nr * k.kr * b_element_bytes(k));
}
double tile_ops(const Int8GemmKernel& k, int64_t kgroups) {
  return 2.0 * k.mr * k.nr * k.kr * static_cast<double>(kgroups);
}

void set_gops(benchmark::State& state, double ops_per_iter) {
  state.counters["GOPS"] = benchmark::Counter(ops_per_iter * 1e-9 * static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

void bm_tile(benchmark::State& state, const Int8GemmKernel* k) {
  begin_tile_calls(*k);
  const int64_t kgroups = state.range(0);
  Aligned a(a_bytes(*k, kgroups)), b(b_bytes(*k, kgroups));
  std::vector<int32_t> c(static_cast<size_t>(k->mr * k->nr));
  for (auto _ : state) {
    k->tile(kgroups, a.data, b.data, nullptr, c.data(), k->nr, nullptr);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_gops(state, tile_ops(*k, kgroups));
}

// The driver's inner loops: one B panel (kc k-groups x NR) stays in L1 while
// a block of A (mc rows, mc / MR tiles) streams from L2.
void bm_panel(benchmark::State& state, const Int8GemmKernel* k) {
  begin_tile_calls(*k);
  const int64_t kc = 256;
  const int tiles = (192 + k->mr - 1) / k->mr;
  Aligned a(a_bytes(*k, kc) * static_cast<size_t>(tiles)), b(b_bytes(*k, kc));
  std::vector<int32_t> c(static_cast<size_t>(tiles * k->mr * k->nr));
  for (auto _ : state) {
    for (int t = 0; t < tiles; ++t)
      k->tile(kc, a.data + a_bytes(*k, kc) * static_cast<size_t>(t), b.data, nullptr,
              c.data() + static_cast<size_t>(t * k->mr * k->nr), k->nr, nullptr);
    benchmark::ClobberMemory();
  }
  set_gops(state, tile_ops(*k, kc) * tiles);
}

// Small M: one A tile (K = 4096) against B panels totalling `KiB`, each panel
// used once per pass, as in a GEMV-like decoding step. `pair`: through the
// kernel's two-panel form (tile_pair, MR x 64 from two consecutive panels
// per call), as the driver runs packed B with one row tile per panel.
void bm_stream_b(benchmark::State& state, const Int8GemmKernel* k, bool pair) {
  begin_tile_calls(*k);
  const int64_t kgroups = 4096 / k->kr;
  const size_t panel = b_bytes(*k, kgroups), step = pair ? 2 : 1;  // panels per call
  const size_t panels = (static_cast<size_t>(state.range(0)) * 1024 + step * panel - 1) / (step * panel) * step;
  Aligned a(a_bytes(*k, kgroups)), b(panel * panels);
  std::vector<int32_t> c(static_cast<size_t>(k->mr) * k->nr * panels);
  const int64_t ldc = static_cast<int64_t>(k->nr * panels);
  for (auto _ : state) {
    for (size_t p = 0; p < panels; p += step) {
      int32_t* tile_c = c.data() + p * static_cast<size_t>(k->nr);
      if (pair)
        k->tile_pair(kgroups, a.data, b.data + panel * p, static_cast<int64_t>(panel), nullptr, tile_c, ldc);
      else
        k->tile(kgroups, a.data, b.data + panel * p, nullptr, tile_c, ldc, nullptr);
    }
    benchmark::ClobberMemory();
  }
  set_gops(state, tile_ops(*k, kgroups) * static_cast<double>(panels));
  state.counters["GBps_B"] = benchmark::Counter(
      static_cast<double>(panel * panels) * 1e-9 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// Small M against an unpacked B: the raw-B kernel (gemm/raw_b_small_m.h)
// over a K = 4096 row-major B of `KiB` (N a multiple of 256), in the
// driver's column blocks for one thread (whole rows of a large B up to 8
// rows) and with A' rows placed as the driver places them;
// it reads B in place, so GB/s of B is the figure to compare with
// Int8StreamB (which reads B already packed). At 1024 KiB (N = 256) B stays
// in L2 and the figure is the kernel's own speed; from 8 MB the large-B form
// runs, with B read from L3 or memory. `isa`: the family (the AVX2
// kernels have one form for any B).
void bm_raw_b(benchmark::State& state, Isa isa, int m) {
  const int64_t K = 4096, N = std::max<int64_t>(256, state.range(0) * 1024 / K / 256 * 256);
  const int64_t block = qmatmul::gemm::raw_b_block_cols(isa, m, K * N, 1), ld = block + 64;
  const int64_t kp = qmatmul::gemm::raw_b_a_row_stride(K);
  // The form the driver runs for this B (the large-B form from 8 MB).
  const qmatmul::gemm::RawBSmallMFn kernel = qmatmul::gemm::raw_b_small_m_kernel(isa, m, K, N);
  Aligned a(static_cast<size_t>(m * kp)), b(static_cast<size_t>(K * N));
  Aligned sums(sizeof(int32_t) * static_cast<size_t>((m + 1) * ld));
  const std::vector<int32_t> a_zero(static_cast<size_t>(m), 128);  // za' (the AVX2 kernels fold it into A)
  auto* acc = reinterpret_cast<int32_t*>(sums.data);
  for (auto _ : state) {
    for (int64_t j = 0; j < N; j += block)
      kernel(a.data, m, kp, a_zero.data(), b.data + j, K, N, std::min(block, N - j), 0, acc, ld, acc + m * ld);
    benchmark::ClobberMemory();
  }
  set_gops(state, 2.0 * m * static_cast<double>(K * N));
  state.counters["GBps_B"] = benchmark::Counter(static_cast<double>(K * N) * 1e-9 * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

// The ceiling RawBStream's large-B figures are read against: the same
// K = 4096 row-major B, walked as the raw-B kernels walk it (a column block
// of `cols` at a time over all K rows, 16 rows per step as their 4
// k-groups a step take (8 at M = 2), each step's rows read side by side,
// 64 bytes of each at a time, across the block), but with one 8-byte load
// per line and nothing else, so that the core keeps as many line fetches
// in flight as it can. Compare GBps_B with RawBStream's for the block
// width the driver gives those rows (raw_b_block_cols): where the kernel's
// rate is close to this one, it is bound by the order in which B is read,
// not by its arithmetic. One thread, like RawBStream.
void bm_raw_b_read_only(benchmark::State& state) {
  const int64_t cols = state.range(0), K = 4096, N = state.range(1) * 1024 / K;
  constexpr int64_t kStepRows = 16, kLine = 64;
  Aligned b(static_cast<size_t>(K * N));
  uint64_t x[4] = {0, 0, 0, 0};
  for (auto _ : state) {
    for (int64_t c0 = 0; c0 < N; c0 += cols)
      for (int64_t k = 0; k < K; k += kStepRows)
        for (int64_t c = c0; c < std::min(N, c0 + cols); c += kLine)
          for (int64_t t = 0; t < kStepRows; ++t) {
            uint64_t w;
            std::memcpy(&w, b.data + (k + t) * N + c, sizeof w);
            x[t % 4] ^= w;
          }
    benchmark::DoNotOptimize(x);
  }
  state.counters["GBps_B"] = benchmark::Counter(static_cast<double>(K * N) * 1e-9 * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

std::vector<const Int8GemmKernel*> kernels() {
  using namespace qmatmul::kernels;
  std::vector<const Int8GemmKernel*> all = {int8_kernel_amx(),  int8_kernel_avx512vnni(), int8_kernel_avxvnni(),
                                            int8_kernel_avx512bw(), int8_kernel_avx2(), int8_kernel_portable()};
#if defined(__x86_64__) || defined(__i386__)
  all.push_back(int8_kernel_amx_16_rows());
  for (int m = 7; m >= 1; --m) all.push_back(int8_kernel_avx512vnni_small_m_for(m));
  for (int m = 5; m >= 1; --m) all.push_back(int8_kernel_avx2_small_m_for(m));
  for (int m = 5; m >= 1; --m) all.push_back(int8_kernel_avxvnni_small_m_for(m));
  for (int m = 5; m >= 1; --m) all.push_back(int8_kernel_avx512bw_small_m_for(m));
#endif
  std::vector<const Int8GemmKernel*> usable;  // each runnable kernel once
  for (const Int8GemmKernel* k : all)
    if (k != nullptr && cpu_runs(k->isa) && std::find(usable.begin(), usable.end(), k) == usable.end())
      usable.push_back(k);
  return usable;
}

}  // namespace

int main(int argc, char** argv) {
  for (const Int8GemmKernel* k : kernels()) {
    const std::string name = k->name;
    benchmark::RegisterBenchmark(("Int8Tile/" + name).c_str(), bm_tile, k)
        ->Arg(64)->Arg(256)->Arg(2048);
    benchmark::RegisterBenchmark(("Int8Panel/" + name).c_str(), bm_panel, k);
    benchmark::RegisterBenchmark(("Int8StreamB/" + name).c_str(), bm_stream_b, k, false)
        ->Arg(768)->Arg(65536);
    if (k->tile_pair != nullptr)
      benchmark::RegisterBenchmark(("Int8StreamBPair/" + name).c_str(), bm_stream_b, k, true)
          ->Arg(768)->Arg(16384)->Arg(65536);
  }
  // Every row count with a kernel of its own; from 17 rows, where one
  // kernel takes every count, 24, 32, 48 and 64 rows.
  const auto benched_rows = [](int m) { return m <= qmatmul::gemm::kMaxRowsOwnKernel || m == 24 || m % 16 == 0; };
  if (cpu_runs(Isa::Avx512Vnni))
    for (int m = 1; m <= qmatmul::gemm::kMaxRows; ++m) {
      // Every kernel in both forms: the plain form with B in L2 (1 MB, K =
      // 4096, which the path takes for any m up to 16), the large-B form
      // from L3 or memory (16 and 64 MB).
      if (!benched_rows(m)) continue;
      if (const char* name = qmatmul::gemm::raw_b_small_m_name(Isa::Avx512Vnni, m, 4096, 256))
        benchmark::RegisterBenchmark((std::string("RawBStream/") + name).c_str(), bm_raw_b, Isa::Avx512Vnni, m)
            ->Arg(1024);
      if (const char* name = qmatmul::gemm::raw_b_small_m_name(Isa::Avx512Vnni, m, 4096, 4096))
        benchmark::RegisterBenchmark((std::string("RawBStream/") + name).c_str(), bm_raw_b, Isa::Avx512Vnni, m)
            ->Arg(16384)->Arg(65536);
    }
  if (cpu_runs(Isa::Avx2))
    for (int m = 1; m <= qmatmul::gemm::kMaxRowsAvx2; ++m) {  // the AVX2 kernels: one form, B in L2 or not
      if (!benched_rows(m)) continue;
      if (const char* name = qmatmul::gemm::raw_b_small_m_name(Isa::Avx2, m, 4096, 4096))
        benchmark::RegisterBenchmark((std::string("RawBStream/") + name).c_str(), bm_raw_b, Isa::Avx2, m)
            ->Arg(1024)->Arg(16384)->Arg(65536);
    }
  for (const int64_t cols : {256, 512, 1024, 2048, 4096})  // the raw-B driver's block widths
    benchmark::RegisterBenchmark("RawBReadOnly", bm_raw_b_read_only)->Args({cols, 16384})->Args({cols, 65536});
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
