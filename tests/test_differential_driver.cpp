// Randomized differential tests of the GEMM driver's paths, each against
// the plain reference bit for bit: the raw-B form for few rows (block edges
// at every line offset, whole-row blocks of a large B), prepared B panels
// (many row tiles, per-batch parameters, final sums), packed B (stored
// quantization, reuse across calls and threads, every panel-pair count) and
// threads (called from inside the caller's OpenMP region, thread counts that
// follow the work). A read in place and half-width last panels are in
// test_differential_tiles.cpp, the operator-level sweeps over types, layouts
// and shapes in test_differential.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>

#include <omp.h>

#include "differential_support.h"
#include "gemm/parallel_region.h"
#include "gemm/raw_b_small_m.h"
#include "gemm/thread_cost.h"

namespace qmatmul::testing {
namespace {

namespace ref = qmatmul::reference;

// MatMulInteger with m x k random A and k x n B of random types (per-row
// zero points of A, per-column ones of B), B copied to `offset` bytes past
// a 64-byte line, at 1 and 2 threads, against the reference.
// A copy of the k x n matrix b in `storage`, `offset` bytes past a 64-byte line.
TensorView place_at_line_offset(const Tensor& b, std::vector<unsigned char>& storage, std::size_t offset) {
  const auto bytes = static_cast<std::size_t>(b.dims()[0] * b.dims()[1]);
  storage.assign(bytes + 128, 0);
  const std::size_t misalign = reinterpret_cast<std::uintptr_t>(storage.data()) % 64;
  unsigned char* placed = storage.data() + (64 - misalign) % 64 + offset;
  std::memcpy(placed, b.raw(), bytes);
  return TensorView{b.type(), b.dims(), placed};
}

void check_b_at_line_offset(std::mt19937& rng, int64_t m, int64_t k, int64_t n, std::size_t offset) {
  const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
  const Tensor a = random_int8(rng, at, {m, k}, 2), b = random_int8(rng, bt, {k, n}, 2);
  const Tensor a_zp = random_zero_point(rng, at, {m, 1}), b_zp = random_zero_point(rng, bt, {n});
  std::vector<unsigned char> storage;
  const TensorView b_placed = place_at_line_offset(b, storage, offset);
  const Tensor want = ref::matmul_integer(a, b, a_zp.view(), b_zp.view());
  std::ostringstream what;
  what << "M=" << m << " K=" << k << " N=" << n << " B at line offset " << offset;
  for (int threads : {1, 2})
    expect_same_any(matmul_integer(a, b_placed, a_zp.view(), b_zp.view(), with_threads(threads)), want, what.str());
}

// An unpacked B with few rows (the raw-B path, M <= 16: AVX-512 VNNI, and
// AVX2 / AVX-VNNI in the runs with QMATMUL_ISA=avx2 / avxvnni):
// when N % 64 == 0 the driver puts its column blocks' edges on B's 64-byte
// lines, so the first block is shorter by B's offset within a line. B is
// placed at every kind of offset in a larger buffer (0, 1, 16, 63 bytes past
// a line), N spans several blocks or not, rows on each side of the kernels'
// edges (sums in registers up to 2 rows on AVX-512, 4 on AVX2, then one row
// at a time), per-column zero points of B and per-row ones
// of A. From 10 rows the path needs a larger B (raw_b_min_bytes; under
// AVX2 from 9 rows, raw_b_min_bytes_avx2, reached with the widest N): K
// grows to reach it, and for 16 rows only the widest N are kept.
TEST(DifferentialRawB, BlockEdgesOnBLinesAtEveryOffset) {
  std::mt19937 rng(1664);
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16})
    for (int64_t n : {64, 576, 1024, 1088, 200})
      for (std::size_t offset : {0, 1, 16, 63}) {
        if (m == 16 && n < 1024) continue;
        // The AVX2 rule's 1 MB from 9 rows only for the widest N (whose K
        // stays near 1024): the reference's plain loops make every large K
        // slow under the sanitizers.
        const int64_t avx2_bytes = n >= 1024 ? gemm::raw_b_min_bytes_avx2(kernels::Isa::Avx2, m) : 0;
        const int64_t min_bytes = std::max(gemm::raw_b_min_bytes(m), avx2_bytes);
        const int64_t k = std::max<int64_t>(37, (min_bytes + n - 1) / n);
        check_b_at_line_offset(rng, m, k, n, offset);
      }
}

// A B of kRawBLargeBytes or more: the driver's wide column blocks
// (raw_b_block_cols: 2048, or 4096 for up to 8 rows on one thread; on
// AVX-512 VNNI 1024 at 5 to 8 rows on one thread, 512 on two and from 9
// rows, 256 from 17; in the nearest count that the threads share evenly:
// 4160 is one block of 4160 on one thread for 1 row, 4 of 1040 for 8 rows,
// 8 of 520 for 16 rows), blocks cut on
// B's lines when N is a multiple of 64 (4096 with B 16 or 63 bytes past a
// line spans 65 lines), and on AVX-512 VNNI the kernels' large-B form, at
// rows on each side of their edges (21 rows: the kernel that takes its row
// count at run time, on AVX-512 VNNI and under AVX2; 12 rows at N = 4100,
// whose 512-column blocks end inside a chunk). At 2048 and 4096 the rows
// share L1 sets, and the kernels from 3 rows spread their prefetches over
// the block's chunks.
TEST(DifferentialRawB, LargeBWideBlocks) {
  std::mt19937 rng(2048);
  struct LargeCase {
    int64_t m, n;
    std::size_t offset;
  };
  for (const LargeCase& c :
       {LargeCase{1, 4160, 1}, LargeCase{2, 4096, 16}, LargeCase{4, 2048, 5}, LargeCase{6, 4096, 63},
        LargeCase{8, 4160, 16}, LargeCase{12, 4100, 7}, LargeCase{16, 4160, 0}, LargeCase{21, 4096, 16}})
    check_b_at_line_offset(rng, c.m, (gemm::kRawBLargeBytes + c.n - 1) / c.n, c.n, c.offset);
}

// K split between the threads (raw_b_small_m.cpp: AVX2 kernels, one batch,
// N up to 4096, up to 8 rows, K of 256 or more per thread): each thread
// sums its own run of B's rows and the parts are added before the
// epilogue. At 1, 2 and 3 threads against the reference: K that splits
// into 2 and 3 parts with an odd last part (777, 1031), N at and around
// the epilogue's 32-column tiles (100, 4096 with B 16 bytes past a line),
// rows at the kernels' edges; QLinearMatMul and MatMulInteger, B packed
// too, zero points per row and per column. Then a K whose sums wrap
// around int32 (70001 products of 255 x 127 = 32385 exceed 2^31), split
// so that neither part wraps alone but their sum does: the parts must add
// modulo 2^32, as one pass over K would.
TEST(DifferentialRawB, SplitKAcrossThreads) {
  std::mt19937 rng(4097);
  struct SplitCase {
    int64_t m, k, n;
    std::size_t offset;
  };
  for (const SplitCase& c : {SplitCase{1, 777, 100, 0}, SplitCase{2, 1031, 4096, 16}, SplitCase{4, 512, 96, 1},
                             SplitCase{5, 777, 33, 0}, SplitCase{8, 1024, 640, 63}}) {
    check_b_at_line_offset(rng, c.m, c.k, c.n, c.offset);
    const Dims d{{c.m, c.k}, {c.k, c.n}};
    expect_every_path_at_1_to_3_threads(make_qcase(rng, d, kIntTypes[rng() % 2], kIntTypes[rng() % 2],
                                                   kIntTypes[rng() % 2], ET::Float32, Layout::Vector,
                                                   Layout::Vector, rng(), 2));
  }
  const int64_t k = 70001, n = 64;
  Tensor a(ET::Uint8, {2, k}), b(ET::Int8, {k, n});
  std::memset(a.raw(), 255, static_cast<std::size_t>(2 * k));
  std::memset(b.raw(), 127, static_cast<std::size_t>(k * n));
  static_cast<unsigned char*>(a.raw())[k] = 254;  // row 1: one product smaller
  const Tensor want = ref::matmul_integer(a, b, std::nullopt, std::nullopt);
  ASSERT_EQ(static_cast<const int32_t*>(want.raw())[0],
            static_cast<int32_t>(static_cast<uint32_t>(k) * 32385u));  // wrapped (hand-worked)
  for (int threads : {1, 2, 3})
    expect_same_any(matmul_integer(a, b, std::nullopt, std::nullopt, with_threads(threads)), want,
                    "2 x 70001 x 64, sums past int32, threads=" + std::to_string(threads));
}

// The even split of column blocks for the static schedule
// (parallel_region.h), on hand-worked counts: at least the blocks wanted,
// no more than the units, and row_tasks * blocks a multiple of the threads
// where the units allow; blocks differ by at most one unit and cover every
// unit once.
TEST(BalancedBlocks, CountsAndEdges) {
  EXPECT_EQ(gemm::balanced_block_count(2, 1, 2, 65), 2);   // 16 x 4096 x 4160: two blocks of 2080
  EXPECT_EQ(gemm::balanced_block_count(3, 1, 2, 12), 4);   // 3 blocks of 768 columns grow to 4
  EXPECT_EQ(gemm::balanced_block_count(1, 9, 2, 10), 2);   // 9 row tasks: the columns split in two
  EXPECT_EQ(gemm::balanced_block_count(3, 3, 2, 12), 4);   // 3 batches x 3 blocks: 12 tasks
  EXPECT_EQ(gemm::balanced_block_count(3, 2, 2, 12), 3);   // 2 batches: 6 tasks already even
  EXPECT_EQ(gemm::balanced_block_count(1, 1, 3, 100), 3);  // 3 threads
  EXPECT_EQ(gemm::balanced_block_count(8, 1, 2, 5), 5);    // never more blocks than units
  EXPECT_EQ(gemm::balanced_block_count(1, 3, 2, 1), 1);    // one unit cannot be split
  EXPECT_EQ(gemm::balanced_block_count(0, 1, 1, 7), 1);    // at least one block
  // 65 lines in 2 blocks: 32 + 33; 130 panels in 8: 16 or 17 each.
  EXPECT_EQ(gemm::balanced_block_begin(1, 2, 65), 32);
  for (const auto& [blocks, units] : {std::pair<int64_t, int64_t>{2, 65}, {8, 130}, {4, 12}, {5, 5}, {3, 100}}) {
    EXPECT_EQ(gemm::balanced_block_begin(0, blocks, units), 0);
    EXPECT_EQ(gemm::balanced_block_begin(blocks, blocks, units), units);
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t size = gemm::balanced_block_begin(b + 1, blocks, units) - gemm::balanced_block_begin(b, blocks, units);
      EXPECT_TRUE(size == units / blocks || size == units / blocks + 1) << blocks << " blocks of " << units;
    }
  }
}

// The raw-B path with A batched over one B, so that the column blocks'
// count grows to split the batches' tasks evenly (3 batches of 3 blocks at
// 2 threads become 3 of 4), and with one block too narrow to split that 2
// threads still split (320 columns): 1, 2 and 3 threads against the
// reference, N = 768 and 320, B at a line start and 5 bytes past one.
TEST(DifferentialRawB, BatchedColumnBlocksSplitEvenly) {
  std::mt19937 rng(768);
  for (const int64_t n : {768, 320})
    for (const std::size_t offset : {0, 5}) {
      const int64_t m = 5, k = 67;
      const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
      const Tensor a = random_int8(rng, at, {3, m, k}, 2), b = random_int8(rng, bt, {k, n}, 2);
      const Tensor a_zp = random_zero_point(rng, at, {}), b_zp = random_zero_point(rng, bt, {n});
      std::vector<unsigned char> storage;
      const TensorView b_placed = place_at_line_offset(b, storage, offset);
      const Tensor want = ref::matmul_integer(a, b, a_zp.view(), b_zp.view());
      const std::string what = "3 x " + std::to_string(m) + " x " + std::to_string(k) + " x " + std::to_string(n) +
                               " B at line offset " + std::to_string(offset);
      for (int threads : {1, 2, 3})
        expect_same_any(matmul_integer(a, b_placed, a_zp.view(), b_zp.view(), with_threads(threads)), want,
                        what + " threads=" + std::to_string(threads));
    }
}

// The driver's row splits for 2 and 3 threads: A with many rows over a
// small B, whose threads share the rows and not the columns (M >= 2N, B of
// at most 256 KB: rows_split_only), including a batched A folded into rows
// and M past one row block (512 rows); and calls whose tasks the columns
// alone cannot split evenly (one panel), where the rows split further.
// Per-row parameters of A and per-column ones of B, so that every row and
// column block meets its own; B unpacked and packed; QLinearMatMul too.
TEST(DifferentialThreads, RowBlocksShareTheRowsOverTheThreads) {
  std::mt19937 rng(2364);
  const Dims dims[] = {{{517, 61}, {61, 64}},   {{300, 37}, {37, 70}},  {{3, 197, 29}, {29, 64}},
                       {{1500, 60}, {60, 32}},  {{50, 300}, {300, 32}}, {{2, 75, 40}, {40, 20}},
                       {{97, 12}, {12, 48}}};
  for (const Dims& d : dims) {
    const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
    QCase c = make_qcase(rng, d, at, bt, kIntTypes[rng() % 2], ET::Float32, Layout::Vector, Layout::Vector, rng(), 2);
    expect_every_path_at_1_to_3_threads(c);
  }
}

// Many row tiles per panel (M = 70, A batched over a shared B and the
// reverse), where the driver prepares each panel's parameters once for all
// its row tiles (PanelParams) when none varies by row: every zero-point
// layout pair for MatMulInteger, and for QLinearMatMul random scale layouts
// with every output-parameter shape, both output types and both rounding
// modes, plus +Inf multiplier columns. N = 70 leaves a partial panel.
TEST(DifferentialPreparedPanels, ManyRowTilesEveryLayout) {
  std::mt19937 rng(7070);
  for (const Dims& d : {Dims{{2, 70, 37}, {37, 70}}, Dims{{70, 37}, {2, 37, 70}}}) {
    for (Layout la : kZeroPointLayouts)
      for (Layout lb : kZeroPointLayouts) {
        const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
        check_zero_point_layout_pair(rng, d, la, lb, at, bt, {1, 2});
      }
    const Shape out = matmul_output_shape(d.a, d.b);
    const auto y_shapes = y_param_shapes(out, true, true);
    for (std::size_t y = 0; y < y_shapes.size(); ++y)
      for (ET yt : kIntTypes)
        for (Requantization mode : {Requantization::OnnxReference, Requantization::OnnxRuntimeCompat}) {
          const Layout la = kOperandLayouts[rng() % 5], lb = kOperandLayouts[rng() % 5];
          Shape tmp;
          if (!param_shape(la, true, d.a, &tmp) || !param_shape(lb, false, d.b, &tmp)) continue;
          const QCase c = make_qcase(rng, d, kIntTypes[rng() % 2], kIntTypes[rng() % 2], yt, ET::Float32, la, lb, y, 2);
          const Tensor want = run_reference(c, mode);
          for (int threads : {1, 2}) expect_same_any(run_library(c, with_threads(threads, mode)), want, c.what);
        }
  }
  // Finite multipliers above 0.5 (4096 in every other column, 0.4096 in the
  // rest), large enough that C * m passes 2^31: the prepared panel must not
  // take the round-then-saturate shortcut that needs every |m| <= 0.5.
  for (ET yt : kIntTypes) {
    QCase c = make_qcase(rng, Dims{{70, 37}, {37, 70}}, ET::Uint8, ET::Int8, yt, ET::Float32, Layout::Scalar,
                         Layout::Scalar, 0, 2);
    std::vector<float> bs(70);
    for (std::size_t j = 0; j < bs.size(); ++j) bs[j] = j % 2 == 0 ? 1.0f : 1e-4f;
    c.a_scale = make_tensor<float>(ET::Float32, {}, {1.0f});
    c.b_scale = make_tensor<float>(ET::Float32, {70}, bs);
    c.y_scale = make_tensor<float>(ET::Float32, {}, {1.0f / 4096.0f});
    c.what = std::string("multipliers 4096 and 0.4096, M = 70, y ") + type_name(yt);
    for (int threads : {1, 2}) expect_same_any(run_library(c, with_threads(threads)), run_reference(c), c.what);
  }
  // Per-column multipliers, one +Inf: the panel is prepared, but its
  // all-finite shortcut must not be taken (int8: 0 * Inf gives 0 + zp, not
  // the low bound).
  for (ET yt : kIntTypes) {
    const QCase c = infinite_multiplier_case(rng, 70, 70, [](int64_t j) { return j == 40; }, yt);
    for (int threads : {1, 2}) expect_same_any(run_library(c, with_threads(threads)), run_reference(c), c.what);
  }
}

// Parameters that change from batch to batch but not along the columns
// ([batches,1,1] for A, B and Y): every panel is prepared, and after a
// thread's first panel only its column term is recomputed (prepare_panel's
// memo), so the memo must notice the batch change. Few rows (one or two
// row tiles per panel, the two-panel form, the raw-B path) and many rows,
// 7 panels a batch, both output types, MatMulInteger too, 1 and 2 threads,
// packed and raw B.
TEST(DifferentialPreparedPanels, PerBatchParametersAcrossPanels) {
  std::mt19937 rng(8080);
  constexpr int64_t kBatches = 3, K = 37, N = 200;
  const Shape per_batch{kBatches, 1, 1};
  for (int64_t m : {1, 3, 9, 20, 40})
    for (ET yt : kIntTypes) {
      QCase c;
      const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
      c.a = random_int8(rng, at, {kBatches, m, K}, 2);
      c.b = random_int8(rng, bt, {kBatches, K, N}, 2);
      c.a_zp = random_zero_point(rng, at, per_batch);
      c.b_zp = random_zero_point(rng, bt, per_batch);
      c.a_scale = random_scale(rng, ET::Float32, per_batch, 0.05f);
      c.b_scale = random_scale(rng, ET::Float32, per_batch, 0.02f);
      c.y_scale = random_scale(rng, ET::Float32, per_batch, 0.05f * 0.02f * 128.0f * 128.0f * 6.0f / 48.0f);
      c.y_zp = random_zero_point(rng, yt, per_batch);
      c.what = case_name(c.a, c.b, {&c.a_scale, &c.a_zp, &c.b_scale, &c.b_zp, &c.y_scale, &c.y_zp});
      const Tensor want = run_reference(c);
      const Tensor want_int = ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
      const PackedB packed = PackedB::pack(c.b);
      for (int threads : {1, 2}) {
        expect_same_any(run_library(c, with_threads(threads)), want, c.what);
        Tensor got(want.type(), want.dims());
        qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp, got.mutable_view(),
                       with_threads(threads));
        expect_same_any(got, want, c.what + " packed");
        expect_same_any(matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view(), with_threads(threads)), want_int,
                        "MatMulInteger " + c.what);
        Tensor got_int(ET::Int32, want_int.dims());
        matmul_integer(c.a, packed, c.a_zp.view(), c.b_zp.view(), got_int.mutable_view(), with_threads(threads));
        expect_same_any(got_int, want_int, "MatMulInteger packed " + c.what);
      }
    }
}

// Weights whose zero point is the B domain's own (0 for int8, 128 for
// uint8), so every zb' = 0: with parameters that do not vary by row, the
// kernel adds the column term itself and the epilogue only requantizes the
// final sums it finds (Tile::final_sums), fusing C * m + y_zero_point into
// one FMA up to K = 8256 (gemm::requant_product_exact) and not beyond. K on
// both sides of that bound, A at its extremes against its type's largest
// zero point (|a - za| up to 255, and za' = 255, so the column term is
// never 0), multipliers all below 0.5 (per tensor) or half of them
// above (per-column b_scale), both output types, five whole row tiles and a
// partial one, a partial panel, raw and packed B, 1 and 2 threads.
TEST(DifferentialPreparedPanels, FinalSumsWhenWeightZeroPointsAreTheDomainZero) {
  std::mt19937 rng(9090);
  constexpr int64_t M = 41, N = 70;
  for (int64_t k : {37, 768, 8256, 8257})
    for (ET bt : kIntTypes)
      for (bool large_multipliers : {false, true}) {
        const ET at = kIntTypes[rng() % 2], yt = kIntTypes[rng() % 2];
        QCase c = make_qcase(rng, Dims{{M, k}, {k, N}}, at, bt, yt, ET::Float32, Layout::Scalar, Layout::Scalar, 0, 1);
        c.a_zp = at == ET::Uint8 ? make_tensor<uint8_t>(ET::Uint8, {}, {255}) : make_tensor<int8_t>(ET::Int8, {}, {127});
        c.b_zp = bt == ET::Int8 ? make_tensor<int8_t>(ET::Int8, {}, {0}) : make_tensor<uint8_t>(ET::Uint8, {}, {128});
        c.a_scale = make_tensor<float>(ET::Float32, {}, {0.05f});
        const float typical = 0.05f * 0.02f * 255.0f * 128.0f * std::sqrt(static_cast<float>(k));
        c.y_scale = make_tensor<float>(ET::Float32, {}, {typical / 48.0f});
        if (large_multipliers) {
          std::vector<float> bs(static_cast<std::size_t>(N));
          for (std::size_t j = 0; j < bs.size(); ++j) bs[j] = j % 2 == 0 ? 0.02f : 0.02f * typical;
          c.b_scale = make_tensor<float>(ET::Float32, {N}, bs);
        } else {
          c.b_scale = make_tensor<float>(ET::Float32, {}, {0.02f});
        }
        std::ostringstream what;
        what << "K=" << k << (large_multipliers ? ", multipliers above 0.5" : "") << ": "
             << case_name(c.a, c.b, {&c.a_scale, &c.a_zp, &c.b_scale, &c.b_zp, &c.y_scale, &c.y_zp});
        const Tensor want = run_reference(c);
        const PackedB packed = PackedB::pack(c.b);
        for (int threads : {1, 2}) {
          expect_same_any(run_library(c, with_threads(threads)), want, what.str());
          Tensor got(want.type(), want.dims());
          qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp, got.mutable_view(),
                         with_threads(threads));
          expect_same_any(got, want, what.str() + ", packed B");
        }
      }
}

// Packed weights: one PackedB reused across calls, shapes, zero points,
// scales and threads (several std::threads at once) gives the reference's
// results, for every type pair and small M (the decode kernels) too.
// Weights packed with their own zero point and scale (PackedB::pack(b,
// b_zero_point, b_scale)), used through the overloads that omit them: the
// reference's results for per-tensor and per-column parameters, a batched B,
// both type pairs and several M; and clear errors for what is missing or
// mistyped.
TEST(DifferentialPackedB, StoredQuantization) {
  std::mt19937 rng(4242);
  for (ET bt : kIntTypes)
    for (const Shape& bdims : {Shape{70, 45}, Shape{3, 33, 20}})
      for (Layout lb : {Layout::Scalar, Layout::Vector}) {
        const int64_t k = bdims[bdims.size() - 2];
        for (int64_t m : {1, 5, 17}) {
          const ET at = kIntTypes[rng() % 2];
          const Dims d{{m, k}, bdims};
          const QCase c = make_qcase(rng, d, at, bt, kIntTypes[rng() % 2], ET::Float32, Layout::Vector, lb, rng(), 0);
          const PackedB packed = PackedB::pack(c.b, c.b_zp.view(), c.b_scale.view());
          ASSERT_TRUE(packed.b_zero_point() && packed.b_scale());
          const Tensor want = run_reference(c);
          for (int threads : {1, 2})
            expect_same_any(qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.y_scale, c.y_zp, with_threads(threads)),
                            want, "stored quantization " + c.what);
          const Tensor want_int = ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
          expect_same_any(matmul_integer(c.a, c.a_zp.view(), packed, with_threads(2)), want_int,
                          "stored zero point " + c.what);
          // Without a stored zero point MatMulInteger uses 0, like an absent input.
          const Tensor want_no_zp = ref::matmul_integer(c.a, c.b, c.a_zp.view(), std::nullopt);
          expect_same_any(matmul_integer(c.a, c.a_zp.view(), PackedB::pack(c.b)), want_no_zp, "no stored zero point");
        }
      }
  const Tensor b(ET::Int8, {4, 3}), s = make_tensor<float>(ET::Float32, {}, {0.5f});
  const Tensor a(ET::Uint8, {2, 4}), za(ET::Uint8, {}), zy(ET::Uint8, {});
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { PackedB::pack(b, Tensor(ET::Uint8, {}), s.view()); })
                .find("b_zero_point has type uint8 but b has type int8"), std::string::npos);
  EXPECT_NE(message([&] { PackedB::pack(b, Tensor(ET::Int8, {}), Tensor(ET::Int32, {}).view()); })
                .find("b_scale has type int32"), std::string::npos);
  EXPECT_NE(message([&] { qlinear_matmul(a, s, za, PackedB::pack(b), s, zy); }).find("packed without b_scale"),
            std::string::npos);
  EXPECT_NE(message([&] { qlinear_matmul(a, s, za, PackedB::pack(b, std::nullopt, s.view()), s, zy); })
                .find("packed without b_zero_point"), std::string::npos);
  // Shapes are checked per call, as when passed: 2 values for 3 columns.
  EXPECT_NE(message([&] { qlinear_matmul(a, s, za, PackedB::pack(b, Tensor(ET::Int8, {2}), s.view()), s, zy); })
                .find("b_zero_point"), std::string::npos);
}

// Packed weights with few rows (M <= 6 on AVX-512 VNNI: one row tile per
// panel, two panels per kernel call): enough panels that every task holds
// several, an odd count per task or in all (a single panel left), a partial
// last panel, and per-row / per-column zero points, whose column sums differ
// between the two panels of a call; 1, 2 and 3 threads.
TEST(DifferentialPackedB, FewRowsManyPanels) {
  std::mt19937 rng(2718);
  for (int64_t m : {1, 2, 3, 4, 5, 6, 7})
    for (const int64_t n : {288, 600, 1024})
      for (const int64_t k : {37, 130}) {
        const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
        const Dims d{{m, k}, {k, n}};
        const QCase c = make_qcase(rng, d, at, bt, kIntTypes[rng() % 2], ET::Float32, Layout::Vector,
                                   Layout::Vector, rng(), static_cast<int>(rng() % 3));
        const PackedB packed = PackedB::pack(c.b);
        const Tensor want = run_reference(c);
        const Tensor want_int = ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
        for (int threads : {1, 2, 3}) {
          expect_same_any(qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp,
                                         with_threads(threads)),
                          want, c.what + " threads=" + std::to_string(threads));
          expect_same_any(matmul_integer(c.a, packed, c.a_zp.view(), c.b_zp.view(), with_threads(threads)),
                          want_int, "MatMulInteger " + c.what + " threads=" + std::to_string(threads));
        }
      }
}

// PackedB::pack at every count of whole panel pairs up to a packing call's
// 16 and past it. The AVX-512 packer (NR = 32: 64 columns a pair) takes the
// pairs in groups of up to 4, as even as possible (5 = 3 + 2, 7 = 4 + 3,
// 17 = 16 + 1 in two calls); the exact AVX2 kernel's and the AVX-VNNI
// kernels' packers (NR = 16: 32 columns a pair) in groups of up to 2, then
// a last odd panel; each group over all of K (pair_groups.h).
// Widths 64p + r, r in {0, 13, 29, 45}, give both odd and even panel
// counts; K with a partial last k-group or none; per-column zero points.
TEST(DifferentialPackedB, EveryPanelPairCount) {
  std::mt19937 rng(1618);
  for (int64_t pairs = 1; pairs <= 17; ++pairs)
    for (const int64_t k : {37, 64}) {
      const int64_t n = 64 * pairs + int64_t{16} * (pairs % 4) - (pairs % 4 == 0 ? 0 : 3);
      const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2];
      const QCase c = make_qcase(rng, Dims{{9, k}, {k, n}}, at, bt, kIntTypes[rng() % 2], ET::Float32,
                                 Layout::Vector, Layout::Vector, rng(), static_cast<int>(rng() % 3));
      const PackedB packed = PackedB::pack(c.b);
      expect_same_any(qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp),
                      run_reference(c), c.what);
      expect_same_any(matmul_integer(c.a, packed, c.a_zp.view(), c.b_zp.view()),
                      ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view()), "MatMulInteger " + c.what);
    }
}

TEST(DifferentialPackedB, ReusedAcrossCallsAndThreads) {
  std::mt19937 rng(31337);
  for (ET bt : kIntTypes) {
    for (const Shape& bdims : {Shape{200, 77}, Shape{2, 64, 33}, Shape{65}}) {
      const Tensor b = random_int8(rng, bt, bdims, 2);
      const PackedB packed = PackedB::pack(b);
      ASSERT_EQ(packed.dims(), bdims);
      ASSERT_EQ(packed.type(), bt);
      const int64_t k = bdims.size() == 1 ? bdims[0] : bdims[bdims.size() - 2];
      std::vector<std::thread> workers;
      std::vector<std::string> failures(4);
      for (int w = 0; w < 4; ++w) {
        workers.emplace_back([&, w] {
          std::mt19937 local(static_cast<unsigned>(w) * 7919u + static_cast<unsigned>(k));
          for (int64_t m : {1, 2, 3, 4, 5, 9, 33}) {
            const ET at = kIntTypes[local() % 2];
            const Dims d{{m, k}, bdims};
            QCase c = make_qcase(local, d, at, bt, kIntTypes[local() % 2], ET::Float32, Layout::Vector,
                                 bdims.size() == 1 ? Layout::Scalar : Layout::Vector, local(), 0);
            c.b = Tensor(b.type(), b.dims());
            std::memcpy(c.b.raw(), b.raw(), b.byte_size());
            const Tensor want = run_reference(c);
            Tensor got(want.type(), want.dims());
            qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp, got.mutable_view(),
                           with_threads(1 + w % 2));
            if (std::memcmp(got.raw(), want.raw(), want.byte_size()) != 0) failures[w] += c.what + "; ";
            const Tensor want_int = ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
            Tensor got_int(ET::Int32, want_int.dims());
            matmul_integer(c.a, packed, c.a_zp.view(), c.b_zp.view(), got_int.mutable_view(), with_threads(2));
            if (std::memcmp(got_int.raw(), want_int.raw(), want_int.byte_size()) != 0)
              failures[w] += "MatMulInteger " + c.what + "; ";
          }
        });
      }
      for (auto& t : workers) t.join();
      for (const auto& f : failures) EXPECT_TRUE(f.empty()) << f;
    }
  }
  EXPECT_THROW(PackedB::pack(Tensor(ET::Float32, {3, 3})), Error);
  Tensor y(ET::Int32, {1, 1});
  EXPECT_THROW(matmul_integer(Tensor(ET::Uint8, {1, 3}), PackedB(), std::nullopt, std::nullopt, y.mutable_view()),
               Error);
}

// Calls made from inside the caller's own OpenMP region, one per thread of
// that team, each with its own problem: the library's task loops must bind
// to a team of its own (or none), never to the caller's, whose threads are
// not running the same call. Problems on every driver path: raw B with few
// rows, packed B, raw B packed inside the tasks (M > 16), 1 and 2 threads.
TEST(DifferentialThreads, CalledFromInsideTheCallersOpenMpRegion) {
  constexpr int kCallers = 3;
  struct Call {
    Tensor a, b, azp, bzp, want;
    bool packed;
    int threads;
  };
  std::mt19937 rng(2027);
  std::vector<std::vector<Call>> calls(kCallers);
  const int64_t ms[] = {1, 5, 13, 40, 77};
  for (int w = 0; w < kCallers; ++w)
    for (int64_t m : ms)
      for (int variant = 0; variant < 4; ++variant) {
        const int64_t k = 64 + 37 * w + 5 * variant, n = 96 + 29 * w + 31 * variant;
        Call c;
        c.a = random_int8(rng, kIntTypes[(w + variant) % 2], {m, k}, 2);
        c.b = random_int8(rng, kIntTypes[variant % 2], {k, n}, 2);
        c.azp = random_zero_point(rng, c.a.type(), {});
        c.bzp = random_zero_point(rng, c.b.type(), {n});
        c.packed = variant >= 2;
        c.threads = 1 + variant % 2;
        c.want = ref::matmul_integer(c.a, c.b, c.azp.view(), c.bzp.view());
        calls[static_cast<std::size_t>(w)].push_back(std::move(c));
      }
  std::vector<std::string> failures(kCallers);
#pragma omp parallel num_threads(kCallers)
  {
    const auto w = static_cast<std::size_t>(omp_get_thread_num());
    for (const Call& c : calls[w]) {
      Tensor got(ET::Int32, c.want.dims());
      if (c.packed)
        matmul_integer(c.a, PackedB::pack(c.b, with_threads(c.threads)), c.azp.view(), c.bzp.view(),
                       got.mutable_view(), with_threads(c.threads));
      else
        matmul_integer(c.a, c.b, c.azp.view(), c.bzp.view(), got.mutable_view(), with_threads(c.threads));
      if (std::memcmp(got.raw(), c.want.raw(), c.want.byte_size()) != 0)
        failures[w] += case_name(c.a, c.b, {&c.azp, &c.bzp}) + (c.packed ? " packed" : "") + " threads=" +
                       std::to_string(c.threads) + "; ";
    }
  }
  for (const auto& f : failures) EXPECT_TRUE(f.empty()) << f;
}

// Options::min_macs_per_thread: one thread per that many units of work, at
// least one, at most Options::threads; 0 keeps every thread (hand-worked).
TEST(DifferentialThreads, ThreadsFollowTheWork) {
  using gemm::threads_for_work;
  EXPECT_EQ(threads_for_work(2, 7'999'999, 4'000'000), 1);
  EXPECT_EQ(threads_for_work(2, 8'000'000, 4'000'000), 2);
  EXPECT_EQ(threads_for_work(4, 12'500'000, 4'000'000), 3);
  EXPECT_EQ(threads_for_work(4, 1e12, 4'000'000), 4);
  EXPECT_EQ(threads_for_work(3, 10, 4'000'000), 1);
  EXPECT_EQ(threads_for_work(1, 1e12, 4'000'000), 1);
  EXPECT_EQ(threads_for_work(2, 10, 0), 2);
  // A call's work: 64x256x256 int8 is 4194304 multiply-adds + 4 x 65536
  // bytes of B; A [3,4,5,6] x B [6,7] is 12 matrices of 5x6x7 (2520
  // multiply-adds, 3 units each for float8) against one B of 42 bytes.
  const api::OpNames names{"MatMul", "A", "B", "Y"};
  EXPECT_EQ(api::call_work(api::analyze_matmul({64, 256}, {256, 256}, names), 1), 4456448.0);
  EXPECT_EQ(api::call_work(api::analyze_matmul({3, 4, 5, 6}, {6, 7}, names), 1), 2688.0);
  EXPECT_EQ(api::call_work(api::analyze_matmul({3, 4, 5, 6}, {6, 7}, names), 3), 7728.0);
}

// Options::measure_thread_cost: the configured work per thread, raised to
// 1.25M units per microsecond of the measured region when that is more
// (hand-worked); 0 (every thread) and an unmeasured cost leave it alone.
TEST(DifferentialThreads, MeasuredRegionCostRaisesTheWorkPerThread) {
  using gemm::work_per_thread_for_region_cost;
  EXPECT_EQ(work_per_thread_for_region_cost(2'000'000, 3.2), 4'000'000);
  EXPECT_EQ(work_per_thread_for_region_cost(2'000'000, 1.0), 2'000'000);
  EXPECT_EQ(work_per_thread_for_region_cost(2'000'000, 1.6), 2'000'000);
  EXPECT_EQ(work_per_thread_for_region_cost(5'000'000, 3.2), 5'000'000);
  EXPECT_EQ(work_per_thread_for_region_cost(0, 3.2), 0);
  EXPECT_EQ(work_per_thread_for_region_cost(2'000'000, 0.0), 2'000'000);
}

// The region is timed outside any parallel region and kept: positive and
// finite with two or more processors, the same on every later call; from
// inside a caller's region, where nothing can be timed, the kept value.
TEST(DifferentialThreads, RegionCostIsMeasuredOnceOutsideRegions) {
  if (omp_get_num_procs() < 2) {
    EXPECT_EQ(gemm::parallel_region_cost_us(), 0.0);
    return;
  }
  const double first = gemm::parallel_region_cost_us();
  EXPECT_GT(first, 0.0);
  EXPECT_LT(first, 1e6);
  EXPECT_EQ(gemm::parallel_region_cost_us(), first);
  double inside = -1.0;
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    inside = gemm::parallel_region_cost_us();
  }
  EXPECT_EQ(inside, first);
}

}  // namespace
}  // namespace qmatmul::testing
