// Helpers of the differential suites (test_differential*.cpp): shape
// records, QLinearMatMul cases with every parameter filled in, the library
// and reference calls on a case, bit-for-bit comparison of two outputs, and
// Options that put every thread to work however small the problem. Nothing
// here computes a product itself: expected values come from reference/.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/shapes.h"
#include "reference/reference.h"
#include "test_support.h"

namespace qmatmul::testing {

struct Dims {
  Shape a, b;
};

// The operand-parameter layouts a scale may take (Absent excluded).
inline constexpr Layout kOperandLayouts[] = {Layout::Scalar, Layout::One, Layout::Vector, Layout::BatchedMatrix,
                                             Layout::Matrix11};

// Output-parameter shapes that broadcast to `out` (SEMANTICS.md §2, y row).
inline std::vector<Shape> y_param_shapes(const Shape& out, bool has_m, bool has_n) {
  std::vector<Shape> shapes = {{}, {1}};
  if (has_n) shapes.push_back({out.back()});
  if (has_m && has_n) shapes.push_back({out[out.size() - 2], 1});
  if (!out.empty()) shapes.push_back(out);
  if (out.size() > 2) {
    Shape batch_only = out;
    batch_only[batch_only.size() - 1] = 1;
    batch_only[batch_only.size() - 2] = 1;
    shapes.push_back(batch_only);
  }
  return shapes;
}

inline std::string case_name(const Tensor& a, const Tensor& b, const std::vector<const Tensor*>& params) {
  std::ostringstream os;
  os << "a=" << describe(a) << " b=" << describe(b);
  for (const Tensor* p : params) os << " " << describe(*p);
  return os.str();
}

template <typename T>
inline void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.type(), want.type()) << what;
  ASSERT_EQ(got.dims(), want.dims()) << what;
  for (int64_t i = 0; i < want.size(); ++i)
    if (got.data<T>()[i] != want.data<T>()[i]) {
      FAIL() << what << ": first mismatch at flat index " << i << ": got " << +got.data<T>()[i] << ", expected "
             << +want.data<T>()[i];
    }
}

inline void expect_same_any(const Tensor& got, const Tensor& want, const std::string& what) {
  switch (want.type()) {
    case ET::Int32: expect_same<int32_t>(got, want, what); break;
    case ET::Uint8: expect_same<uint8_t>(got, want, what); break;
    default: expect_same<int8_t>(got, want, what); break;
  }
}

inline Options with_threads(int threads, Requantization mode = Requantization::OnnxReference) {
  Options o;
  o.threads = threads;
  o.min_macs_per_thread = 0;  // every thread, however small the problem
  o.requantization = mode;
  return o;
}

inline constexpr ET kIntTypes[] = {ET::Uint8, ET::Int8};

struct QCase {
  Tensor a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp;
  std::string what;
};

// A QLinearMatMul case whose output scale is chosen from the accumulator's
// typical size, so results spread over the output range and also saturate.
inline QCase make_qcase(std::mt19937& rng, const Dims& d, ET at, ET bt, ET yt, ET st, Layout la, Layout lb,
                 std::size_t y_choice, int style) {
  QCase c;
  Shape azp_dims, bzp_dims, as_dims, bs_dims;
  param_shape(la, true, d.a, &azp_dims);
  param_shape(lb, false, d.b, &bzp_dims);
  // Scales take an independent layout from their zero points.
  const Layout las = kOperandLayouts[rng() % 5], lbs = kOperandLayouts[rng() % 5];
  if (!param_shape(las, true, d.a, &as_dims)) as_dims = {};
  if (!param_shape(lbs, false, d.b, &bs_dims)) bs_dims = {};
  c.a = random_int8(rng, at, d.a, style);
  c.b = random_int8(rng, bt, d.b, style);
  c.a_zp = random_zero_point(rng, at, azp_dims);
  c.b_zp = random_zero_point(rng, bt, bzp_dims);
  c.a_scale = random_scale(rng, st, as_dims, 0.05f);
  c.b_scale = random_scale(rng, st, bs_dims, 0.02f);
  const Shape out = matmul_output_shape(d.a, d.b);
  const auto y_shapes = y_param_shapes(out, d.a.size() > 1, d.b.size() > 1);
  const Shape y_dims = y_shapes[y_choice % y_shapes.size()];
  const int64_t k = d.a.back();
  const float typical = 0.05f * 0.02f * 128.0f * 128.0f * std::sqrt(static_cast<float>(std::max<int64_t>(k, 1)));
  c.y_scale = random_scale(rng, st, y_dims, typical / 48.0f);
  c.y_zp = random_zero_point(rng, yt, y_dims);
  c.what = case_name(c.a, c.b, {&c.a_scale, &c.a_zp, &c.b_scale, &c.b_zp, &c.y_scale, &c.y_zp});
  return c;
}

inline Tensor run_library(const QCase& c, const Options& o) {
  return qlinear_matmul(c.a, c.a_scale, c.a_zp, c.b, c.b_scale, c.b_zp, c.y_scale, c.y_zp, o);
}
inline Tensor run_reference(const QCase& c, Requantization mode = Requantization::OnnxReference) {
  return reference::qlinear_matmul(c.a, c.a_scale, c.a_zp, c.b, c.b_scale, c.b_zp, c.y_scale, c.y_zp, mode);
}

// QLinearMatMul and MatMulInteger on case c, B unpacked and packed, at 1,
// 2 and 3 threads, each against the reference.
inline void expect_every_path_at_1_to_3_threads(const QCase& c) {
  const Tensor want = run_reference(c);
  const Tensor want_int = reference::matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view());
  const PackedB packed = PackedB::pack(c.b);
  for (int threads : {1, 2, 3}) {
    const std::string what = c.what + " threads=" + std::to_string(threads);
    expect_same_any(run_library(c, with_threads(threads)), want, what);
    expect_same_any(qlinear_matmul(c.a, c.a_scale, c.a_zp, packed, c.b_scale, c.b_zp, c.y_scale, c.y_zp,
                                   with_threads(threads)),
                    want, "packed B " + what);
    expect_same_any(matmul_integer(c.a, c.b, c.a_zp.view(), c.b_zp.view(), with_threads(threads)), want_int,
                    "MatMulInteger " + what);
    expect_same_any(matmul_integer(c.a, packed, c.a_zp.view(), c.b_zp.view(), with_threads(threads)), want_int,
                    "MatMulInteger, packed B " + what);
  }
}

// Every zero-point layout, including absent.
inline constexpr Layout kZeroPointLayouts[] = {Layout::Absent, Layout::Scalar,        Layout::One,
                                               Layout::Vector, Layout::BatchedMatrix, Layout::Matrix11};

// MatMulInteger with random operands of types at x bt and zero points of
// layouts la, lb, against the reference at each thread count. Returns false
// (and checks nothing) when a layout does not apply to the shape.
inline bool check_zero_point_layout_pair(std::mt19937& rng, const Dims& d, Layout la, Layout lb, ET at, ET bt,
                                         std::initializer_list<int> thread_counts) {
  Shape azp_dims, bzp_dims;
  if (!param_shape(la, true, d.a, &azp_dims) || !param_shape(lb, false, d.b, &bzp_dims)) return false;
  const Tensor a = random_int8(rng, at, d.a, 2), b = random_int8(rng, bt, d.b, 2);
  const Tensor azp = random_zero_point(rng, at, azp_dims), bzp = random_zero_point(rng, bt, bzp_dims);
  std::optional<TensorView> azv, bzv;
  if (la != Layout::Absent) azv = azp.view();
  if (lb != Layout::Absent) bzv = bzp.view();
  const Tensor want = reference::matmul_integer(a, b, azv, bzv);
  for (int threads : thread_counts)
    expect_same_any(matmul_integer(a, b, azv, bzv, with_threads(threads)), want, case_name(a, b, {&azp, &bzp}));
  return true;
}

// M x 5 x N with per-column multipliers: +Inf (3e38 * 3e38 / 0.5) in the
// columns `infinite` picks, tiny elsewhere; row 0 has C = 0, so 0 * Inf.
inline QCase infinite_multiplier_case(std::mt19937& rng, int64_t M, int64_t N, bool (*infinite)(int64_t j), ET yt) {
  const int64_t K = 5;
  QCase c;
  c.a = random_int8(rng, ET::Uint8, {M, K}, 0);
  c.b = random_int8(rng, ET::Int8, {K, N}, 0);
  for (int64_t k = 0; k < K; ++k) c.a.data<uint8_t>()[k] = 128;
  c.a_zp = make_tensor<uint8_t>(ET::Uint8, {}, {128});
  c.b_zp = make_tensor<int8_t>(ET::Int8, {}, {0});
  c.a_scale = make_tensor<float>(ET::Float32, {}, {3e38f});
  std::vector<float> bs(static_cast<std::size_t>(N));
  for (int64_t j = 0; j < N; ++j) bs[static_cast<std::size_t>(j)] = infinite(j) ? 3e38f : 1e-38f;
  c.b_scale = make_tensor<float>(ET::Float32, {N}, bs);
  c.y_scale = make_tensor<float>(ET::Float32, {}, {0.5f});
  c.y_zp = yt == ET::Uint8 ? make_tensor<uint8_t>(ET::Uint8, {}, {7}) : make_tensor<int8_t>(ET::Int8, {}, {-7});
  c.what = "infinite multiplier columns, M = " + std::to_string(M) + ", y " + type_name(yt);
  return c;
}

}  // namespace qmatmul::testing
