// `qmatmul bench`: speed of MatMulInteger (u8 x s8 -> s32), QLinearMatMul
// (u8 x s8 -> u8, s8 x s8 -> s8) and float8 QLinearMatMul-21 (e4m3fn x e4m3fn
// -> e4m3fn) on 2-D shapes and batched ones (a B matrix per batch), with B
// as plain weights or prepacked (PackedB),
// next to oneDNN in the same process on the same problem and thread count
// (onednn_baseline.h): its int8 matmul with the same data, types and run-time
// quantization for the int8 ops, its float32 matmul on the decoded values for
// the float8 op (oneDNN 2.x has no float8 matmul). Each row: median time of
// interleaved qmatmul / oneDNN samples after a warm-up, GOPS = 2*B*M*K*N /
// time (B batches, 1 for a 2-D shape),
// % of the int8 peak (per core x threads; int8 ops only, no float peak is
// configured: measured_int8_peak, or --peak-gops-per-core) and the
// ratio qmatmul / oneDNN; QLinear int8
// rows also time qmatmul's MatMulInteger on the same operands in the same
// loop and give the time ratio QLinear / MatMulInteger (fusion cost). Before timing
// a shape, checks once that qmatmul's MatMulInteger (plain and packed B)
// equals the reference implementation on a few rows (verify_shape; a warning
// on stderr if not), and whether oneDNN's s32 result does (a note if not:
// its AVX2 int8 path saturates), and for float8 that packed B (when
// PackedB::pack accepts float8; else float8 runs unpacked only) gives the
// same bytes as plain B; requantized outputs are
// only compared loosely (max |difference| in output steps) since oneDNN
// rounds and sums differently. Shapes come from bench/shapes.txt (compiled
// in), whose [section] headers give each op its default shapes, or from
// --shapes (bench_shapes.h). Output: an aligned table, or one JSON object per
// line (bench_report.h, which also holds the timing loop). This file holds
// the op table, the int8 rows and their checks, and the command itself; the
// float8 rows are in bench_float8_rows.cpp, what both share in bench_rows.h.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bench_report.h"
#include "bench_rows.h"
#include "bench_shapes.h"
#include "commands.h"
#include "cpu/cpu_features.h"
#include "gemm/float8_gemm.h"
#include "gemm/raw_b_small_m.h"
#include "kernels/dispatch.h"
#include "kernels/x86/x86_kernels_extra.h"
#include "onednn_baseline.h"
#include "qmatmul/qmatmul.h"
#include "reference/reference.h"

namespace qmatmul::cli {
namespace {

using bench::BenchShape;  // bench_shapes.h
using bench::ShapeEntry;
using bench::Column;  // bench_report.h
using bench::Row;
using bench::Side;

const OpInfo kOps[] = {
    {"matmulinteger_u8s8", "int8", ElementType::Uint8, ElementType::Int8, ElementType::Int32,
     bench::OnednnOp::MatMulIntegerU8S8, 128, 0},
    {"qlinear_u8s8_u8", "int8", ElementType::Uint8, ElementType::Int8, ElementType::Uint8,
     bench::OnednnOp::QLinearU8S8U8, 128, 128},
    {"qlinear_s8s8_s8", "int8", ElementType::Int8, ElementType::Int8, ElementType::Int8,
     bench::OnednnOp::QLinearS8S8S8, 3, 0},
    // Float8 zero points are float8 zeros (code 0x00).
    {"qlinear_f8e4m3", "float8", ElementType::Float8E4M3FN, ElementType::Float8E4M3FN, ElementType::Float8E4M3FN,
     bench::OnednnOp::Float32, 0, 0},
};

// ---- the benchmark ------------------------------------------------------

// The kernel qmatmul runs for M rows: the small-M kernel when it applies and
// (for packed B) reads the layout PackedB::pack wrote with the main kernel;
// for an unpacked B and M <= 16 on AVX-512 VNNI, the raw-B kernel
// (src/gemm/raw_b_small_m.h). A kernel whose two-panel form runs (a single
// row tile per panel, src/gemm/driver.cpp) is named with "(two panels)",
// and a last partial row tile that runs its own kernel after a "+".
std::string kernel_name(int64_t m, int64_t k, int64_t n, bool packed) {
  if (!packed)
    if (const char* raw = gemm::raw_b_small_m_name(kernels::dispatch().chosen->isa, m, k, n)) return raw;
  const auto& want = kernels::int8_kernel_for(m, k);
  const auto& main = *kernels::dispatch().chosen->kernel;
  const auto& used = packed && !kernels::same_b_layout(want, main) ? main : want;
  if (used.tile_pair != nullptr && m <= used.mr) return std::string(used.name) + " (two panels)";
  // The last row tile of each block, m % MR rows (blocks are whole tiles
  // but the last), when it runs a kernel of its own (src/gemm/driver.cpp);
  // with fewer than MR rows in all, that kernel is the only one.
  if (const kernels::Int8GemmKernel* tail = kernels::int8_tail_kernel_for(used, m % used.mr)) {
    if (m < used.mr) return tail->name;
    return std::string(used.name) + " + " + tail->name +
           (m % used.mr == 1 ? std::string(" (last row)") : " (last " + std::to_string(m % used.mr) + " rows)");
  }
  return used.name;
}

// The float8 path the library takes, as `qmatmul info` names it
// (gemm::float8_auto_path). On avx512bf16 the bench's operands, zero points
// 0, are exact in bfloat16, so its BF16 tiles run.
std::string float8_kernel_name() {
  return std::string("float8_") + gemm::float8_path_name(gemm::float8_auto_path());
}

std::string kernel_name(const OpInfo& op, const BenchShape& s, bool packed) {
  return op.is_float8() ? float8_kernel_name() : kernel_name(s.m, s.k, s.n, packed);
}

template <typename T>
int max_abs_diff(const void* x, const void* y, int64_t count) {
  int worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int d = std::abs(int(static_cast<const T*>(x)[i]) - int(static_cast<const T*>(y)[i]));
    worst = std::max(worst, d);
  }
  return worst;
}

// What the exactness check of a shape found: whether qmatmul's MatMulInteger
// (plain B, and packed B when benchmarked) and oneDNN's s32 matmul (when it
// runs) equal the reference implementation (src-independent, reference.h)
// on the checked rows; nullopt for what was not compared.
struct ShapeCheck {
  std::optional<bool> qmatmul_exact, onednn_exact;
};

// The rows of A checked against the reference: the first, middle and last of
// every batch (the reference is a plain triple loop, so all rows of 2048^3
// would take seconds; these cover a first tile, an inner one and the tail).
std::vector<int64_t> checked_rows(int64_t m) {
  std::vector<int64_t> rows{0, m / 2, m - 1};
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// Checks qmatmul's MatMulInteger (plain and, when benchmarked, packed B) and
// oneDNN's s32 result against the reference on checked_rows of each batch.
// qmatmul differing is a warning (a bug); oneDNN differing is a note: on
// CPUs without VNNI its int8 kernels add u8 x s8 pairs in saturating int16
// (the case qmatmul's AVX2 kernel is built to avoid), which this data, full
// 8-bit range, reaches.
ShapeCheck verify_shape(const BenchShape& s, const std::vector<uint8_t>& a, const std::vector<int8_t>& b,
                        bool check_packed, bool use_onednn, int threads) {
  omp_set_num_threads(threads);
  Options opt;
  opt.threads = threads;
  const TensorView av{ElementType::Uint8, s.a_dims(), a.data()}, bv{ElementType::Int8, s.b_dims(), b.data()};
  const Tensor azp = scalar(ElementType::Uint8, 128), bzp = scalar(ElementType::Int8, 0);
  // The reference's rows: row i of batch t against that batch's B.
  const std::vector<int64_t> rows = checked_rows(s.m);
  std::vector<int32_t> expected;  // batch-major, then rows, then N columns
  for (int64_t t = 0; t < s.batches; ++t) {
    const TensorView bt{ElementType::Int8, {s.k, s.n}, b.data() + t * s.k * s.n};
    for (int64_t i : rows) {
      const TensorView ai{ElementType::Uint8, {1, s.k}, a.data() + (t * s.m + i) * s.k};
      const Tensor yi = reference::matmul_integer(ai, bt, azp.view(), bzp.view());
      expected.insert(expected.end(), yi.data<int32_t>(), yi.data<int32_t>() + s.n);
    }
  }
  // Elements of `y` (the whole output) that differ from the reference's rows.
  auto differences = [&](const int32_t* y, std::size_t& first, int32_t& got, int32_t& want) {
    std::size_t bad = 0, e = 0;
    for (int64_t t = 0; t < s.batches; ++t)
      for (int64_t i : rows)
        for (int64_t j = 0; j < s.n; ++j, ++e) {
          const std::size_t at = static_cast<std::size_t>((t * s.m + i) * s.n + j);
          if (y[at] != expected[e] && bad++ == 0) first = at, got = y[at], want = expected[e];
        }
    return bad;
  };
  const std::size_t checked = expected.size();
  ShapeCheck result;
  auto check = [&](const int32_t* y, const char* what, std::optional<bool>& exact, bool is_qmatmul) {
    std::size_t first = 0;
    int32_t got = 0, want = 0;
    const std::size_t bad = differences(y, first, got, want);
    exact = exact.value_or(true) && bad == 0;
    if (bad == 0) return;
    std::cerr << (is_qmatmul ? "warning: " : "note: ") << s.label() << ": " << what
              << " differs from the reference in " << bad << " of " << checked << " checked elements (first at element "
              << first << ": " << got << ", reference " << want << ")"
              << (is_qmatmul ? "" : "; its ratios compare against an inexact result") << "\n";
  };
  check(matmul_integer(av, bv, azp.view(), bzp.view(), opt).data<int32_t>(), "qmatmul MatMulInteger",
        result.qmatmul_exact, true);
  if (check_packed) {
    Tensor y(ElementType::Int32, s.y_dims());
    matmul_integer(av, PackedB::pack(bv, opt), azp.view(), bzp.view(), y.mutable_view(), opt);
    check(y.data<int32_t>(), "qmatmul MatMulInteger with packed B", result.qmatmul_exact, true);
  }
  if (use_onednn) {
    std::vector<int32_t> y(static_cast<std::size_t>(s.y_size()));
    bench::OnednnMatmul dnn(bench::OnednnOp::MatMulIntegerU8S8, s, b.data(), false);
    dnn.run(a.data(), y.data(), {128, 0, 1.0f, 0});
    check(y.data(), "oneDNN's s32 matmul", result.onednn_exact, false);
  }
  return result;
}

Row bench_row(const OpInfo& op, const BenchShape& s, int threads, bool packed, const std::vector<uint8_t>& a,
              const std::vector<int8_t>& b, bool use_onednn, const BenchArgs& args) {
  omp_set_num_threads(threads);
  Options opt;
  opt.threads = threads;
  const TensorView av{op.a, s.a_dims(), a.data()}, bv{op.b, s.b_dims(), b.data()};
  // Realistic per-tensor quantization: y spreads over ~+-32 quanta of its range.
  const double a_scale = 0.02, b_scale = 0.005;
  const double y_scale = a_scale * b_scale * 74.0 * 74.0 * std::sqrt(double(s.k)) / 32.0;
  const Tensor as = scalar(ElementType::Float32, a_scale), bs = scalar(ElementType::Float32, b_scale),
               ys = scalar(ElementType::Float32, y_scale);
  const Tensor azp = scalar(op.a, op.a_zero_point), bzp = scalar(op.b, 0);
  const bool integer = op.y == ElementType::Int32;
  const Tensor yzp = integer ? Tensor() : scalar(op.y, op.y_zero_point);
  Tensor yq(op.y, s.y_dims());
  const PackedB pb = packed ? PackedB::pack(bv, opt) : PackedB();

  auto call = [&](const auto& bop) {
    if (integer) {
      matmul_integer(av, bop, azp.view(), bzp.view(), yq.mutable_view(), opt);
    } else {
      qlinear_matmul(av, as, azp, bop, bs, bzp, ys, yzp, yq.mutable_view(), opt);
    }
  };
  Side q = side_with_b(packed, call, pb, bv);

  std::optional<bench::OnednnMatmul> dnn;
  std::vector<unsigned char> yd(yq.byte_size());
  const bench::OnednnQuant quant{op.a_zero_point, 0,
                                 static_cast<float>(float(a_scale) * float(b_scale) / float(y_scale)),
                                 op.y_zero_point};
  if (use_onednn) {
    dnn.emplace(op.onednn, s, b.data(), packed, false,
                args.onednn_fixed_scale && !integer ? std::optional<float>(quant.output_scale) : std::nullopt);
  }
  Side d{[&] { dnn->run(a.data(), yd.data(), quant); }};

  // QLinear: MatMulInteger on the same operands and zero points (int32
  // output) in the same interleaved loop, so that the requantization's
  // cost is read from samples taken at the same moments (fusion_cost).
  const bool fusion_cost = !integer && !args.no_fusion_cost;
  Tensor y32(ElementType::Int32, fusion_cost ? s.y_dims() : Shape{0});
  auto call_mi = [&](const auto& bop) { matmul_integer(av, bop, azp.view(), bzp.view(), y32.mutable_view(), opt); };
  Side mi = side_with_b(packed, call_mi, pb, bv);

  std::vector<Side*> sides{&q};
  if (dnn) sides.push_back(&d);
  if (fusion_cost) sides.push_back(&mi);
  bench::measure(sides, args.min_time, args.min_reps);

  Row r = timed_row(op, s, threads, packed, q, dnn ? &d : nullptr, dnn ? dnn->impl_name() : "", args,
                    fusion_cost ? &mi : nullptr);
  if (dnn && !integer) {
    r.max_diff = op.y == ElementType::Uint8 ? max_abs_diff<uint8_t>(yq.raw(), yd.data(), yq.size())
                                            : max_abs_diff<int8_t>(yq.raw(), yd.data(), yq.size());
  }
  return r;
}

// ---- the run ------------------------------------------------------------

// The int8 peak of one core, measured, and how: the best of 7 runs (about
// 10 ms each on Zen 4) of a register-only loop, after a warm-up. With AVX-512
// VNNI, vpdpbusd on zmm (kernels::vnni_peak_loop_avx512vnni). The rate the
// issue quotes, 1050 GOPS, is Zen 5's at 4.1 GHz (two per cycle); Zen 4
// issues one, so a fixed figure would misstate %peak there. Without it but
// with AVX2, the faster of the saturating vpmaddubsw method (what other
// libraries run there) and the exact one of qmatmul's AVX2 kernel
// (kernels::int8_peak_loops_avx2): the machine's int8 rate, exact or not.
// nullopt without either in the build and the CPU, or if a loop's sums are
// wrong (a warning then).
struct Int8Peak {
  double gops_per_core;
  const char* how;
};

// Best GOPS of `loop` over 7 runs; nullopt if its sums are wrong.
std::optional<double> best_loop_gops(kernels::Int8PeakLoop loop, int64_t iterations, int64_t ops_per_iteration,
                                     uint32_t sum_per_iteration) {
  loop(iterations / 4);
  double best = 0;
  for (int run = 0; run < 7; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const uint32_t check = loop(iterations);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (check != static_cast<uint32_t>(sum_per_iteration * iterations)) {
      std::cerr << "warning: the int8 peak probe summed wrongly; %peak is not given\n";
      return std::nullopt;
    }
    best = std::max(best, static_cast<double>(iterations * ops_per_iteration) / seconds / 1e9);
  }
  return best;
}

std::optional<Int8Peak> measured_int8_peak() {
  const kernels::Int8PeakLoop vnni = kernels::vnni_peak_loop_avx512vnni();
  if (vnni != nullptr && cpu::features().avx512vnni) {
    const auto gops =
        best_loop_gops(vnni, int64_t{1} << 21, kernels::kVnniPeakOpsPerIteration, kernels::kVnniPeakSumPerIteration);
    if (!gops) return std::nullopt;
    return Int8Peak{*gops, "vpdpbusd zmm"};
  }
  const kernels::Avx2PeakLoops avx2 = kernels::int8_peak_loops_avx2();
  if (avx2.saturating == nullptr || !cpu::features().avx2) return std::nullopt;
  // 2^18 steps of 384 multiply-adds: about 4 ms a run on Zen 1 (46 GOPS).
  constexpr int64_t kIterations = int64_t{1} << 18;
  const auto saturating =
      best_loop_gops(avx2.saturating, kIterations, kernels::kAvx2PeakOpsPerIteration, kernels::kAvx2PeakSumPerIteration);
  const auto exact =
      best_loop_gops(avx2.exact, kIterations, kernels::kAvx2PeakOpsPerIteration, kernels::kAvx2PeakSumPerIteration);
  if (!saturating || !exact) return std::nullopt;
  return *saturating >= *exact ? Int8Peak{*saturating, "the saturating vpmaddubsw + vpmaddwd ymm mix"}
                               : Int8Peak{*exact, "the exact AVX2 kernel's vpmaddwd ymm mix"};
}

void run_bench(const BenchArgs& given) {
  BenchArgs args = given;  // with the peak for %peak resolved below
  const std::vector<ShapeEntry> shapes = bench::load_shapes(args.shapes, op_names());
  std::vector<const OpInfo*> ops;
  for (const OpInfo& op : kOps) {
    if (std::find(args.ops.begin(), args.ops.end(), op.name) != args.ops.end()) ops.push_back(&op);
  }
  if (ops.empty()) throw Error("--ops: no operator selected");
  if (args.threads.empty()) throw Error("--threads: no thread count given");
  std::vector<bool> packed_modes;
  if (args.packed != "yes") packed_modes.push_back(false);
  if (args.packed != "no") packed_modes.push_back(true);
  const bool use_onednn = !args.no_onednn && bench::onednn_available();
  const bool any_float8 = std::any_of(ops.begin(), ops.end(), [](const OpInfo* op) { return op->is_float8(); });

  const auto& d = kernels::dispatch();
  std::vector<Column> cols{{"op", 2, true},     {"B", 2, false},     {"M", 5, false},      {"K", 5, false},
                           {"N", 5, false},     {"thr", 3, false},   {"packed", 6, true},  {"kernel", 6, true},
                           {"ms", 8, false},
                           {"GOPS", 7, false},  {"%peak", 5, false}, {"oneDNN", 7, false}, {"ratio", 5, false},
                           {"qdiff", 5, false}, {"QL/MI", 5, false}, {"reps", 4, false},
                           {"oneDNN impl", 0, true}};
  Column& kernel_col =
      *std::find_if(cols.begin(), cols.end(), [](const Column& c) { return std::string_view(c.title) == "kernel"; });
  bool any_row = false;
  for (const OpInfo* op : ops) cols[0].width = std::max<int>(cols[0].width, int(std::strlen(op->name)));
  for (const ShapeEntry& e : shapes) {
    for (const OpInfo* op : ops) {
      if (!bench::runs_op(e, op->name, op->group)) continue;
      any_row = true;
      for (bool p : packed_modes) {
        kernel_col.width = std::max<int>(kernel_col.width, int(kernel_name(*op, e.shape, p).size()));
      }
    }
  }
  if (!any_row) throw Error("--shapes: no shape runs for the selected --ops (check the file's [section] headers)");
  if (args.list) {
    for (const ShapeEntry& e : shapes) {
      for (const OpInfo* op : ops) {
        if (bench::runs_op(e, op->name, op->group)) {
          std::cout << op->name << " " << e.shape.label() << "\n";
        }
      }
    }
    return;
  }
  // The peak for %peak: as given, or measured here (0 when neither).
  const bool peak_measured = args.peak_per_core <= 0;
  const std::optional<Int8Peak> peak = peak_measured ? measured_int8_peak() : std::nullopt;
  if (peak_measured) args.peak_per_core = peak ? peak->gops_per_core : 0;
  if (!args.json) {
    const std::string peak_text =
        args.peak_per_core <= 0
            ? std::string("- (no AVX-512 VNNI or AVX2 to measure an int8 peak on)")
            : std::to_string(std::lround(args.peak_per_core)) + " GOPS/core x threads (int8 peak, " +
                  (peak_measured ? std::string("measured: ") + peak->how + " on registers, 1 core)"
                                 : std::string("--peak-gops-per-core)")) +
                  (d.chosen->isa == kernels::Isa::Amx
                       ? "; the AMX tiles multiply-add several times faster, so their rows pass 100%"
                       : "");
    const auto& cpu = cpu::features();
    std::cout << "qmatmul " << version() << " bench on " << (cpu.brand.empty() ? "unknown CPU" : cpu.brand) << ", "
              << std::thread::hardware_concurrency() << " logical cores\n"
              << "int8 kernel: " << d.chosen->kernel->name << " ("
              << kernels::isa_name(d.chosen->isa) << ", " << d.reason << ")";
    if (d.chosen->small_m) {
      std::cout << "; small-M kernels for M <= " << d.chosen->small_m->mr << " (per row below)";
    }
    if (any_float8) {
      std::cout << "\nfloat8 kernel: " << float8_kernel_name()
                << " (the float8 path of `qmatmul info`, float32 accumulation as SEMANTICS.md §5 defines); "
                   "its oneDNN baseline is oneDNN's float32 matmul on the decoded values";
    }
    std::cout << "\noneDNN: "
              << (use_onednn ? bench::onednn_version() + (args.onednn_fixed_scale
                                                               ? ", QLinear output scale fixed at creation"
                                                               : ", run-time scales and zero points")
                  : args.no_onednn ? "off (--no-onednn)"
                                   : bench::onednn_version())
              << "\nB = batches (a B matrix per batch); GOPS = 2*B*M*K*N / median time (>= " << args.min_time
              << " s and >= " << args.min_reps
              << " samples per side, interleaved with oneDNN); %peak of " << peak_text
              << "; \"-\" for float8, no float peak is configured; ratio = "
                 "qmatmul/oneDNN (* where oneDNN's s32 result differs from the reference: its int16 "
                 "intermediate saturated); qdiff = max |qmatmul - oneDNN| of the requantized output (float8: in output "
                 "steps, oneDNN's float32 sums requantized the same way); QL/MI = QLinear's median time / "
                 "MatMulInteger's on the same operands, timed in the same loop (the requantization's cost)\n\n";
    std::vector<std::string> titles;
    for (const Column& c : cols) titles.push_back(c.title);
    std::cout << bench::table_line(cols, titles) << "\n" << std::flush;
  }

  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  bool float8_pack_refused = false;  // PackedB::pack rejected float8 B: plain B only from then on
  for (const ShapeEntry& e : shapes) {
    const BenchShape& s = e.shape;
    std::vector<const OpInfo*> here;
    for (const OpInfo* op : ops) {
      if (bench::runs_op(e, op->name, op->group)) here.push_back(op);
    }
    // int8 data and the exactness check, when an int8 op runs this shape.
    std::vector<uint8_t> a;
    std::vector<int8_t> b;
    ShapeCheck verified;
    if (std::any_of(here.begin(), here.end(), [](const OpInfo* op) { return !op->is_float8(); })) {
      a.resize(static_cast<std::size_t>(s.a_size()));
      b.resize(static_cast<std::size_t>(s.b_size()));
      for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
      for (auto& v : b) v = static_cast<int8_t>(byte(rng) - 128);
      const bool check_packed = std::find(packed_modes.begin(), packed_modes.end(), true) != packed_modes.end();
      verified = verify_shape(s, a, b, check_packed, use_onednn, args.threads.front());
    }
    for (const OpInfo* op : here) {
      std::optional<Float8Data> f8;
      std::optional<bool> f8_verified;
      bool f8_packed = false;
      if (op->is_float8()) {
        f8 = float8_data(rng, *op, s);
        const bool want_packed = std::find(packed_modes.begin(), packed_modes.end(), true) != packed_modes.end();
        if (want_packed && !float8_pack_refused) {
          std::string why;
          f8_packed = probe_float8_packed(*op, s, *f8, args.threads.front(), f8_verified, why);
          if (!f8_packed) {
            float8_pack_refused = true;
            std::cerr << "note: " << op->name << ": PackedB::pack refuses float8 B, so only packed=false rows "
                      << "are measured (" << why << ")\n";
          }
        }
      }
      for (int threads : args.threads) {
        for (bool packed : packed_modes) {
          Row r;
          if (op->is_float8()) {
            if (packed && !f8_packed) continue;
            r = bench_float8_row(*op, s, threads, packed, *f8, use_onednn, args);
            r.verified = f8_verified;
          } else {
            r = bench_row(*op, s, threads, packed, a, b, use_onednn, args);
            r.verified = verified.qmatmul_exact;
            r.onednn_exact = verified.onednn_exact;
          }
          std::cout << (args.json ? bench::json_row(r) : bench::table_line(cols, bench::table_cells(r))) << "\n"
                    << std::flush;
        }
      }
    }
  }
}

}  // namespace

// ---- shared with the float8 rows (bench_rows.h) --------------------------

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpInfo& op : kOps) names.push_back(op.name);
  return names;
}

Tensor scalar(ElementType type, double value) {
  Tensor t(type, {});
  switch (type) {
    case ElementType::Uint8: *t.data<uint8_t>() = static_cast<uint8_t>(value); break;
    case ElementType::Int8: *t.data<int8_t>() = static_cast<int8_t>(value); break;
    case ElementType::Float32: *t.data<float>() = static_cast<float>(value); break;
    default:
      if (!is_float8(type)) throw Error("bench: unexpected scalar type");
      *t.data<uint8_t>() = reference::float8_from_double(value, type);
  }
  return t;
}

Row timed_row(const OpInfo& op, const BenchShape& s, int threads, bool packed, const Side& q, const Side* d,
              const std::string& onednn_impl, const BenchArgs& args, const Side* mi) {
  Row r;
  r.op = op.name;
  r.kernel = kernel_name(op, s, packed);
  r.shape = s;
  r.threads = threads;
  r.packed = packed;
  const double ops = s.ops();
  r.ms = q.median() * 1e3;
  r.gops = ops / q.median() / 1e9;
  if (!op.is_float8() && args.peak_per_core > 0) {
    r.peak_pct = 100.0 * r.gops / (args.peak_per_core * threads);
    r.peak_gops_per_core = args.peak_per_core;
  }
  r.reps = static_cast<int>(q.samples.size());
  if (d) {
    r.onednn_ms = d->median() * 1e3;
    r.onednn_gops = ops / d->median() / 1e9;
    r.ratio = r.gops / *r.onednn_gops;
    r.onednn_impl = onednn_impl;
  }
  if (mi) {
    r.matmulinteger_gops = ops / mi->median() / 1e9;
    r.fusion_cost = q.median() / mi->median();
  }
  return r;
}

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand(
      "bench", "Time MatMulInteger / QLinearMatMul (int8 and float8) against oneDNN and the int8 peak");
  cmd->footer(
      "Ops: matmulinteger_u8s8 (u8 x s8 -> s32), qlinear_u8s8_u8, qlinear_s8s8_s8 (int8 group; baseline: oneDNN's "
      "int8 matmul with the same run-time quantization) and qlinear_f8e4m3 (float8 group: QLinearMatMul-21 "
      "float8e4m3fn x float8e4m3fn -> float8e4m3fn, per-tensor scales, zero points 0; baseline: oneDNN's float32 "
      "matmul on the decoded values; %peak is \"-\" (JSON null) since no float peak is configured; packed rows "
      "go through the PackedB overload when PackedB::pack accepts float8 B, otherwise only unpacked rows run and "
      "a note says why).\n"
      "Shapes file: \"M K N\" per line, \"#\" comments, and \"[name,...]\" section headers: the shapes after a "
      "header run only for the ops it names, by op name or group (int8, float8, all); shapes before the first "
      "header, and every shape of an MxKxN list, run for every selected op. The default is bench/shapes.txt "
      "compiled in: the int8 ops run its [int8] shapes, qlinear_f8e4m3 its [float8] shapes (1x4096x4096, "
      "128x4096x4096, 512x1024x4096).\n"
      "Batched shapes: four numbers, \"B M K N\" (BxMxKxN in a list), are B products, each with its own A [M,K] "
      "and its own B [K,N], against oneDNN's 3-D matmul; GOPS counts 2*B*M*K*N. bench/attention_shapes.txt holds "
      "attention products of that kind.");
  cmd->add_option("--shapes", args->shapes,
                  "Shapes: a file of \"M K N\" (or \"B M K N\") lines with optional [section] headers (e.g. "
                  "bench/shapes.txt) or a list like 1x4096x4096,12x197x64x197 run by every op (default: "
                  "bench/shapes.txt, compiled in)");
  cmd->add_option("--ops", args->ops, "Operators, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(op_names()))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Thread counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--packed", args->packed, "B as prepacked weights (PackedB): yes, no or both")
      ->check(CLI::IsMember({"yes", "no", "both"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "One JSON object per line instead of a table");
  cmd->add_option("--min-time", args->min_time, "Seconds of timed calls per measurement and side")
      ->check(CLI::Range(1e-6, 3600.0))
      ->capture_default_str();
  cmd->add_option("--min-reps", args->min_reps, "Minimum timed samples per measurement and side")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--peak-gops-per-core", args->peak_per_core,
                  "int8 peak per core for %peak (GOPS; int8 ops only). Default: measured at start, a "
                  "register-only loop on one core: vpdpbusd zmm with AVX-512 VNNI, else the faster of the "
                  "saturating and exact AVX2 multiply-add mixes (none without either: %peak is then -)")
      ->check(CLI::Range(1e-3, 1e9));
  cmd->add_flag("--no-onednn", args->no_onednn, "Skip the oneDNN baseline and check");
  cmd->add_flag("--no-fusion-cost", args->no_fusion_cost,
                "Do not time MatMulInteger beside the QLinear int8 rows (their QL/MI column, JSON fusion_cost, "
                "is then empty/null)");
  cmd->add_flag("--list", args->list,
                "Print the op and shape pairs the options select (\"op MxKxN\" per line, in run order; each is "
                "measured for every --threads and --packed choice) and exit");
  cmd->add_flag("--onednn-fixed-scale", args->onednn_fixed_scale,
                "Build oneDNN's QLinear primitives with the output scale fixed at creation (oneDNN 2.6 then "
                "runs brgemm instead of gemm:jit); qmatmul still takes every scale at run time");
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace qmatmul::cli
