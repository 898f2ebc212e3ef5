// Randomized differential tests: the library (whatever kernel dispatch picks,
// or the one QMATMUL_ISA forces) against the plain reference, bit for bit,
// over every type combination, every quantization-parameter layout, every
// scale type, 1-D / N-D broadcast / empty shapes, sizes around every tile
// edge, full-range and extreme values, and 1 and 3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "differential_support.h"

namespace qmatmul::testing {
namespace {

namespace ref = qmatmul::reference;

// Shapes covering 1-D operands, broadcasting, empty dims and tile edges.
std::vector<Dims> shape_catalogue() {
  std::vector<Dims> s;
  // 2-D, sizes around every plausible MR / NR / k-group edge.
  const int64_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33};
  const int64_t ks[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 63, 64, 65, 129};
  const int64_t ns[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 64, 65, 70};
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    const int64_t m = ms[rng() % std::size(ms)], k = ks[rng() % std::size(ks)], n = ns[rng() % std::size(ns)];
    s.push_back({{m, k}, {k, n}});
  }
  s.push_back({{70, 70}, {70, 70}});
  // 1-D operands.
  s.push_back({{17}, {17, 33}});
  s.push_back({{5, 17}, {17}});
  s.push_back({{65}, {65}});
  s.push_back({{2, 3, 9}, {9}});
  s.push_back({{9}, {2, 9, 5}});
  // Batch broadcasting (SEMANTICS.md §1 examples and more).
  s.push_back({{5, 1, 4, 2}, {1, 3, 2, 3}});
  s.push_back({{4, 2}, {3, 2, 3}});
  s.push_back({{2, 6, 19}, {2, 19, 35}});
  s.push_back({{2, 1, 5, 8}, {8, 17}});
  s.push_back({{3, 9, 12}, {1, 12, 40}});
  // Empty dimensions.
  s.push_back({{0, 5}, {5, 3}});
  s.push_back({{4, 5}, {5, 0}});
  s.push_back({{4, 0}, {0, 3}});
  s.push_back({{0, 4, 5}, {5, 3}});
  s.push_back({{0}, {0}});
  return s;
}

TEST(DifferentialMatMulInteger, EveryTypePairLayoutAndShape) {
  std::mt19937 rng(1234);
  int cases = 0;
  for (const Dims& d : shape_catalogue()) {
    for (ET at : kIntTypes) {
      for (ET bt : kIntTypes) {
        const Layout la = Layout(rng() % 6), lb = Layout(rng() % 6);  // includes Absent
        Shape azp_dims, bzp_dims;
        if (!param_shape(la, true, d.a, &azp_dims) || !param_shape(lb, false, d.b, &bzp_dims)) continue;
        const Tensor a = random_int8(rng, at, d.a, static_cast<int>(rng() % 3));
        const Tensor b = random_int8(rng, bt, d.b, static_cast<int>(rng() % 3));
        const Tensor azp = random_zero_point(rng, at, azp_dims), bzp = random_zero_point(rng, bt, bzp_dims);
        std::optional<TensorView> azv, bzv;
        if (la != Layout::Absent) azv = azp.view();
        if (lb != Layout::Absent) bzv = bzp.view();
        const Tensor want = ref::matmul_integer(a, b, azv, bzv);
        const std::string what = case_name(a, b, {&azp, &bzp}) + " a_zp " + layout_name(la) + " b_zp " +
                                 layout_name(lb);
        for (int threads : {1, 3}) {
          const Tensor got = matmul_integer(a, b, azv, bzv, with_threads(threads));
          expect_same_any(got, want, what + " threads=" + std::to_string(threads));
        }
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 150);
}

// Every operand-parameter layout pair on a fixed batched shape, so coverage
// does not depend on the random draw above.
TEST(DifferentialMatMulInteger, EveryZeroPointLayoutPair) {
  std::mt19937 rng(99);
  const Dims d{{2, 3, 7, 37}, {3, 37, 21}};
  for (Layout la : kZeroPointLayouts)
    for (Layout lb : kZeroPointLayouts)
      for (ET at : kIntTypes)
        for (ET bt : kIntTypes) EXPECT_TRUE(check_zero_point_layout_pair(rng, d, la, lb, at, bt, {2}));
}

TEST(DifferentialQLinearMatMul, EveryTypeComboScaleTypeLayoutAndShape) {
  std::mt19937 rng(5678);
  int cases = 0;
  const ET scale_types[] = {ET::Float32, ET::Float16, ET::BFloat16};
  for (const Dims& d : shape_catalogue()) {
    for (ET at : kIntTypes)
      for (ET bt : kIntTypes)
        for (ET yt : kIntTypes) {
          const ET st = scale_types[rng() % 3];
          const Layout la = kOperandLayouts[rng() % 5], lb = kOperandLayouts[rng() % 5];
          Shape tmp;
          if (!param_shape(la, true, d.a, &tmp) || !param_shape(lb, false, d.b, &tmp)) continue;
          const QCase c = make_qcase(rng, d, at, bt, yt, st, la, lb, rng(), static_cast<int>(rng() % 3));
          const Tensor want = run_reference(c);
          for (int threads : {1, 3}) expect_same_any(run_library(c, with_threads(threads)), want, c.what);
          ++cases;
        }
  }
  EXPECT_GT(cases, 300);
}

TEST(DifferentialQLinearMatMul, EveryOutputParameterShape) {
  std::mt19937 rng(42);
  for (const Dims& d : {Dims{{2, 5, 19}, {2, 19, 23}}, Dims{{19}, {3, 19, 23}}, Dims{{2, 5, 19}, {19}},
                        Dims{{9, 19}, {19, 40}}}) {
    const Shape out = matmul_output_shape(d.a, d.b);
    const auto shapes = y_param_shapes(out, d.a.size() > 1, d.b.size() > 1);
    for (std::size_t y = 0; y < shapes.size(); ++y)
      for (ET yt : kIntTypes) {
        const QCase c = make_qcase(rng, d, ET::Uint8, ET::Int8, yt, ET::Float32, Layout::Scalar, Layout::Scalar, y, 0);
        expect_same_any(run_library(c, with_threads(2)), run_reference(c), c.what);
      }
  }
}

TEST(DifferentialQLinearMatMul, OnnxRuntimeCompatibilityMode) {
  std::mt19937 rng(77);
  for (int i = 0; i < 60; ++i) {
    const auto cat = shape_catalogue();
    const Dims& d = cat[rng() % cat.size()];
    const ET at = kIntTypes[rng() % 2], bt = kIntTypes[rng() % 2], yt = kIntTypes[rng() % 2];
    Shape tmp;
    const Layout la = kOperandLayouts[rng() % 5], lb = kOperandLayouts[rng() % 5];
    if (!param_shape(la, true, d.a, &tmp) || !param_shape(lb, false, d.b, &tmp)) continue;
    const QCase c = make_qcase(rng, d, at, bt, yt, ET::Float32, la, lb, rng(), 0);
    const Tensor want = run_reference(c, Requantization::OnnxRuntimeCompat);
    expect_same_any(run_library(c, with_threads(2, Requantization::OnnxRuntimeCompat)), want, c.what);
  }
}

// Multipliers that overflow to +Inf in some columns (per-column b_scale),
// finite in others, with accumulators of 0 and of both signs: the fast
// paths' shortcut for all-finite multipliers must not change a result.
TEST(DifferentialQLinearMatMul, InfiniteMultiplierColumns) {
  std::mt19937 rng(77);
  for (ET yt : kIntTypes)
    for (Requantization mode : {Requantization::OnnxReference, Requantization::OnnxRuntimeCompat}) {
      const QCase c = infinite_multiplier_case(rng, 9, 40, [](int64_t j) { return j % 4 == 1; }, yt);
      Options o;
      o.requantization = mode;
      const Tensor want = run_reference(c, mode);
      for (int threads : {1, 2}) {
        o.threads = threads;
        o.min_macs_per_thread = 0;
        expect_same_any(run_library(c, o), want, c.what);
      }
    }
}

// Sizes in the hundreds and K in the thousands: several row blocks, column
// splits across threads and long reductions; B packed inside the tasks (one
// row block) and packed whole first (several row blocks: 601 x 1101, or a B
// shared by batches: 3 x 2 x 4096).
TEST(DifferentialLarge, HundredsAndLongK) {
  std::mt19937 rng(2024);
  const Dims dims[] = {{{200, 300}, {300, 150}}, {{67, 3001}, {3001, 70}}, {{1, 5000}, {5000, 130}},
                       {{3, 2, 4096}, {4096, 33}}, {{129, 513}, {513, 257}}, {{601, 1101}, {1101, 97}}};
  for (const Dims& d : dims) {
    for (ET at : kIntTypes) {
      const ET bt = kIntTypes[rng() % 2];
      const QCase c = make_qcase(rng, d, at, bt, ET::Uint8, ET::Float32, Layout::Vector, Layout::Vector, rng(), 2);
      const Tensor want = run_reference(c);
      for (int threads : {1, 2}) expect_same_any(run_library(c, with_threads(threads)), want, c.what);
      const Tensor want_int = ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
      expect_same_any(matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view(), with_threads(2)), want_int, c.what);
    }
  }
}

// A batched A over one B, which the library computes as one taller product
// when every parameter continues across the batches (per tensor, per
// column, or per row given for every batch) and batch by batch otherwise
// (per-row parameters shared by the batches, or per-batch ones): every
// zero-point layout pair of QLinearMatMul and MatMulInteger, scales and
// output parameters of random layouts, B plain and packed, 1 and 2 threads.
// 3 x 3 rows fold into 9 (the raw-B path), 3 x 5 into 15 (the tile
// kernels, where 5 rows alone take the raw-B path), 2 x 40 into 80 (two
// row blocks of tiles), and B given with a batch dimension of 1 folds too.
TEST(DifferentialBatchedA, FoldedIntoRowsOrBatchByBatch) {
  std::mt19937 rng(915);
  const Dims dims[] = {{{3, 3, 64}, {64, 200}}, {{3, 5, 67}, {67, 96}}, {{2, 40, 33}, {1, 33, 70}}};
  int cases = 0;
  for (const Dims& d : dims)
    for (Layout la : kZeroPointLayouts)
      for (Layout lb : kZeroPointLayouts) {
        Shape azp_dims, bzp_dims;
        if (la == Layout::Absent || lb == Layout::Absent || !param_shape(la, true, d.a, &azp_dims) ||
            !param_shape(lb, false, d.b, &bzp_dims))
          continue;
        const QCase c = make_qcase(rng, d, kIntTypes[rng() % 2], kIntTypes[rng() % 2], kIntTypes[rng() % 2],
                                   ET::Float32, la, lb, rng(), 2);
        const Tensor want = run_reference(c);
        const Tensor want_int = ref::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
        const PackedB packed = PackedB::pack(c.b);
        for (int threads : {1, 2}) {
          const std::string what = c.what + " threads=" + std::to_string(threads);
          expect_same_any(run_library(c, with_threads(threads)), want, what);
          Tensor got(want.type(), want.dims());
          qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp, got.mutable_view(),
                         with_threads(threads));
          expect_same_any(got, want, what + " packed");
          expect_same_any(matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view(), with_threads(threads)), want_int,
                          "MatMulInteger " + what);
        }
        ++cases;
      }
  EXPECT_GE(cases, 3 * 16);
}

}  // namespace
}  // namespace qmatmul::testing
