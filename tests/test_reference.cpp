// Tests of the test oracle (reference/) itself, against values worked out by
// hand (the arithmetic is in the comments) or published in the ONNX operator
// texts: never against values the code under test printed. Everything else in
// the suite trusts the oracle, so this file is what the oracle trusts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "reference/reference.h"

namespace qmatmul {
namespace {

namespace ref = qmatmul::reference;
using ET = ElementType;

template <typename T>
Tensor make(ElementType type, Shape dims, const std::vector<T>& values) {
  Tensor t(type, std::move(dims));
  EXPECT_EQ(static_cast<std::size_t>(t.size()), values.size());
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(T));
  return t;
}
Tensor u8(Shape dims, const std::vector<uint8_t>& v) { return make(ET::Uint8, std::move(dims), v); }
Tensor s8(Shape dims, const std::vector<int8_t>& v) { return make(ET::Int8, std::move(dims), v); }
Tensor f32(Shape dims, const std::vector<float>& v) { return make(ET::Float32, std::move(dims), v); }
Tensor f16(Shape dims, const std::vector<uint16_t>& v) { return make(ET::Float16, std::move(dims), v); }
Tensor bf16(Shape dims, const std::vector<uint16_t>& v) { return make(ET::BFloat16, std::move(dims), v); }
Tensor f8(ElementType t, Shape dims, const std::vector<uint8_t>& v) { return make(t, std::move(dims), v); }
Tensor one() { return f32({}, {1.0f}); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.size());
}

// Two's complement wrap of an int64 to int32, done in int64 arithmetic.
int32_t wrap32(int64_t x) {
  const int64_t two32 = int64_t{1} << 32;
  int64_t r = ((x % two32) + two32) % two32;
  if (r >= (int64_t{1} << 31)) r -= two32;
  return static_cast<int32_t>(r);
}

// ---------------------------------------------------------------- MatMulInteger

// The four examples of spec/MatMulInteger-10.txt.
TEST(ReferenceMatMulInteger, SpecExampleUint8) {
  Tensor y = ref::matmul_integer(u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}),
                                 u8({3, 2}, {1, 4, 2, 5, 3, 6}), u8({1}, {12}), u8({1}, {0}));
  EXPECT_EQ(y.type(), ET::Int32);
  EXPECT_EQ(y.dims(), (Shape{4, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
}

TEST(ReferenceMatMulInteger, SpecExampleInt8) {
  Tensor y = ref::matmul_integer(s8({2, 3}, {1, -2, 3, -4, 5, -6}), s8({3, 2}, {1, 2, -3, 4, 5, -6}),
                                 s8({}, {1}), s8({}, {-1}));
  EXPECT_EQ(y.dims(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{18, -25, -60, 40}));
}

TEST(ReferenceMatMulInteger, SpecExamplePerColumnB) {
  Tensor y = ref::matmul_integer(u8({2, 3}, {11, 7, 3, 10, 6, 2}), u8({3, 2}, {1, 4, 2, 5, 3, 6}),
                                 std::nullopt, u8({2}, {1, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{13, 55, 10, 46}));
}

TEST(ReferenceMatMulInteger, SpecExamplePerRowA) {
  Tensor y = ref::matmul_integer(u8({2, 3}, {11, 7, 3, 10, 6, 2}), u8({3, 2}, {1, 4, 2, 5, 3, 6}),
                                 u8({2}, {1, 2}), std::nullopt);
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{28, 82, 16, 52}));
}

TEST(ReferenceMatMulInteger, ExtremeProductsAreExact) {
  // u8 255 x s8 -128, twice: 2 * (255 * -128) = -65280.
  EXPECT_EQ(values<int32_t>(ref::matmul_integer(u8({1, 2}, {255, 255}), s8({2, 1}, {-128, -128}),
                                                std::nullopt, std::nullopt)),
            (std::vector<int32_t>{-65280}));
  // b_zp 127: (255 - 0) * (-128 - 127) = -65025 per k; two k: -130050.
  EXPECT_EQ(values<int32_t>(ref::matmul_integer(u8({1, 2}, {255, 255}), s8({2, 1}, {-128, -128}),
                                                u8({}, {0}), s8({}, {127}))),
            (std::vector<int32_t>{-130050}));
  // s8 (-128 - 127) * u8 (0 - 255) = (-255) * (-255) = 65025.
  EXPECT_EQ(values<int32_t>(ref::matmul_integer(s8({1, 1}, {-128}), u8({1, 1}, {0}),
                                                s8({}, {127}), u8({}, {255}))),
            (std::vector<int32_t>{65025}));
}

TEST(ReferenceMatMulInteger, Int32AccumulationWraps) {
  struct Case {
    int64_t K;
    uint8_t a, a_zp;
    int64_t exact;  // K * (a - a_zp) * 255
    int32_t wrapped;
  };
  const Case cases[] = {
      // 40000 * 65025 = 2,601,000,000 = 2^32 - 1,693,967,296 -> -1,693,967,296.
      {40000, 255, 0, 2601000000LL, -1693967296},
      // -2,601,000,000 + 2^32 = 1,693,967,296.
      {40000, 0, 255, -2601000000LL, 1693967296},
      // 70000 * 65025 = 4,551,750,000 - 2^32 = 256,782,704 (more than one full turn).
      {70000, 255, 0, 4551750000LL, 256782704},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(wrap32(c.exact), c.wrapped);
    Tensor a = u8({1, c.K}, std::vector<uint8_t>(static_cast<std::size_t>(c.K), c.a));
    Tensor b = u8({c.K, 1}, std::vector<uint8_t>(static_cast<std::size_t>(c.K), 255));
    Tensor y = ref::matmul_integer(a, b, u8({}, {c.a_zp}), std::nullopt);
    EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{c.wrapped})) << "K=" << c.K;
  }
}

TEST(ReferenceMatMulInteger, BroadcastBatch5x1By1x3) {
  // A[b0,0,i,k] = 10*b0 + 2*i + k, B[0,b1,k,j] = 6*b1 + 3*k + j.
  std::vector<uint8_t> av, bv;
  for (int b0 = 0; b0 < 5; ++b0)
    for (int i = 0; i < 4; ++i)
      for (int k = 0; k < 2; ++k) av.push_back(static_cast<uint8_t>(10 * b0 + 2 * i + k));
  for (int b1 = 0; b1 < 3; ++b1)
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 3; ++j) bv.push_back(static_cast<uint8_t>(6 * b1 + 3 * k + j));
  Tensor y = ref::matmul_integer(u8({5, 1, 4, 2}, av), u8({1, 3, 2, 3}, bv), std::nullopt, std::nullopt);
  ASSERT_EQ(y.dims(), (Shape{5, 3, 4, 3}));
  auto at = [&](int b0, int b1, int i, int j) { return y.data<int32_t>()[((b0 * 3 + b1) * 4 + i) * 3 + j]; };
  EXPECT_EQ(at(0, 0, 0, 0), 3);     // A = [0,1], B col = [0,3]: 0 + 3
  EXPECT_EQ(at(2, 1, 1, 2), 429);   // A = [22,23], B col = [8,11]: 176 + 253
  EXPECT_EQ(at(4, 2, 3, 1), 1350);  // A = [46,47], B col = [13,16]: 598 + 752
}

TEST(ReferenceMatMulInteger, BroadcastRank2ByRank3) {
  // A[i,k] = 2*i + k (shape [4,2]), B[b,k,j] = 6*b + 3*k + j (shape [3,2,3]).
  std::vector<uint8_t> av, bv;
  for (int i = 0; i < 8; ++i) av.push_back(static_cast<uint8_t>(i));
  for (int b = 0; b < 3; ++b)
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 3; ++j) bv.push_back(static_cast<uint8_t>(6 * b + 3 * k + j));
  Tensor y = ref::matmul_integer(u8({4, 2}, av), u8({3, 2, 3}, bv), std::nullopt, std::nullopt);
  ASSERT_EQ(y.dims(), (Shape{3, 4, 3}));
  auto at = [&](int b, int i, int j) { return y.data<int32_t>()[(b * 4 + i) * 3 + j]; };
  EXPECT_EQ(at(0, 0, 0), 3);    // [0,1] . [0,3]
  EXPECT_EQ(at(1, 2, 0), 69);   // [4,5] . [6,9] = 24 + 45
  EXPECT_EQ(at(2, 3, 2), 203);  // [6,7] . [14,17] = 84 + 119
}

TEST(ReferenceMatMulInteger, OneDimensionalOperands) {
  Tensor row = u8({3}, {11, 7, 3});
  Tensor mat = u8({3, 2}, {1, 4, 2, 5, 3, 6});
  // [3] x [3,2] -> [2]: 11+14+9 = 34, 44+35+18 = 97.
  Tensor y1 = ref::matmul_integer(row, mat, std::nullopt, std::nullopt);
  EXPECT_EQ(y1.dims(), (Shape{2}));
  EXPECT_EQ(values<int32_t>(y1), (std::vector<int32_t>{34, 97}));
  // [2,3] x [3] -> [2]: 11+14+9 = 34, 10+12+6 = 28.
  Tensor y2 = ref::matmul_integer(u8({2, 3}, {11, 7, 3, 10, 6, 2}), u8({3}, {1, 2, 3}), std::nullopt,
                                  std::nullopt);
  EXPECT_EQ(y2.dims(), (Shape{2}));
  EXPECT_EQ(values<int32_t>(y2), (std::vector<int32_t>{34, 28}));
  // [3] x [3] -> []: 34.
  Tensor y3 = ref::matmul_integer(row, u8({3}, {1, 2, 3}), std::nullopt, std::nullopt);
  EXPECT_EQ(y3.dims(), (Shape{}));
  EXPECT_EQ(values<int32_t>(y3), (std::vector<int32_t>{34}));
  // [3] x [2,3,2] -> [2,2]: batch 1 is all ones: 11+7+3 = 21.
  Tensor y4 = ref::matmul_integer(row, u8({2, 3, 2}, {1, 4, 2, 5, 3, 6, 1, 1, 1, 1, 1, 1}),
                                  std::nullopt, std::nullopt);
  EXPECT_EQ(y4.dims(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(y4), (std::vector<int32_t>{34, 97, 21, 21}));
  // [2,2,3] x [3] -> [2,2]: batch 1 rows [1,1,1] -> 6, [0,0,1] -> 3.
  Tensor y5 = ref::matmul_integer(u8({2, 2, 3}, {11, 7, 3, 10, 6, 2, 1, 1, 1, 0, 0, 1}),
                                  u8({3}, {1, 2, 3}), std::nullopt, std::nullopt);
  EXPECT_EQ(y5.dims(), (Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(y5), (std::vector<int32_t>{34, 28, 6, 3}));
}

TEST(ReferenceMatMulInteger, ZeroDims) {
  Tensor y1 = ref::matmul_integer(u8({0, 3}, {}), u8({3, 2}, {1, 2, 3, 4, 5, 6}), std::nullopt, std::nullopt);
  EXPECT_EQ(y1.dims(), (Shape{0, 2}));
  EXPECT_EQ(y1.size(), 0);
  // K = 0: every accumulator is 0, zero points notwithstanding.
  Tensor y2 = ref::matmul_integer(u8({2, 0}, {}), u8({0, 3}, {}), u8({}, {7}), u8({}, {9}));
  EXPECT_EQ(y2.dims(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(y2), (std::vector<int32_t>(6, 0)));
  Tensor y3 = ref::matmul_integer(u8({0, 2, 3}, {}), u8({1, 3, 2}, {1, 2, 3, 4, 5, 6}), std::nullopt,
                                  std::nullopt);
  EXPECT_EQ(y3.dims(), (Shape{0, 2, 2}));
  EXPECT_EQ(y3.size(), 0);
  Tensor y4 = ref::matmul_integer(u8({2, 0}, {}), u8({0}, {}), std::nullopt, std::nullopt);
  EXPECT_EQ(y4.dims(), (Shape{2}));
  EXPECT_EQ(values<int32_t>(y4), (std::vector<int32_t>{0, 0}));
}

TEST(ReferenceMatMulInteger, PerBatchPerRowAndPerColumnZeroPoints) {
  // A [2,2,1] = batch0 [5;6], batch1 [7;8]; B [2,1,2] = batch0 [10 20], batch1 [30 40].
  Tensor a = u8({2, 2, 1}, {5, 6, 7, 8});
  Tensor b = u8({2, 1, 2}, {10, 20, 30, 40});
  // a_zp [2,2,1] = [1;3],[4;8] -> a diffs [4;3],[3;0]; b_zp [2,1,2] = [0 10],[20 0] -> [10 10],[10 40].
  Tensor y = ref::matmul_integer(a, b, u8({2, 2, 1}, {1, 3, 4, 8}), u8({2, 1, 2}, {0, 10, 20, 0}));
  EXPECT_EQ(y.dims(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{40, 40, 30, 30, 30, 120, 0, 0}));
  // Leading dims broadcast: a_zp [1,2,1] = [1;3] -> diffs [4;3],[6;5]; b_zp [1,1] = 10 -> [0 10],[20 30].
  Tensor y2 = ref::matmul_integer(a, b, u8({1, 2, 1}, {1, 3}), u8({1, 1}, {10}));
  EXPECT_EQ(values<int32_t>(y2), (std::vector<int32_t>{0, 40, 0, 30, 120, 180, 100, 150}));
}

TEST(ReferenceMatMulInteger, PerBatchParamsFollowTheirOwnTensor) {
  // A [2,1,1,1] = [5,9], a_zp [2,1,1,1] = [1,2] -> [4,7]; B [3,1,1] = [1,2,3], b_zp [3,1,1] =
  // [0,0,1] -> [1,2,2]. Output [2,3,1,1] = outer product [4,8,8, 7,14,14].
  Tensor y = ref::matmul_integer(u8({2, 1, 1, 1}, {5, 9}), u8({3, 1, 1}, {1, 2, 3}),
                                 u8({2, 1, 1, 1}, {1, 2}), u8({3, 1, 1}, {0, 0, 1}));
  EXPECT_EQ(y.dims(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(values<int32_t>(y), (std::vector<int32_t>{4, 8, 8, 7, 14, 14}));
}

// ---------------------------------------------------------------- QLinearMatMul

// The published example of the ONNX QLinearMatMul operator documentation.
// Element [0,0] by hand: a-113 = [95,123,-113,125], b[:,0]-114 = [38,-54,-114,13],
// C = 3610 - 6642 + 12882 + 1625 = 11475; m = 0.0066*0.00705/0.0107 ~ 0.0043486;
// 11475*m ~ 49.90; + 118 -> 168.
TEST(ReferenceQLinearMatMul, OnnxDocumentationExample) {
  Tensor y = ref::qlinear_matmul(u8({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}), f32({}, {0.0066f}),
                                 u8({}, {113}),
                                 u8({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}),
                                 f32({}, {0.00705f}), u8({}, {114}), f32({}, {0.0107f}), u8({}, {118}));
  EXPECT_EQ(y.type(), ET::Uint8);
  EXPECT_EQ(y.dims(), (Shape{2, 3}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
}

TEST(ReferenceQLinearMatMul, RoundsHalfToEven) {
  // A = [1], B = [5 7 -5 -7 3 1], m = 1 * 0.5 / 1 = 0.5: v = 2.5 3.5 -2.5 -3.5 1.5 0.5.
  Tensor a = u8({1, 1}, {1});
  Tensor b = s8({1, 6}, {5, 7, -5, -7, 3, 1});
  Tensor half = f32({}, {0.5f});
  Tensor y = ref::qlinear_matmul(a, one(), u8({}, {0}), b, half, s8({}, {0}), one(), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{2, 4, -2, -4, 2, 0}));
  // y_zp 100: 102.5 103.5 97.5 96.5 101.5 100.5.
  Tensor y2 = ref::qlinear_matmul(a, one(), u8({}, {0}), b, half, s8({}, {0}), one(), u8({}, {100}));
  EXPECT_EQ(values<uint8_t>(y2), (std::vector<uint8_t>{102, 104, 98, 96, 102, 100}));
}

TEST(ReferenceQLinearMatMul, Saturates) {
  // A = [100, 1], B columns give C = 200, -200, 127, -128, 128, -129 (m = 1).
  Tensor a = u8({1, 2}, {100, 1});
  Tensor b = s8({2, 6}, {2, -2, 1, -1, 1, -1, 0, 0, 27, -28, 28, -29});
  Tensor y_u8 = ref::qlinear_matmul(a, one(), u8({}, {0}), b, one(), s8({}, {0}), one(), u8({}, {128}));
  // + 128: 328, -72, 255, 0, 256, -1.
  EXPECT_EQ(values<uint8_t>(y_u8), (std::vector<uint8_t>{255, 0, 255, 0, 255, 0}));
  Tensor y_s8 = ref::qlinear_matmul(a, one(), u8({}, {0}), b, one(), s8({}, {0}), one(), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y_s8), (std::vector<int8_t>{127, -128, 127, -128, 127, -128}));
  Tensor y_s8m1 = ref::qlinear_matmul(a, one(), u8({}, {0}), b, one(), s8({}, {0}), one(), s8({}, {-1}));
  // - 1: 199, -201, 126, -129, 127, -130.
  EXPECT_EQ(values<int8_t>(y_s8m1), (std::vector<int8_t>{127, -128, 126, -128, 127, -128}));
}

TEST(ReferenceQLinearMatMul, UsesTheWrappedAccumulator) {
  // C = 40000 * 255 * 255 wraps to -1,693,967,296 (see Int32AccumulationWraps); m = 2^-24;
  // -1693967296 / 16777216 = -100.97 (16777216 * 101 = 1694498816) -> -101.
  // Without the wrap it would be 155.03 -> 127.
  const int64_t K = 40000;
  Tensor a = u8({1, K}, std::vector<uint8_t>(K, 255));
  Tensor b = u8({K, 1}, std::vector<uint8_t>(K, 255));
  Tensor y = ref::qlinear_matmul(a, f32({}, {std::ldexp(1.0f, -24)}), u8({}, {0}), b, one(), u8({}, {0}),
                                 one(), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{-101}));
}

TEST(ReferenceQLinearMatMul, PerRowAndPerColumnParameters) {
  // a - a_zp[M] (= [8,20]): [[2,4],[0,2]]; b - b_zp[N] (= [1,0]): [[0,2],[2,4]].
  // C = [[8,20],[4,8]].
  Tensor a = u8({2, 2}, {10, 12, 20, 22});
  Tensor b = u8({2, 2}, {1, 2, 3, 4});
  Tensor a_zp = u8({2}, {8, 20});
  Tensor b_zp = u8({2}, {1, 0});
  Tensor a_scale = f32({2}, {1.0f, 2.0f});        // per row
  Tensor b_scale = f32({1, 2}, {0.5f, 0.25f});    // per column, rank 2
  // y_scale per column [1,2]: m = [[0.5,0.125],[1,0.25]], v = [[4,2.5],[4,2]] + 10.
  Tensor y = ref::qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, f32({2}, {1.0f, 2.0f}), u8({}, {10}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{14, 12, 14, 12}));
  // y_scale per row [[1],[2]]: m = [[0.5,0.25],[0.5,0.25]], v = [[4,5],[2,2]];
  // y_zp per column [10,20].
  Tensor y2 = ref::qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, f32({2, 1}, {1.0f, 2.0f}),
                                  u8({2}, {10, 20}));
  EXPECT_EQ(values<uint8_t>(y2), (std::vector<uint8_t>{14, 25, 12, 22}));
}

TEST(ReferenceQLinearMatMul, ScalarZeroPointWithPerRowScale) {
  // a - 8: [[2,4],[12,14]]; b - 1: [[0,1],[2,3]]; C = [[8,14],[28,54]].
  // a_scale [M,1] = [0.5;0.25], b_scale [N] = [1,0.5]: m = [[0.5,0.25],[0.25,0.125]],
  // v = [[4,3.5],[7,6.75]] -> [[4,4],[7,7]].
  Tensor y = ref::qlinear_matmul(u8({2, 2}, {10, 12, 20, 22}), f32({2, 1}, {0.5f, 0.25f}), u8({}, {8}),
                                 u8({2, 2}, {1, 2, 3, 4}), f32({2}, {1.0f, 0.5f}), u8({1}, {1}), one(),
                                 s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{4, 4, 7, 7}));
}

TEST(ReferenceQLinearMatMul, PerBatchScales) {
  // A [2,1,1] = [3,5], B [1,2] = [1,2]: C batch0 = [3,6], batch1 = [5,10].
  // a_scale [2,1,1] = [1,0.5] per batch; b_scale [1,2] = [1,0.5] per column:
  // m = [1,0.5],[0.5,0.25]; v = [3,3],[2.5,2.5] -> [3,3],[2,2].
  Tensor y = ref::qlinear_matmul(u8({2, 1, 1}, {3, 5}), f32({2, 1, 1}, {1.0f, 0.5f}), u8({}, {0}),
                                 u8({1, 2}, {1, 2}), f32({1, 2}, {1.0f, 0.5f}), u8({}, {0}), one(),
                                 u8({}, {0}));
  EXPECT_EQ(y.dims(), (Shape{2, 1, 2}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{3, 3, 2, 2}));
}

TEST(ReferenceQLinearMatMul, OutputParamsFollowTheRealOutputShape) {
  // [2] x [2,2] -> [2]: C = [1*1+2*3, 1*2+2*4] = [7,10]; y_scale [2] = [1,2] -> [7,5].
  Tensor y = ref::qlinear_matmul(u8({2}, {1, 2}), one(), u8({}, {0}), u8({2, 2}, {1, 2, 3, 4}), one(),
                                 u8({}, {0}), f32({2}, {1.0f, 2.0f}), u8({}, {0}));
  EXPECT_EQ(y.dims(), (Shape{2}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{7, 5}));
  // [2,2] x [2] -> [2] (the last output axis is M): C = [3,7]; y_scale [2] = [1,2] -> [3, 3.5 -> 4].
  Tensor y2 = ref::qlinear_matmul(u8({2, 2}, {1, 2, 3, 4}), one(), u8({}, {0}), u8({2}, {1, 1}), one(),
                                  u8({}, {0}), f32({2}, {1.0f, 2.0f}), u8({}, {0}));
  EXPECT_EQ(y2.dims(), (Shape{2}));
  EXPECT_EQ(values<uint8_t>(y2), (std::vector<uint8_t>{3, 4}));
}

TEST(ReferenceQLinearMatMul, EmptyK) {
  // K = 0: C = 0, v = y_zp.
  Tensor y = ref::qlinear_matmul(u8({2, 0}, {}), one(), u8({}, {3}), u8({0, 2}, {}), one(), u8({}, {4}),
                                 one(), u8({}, {7}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{7, 7, 7, 7}));
}

TEST(ReferenceQLinearMatMul, MultiplierRoundsTwiceInFloat32) {
  // a_scale * b_scale = 2^-75 * 2^-75 = 2^-150, half the smallest float32 subnormal: a tie,
  // rounded to even, 0. m = 0 / 2^-149 = 0, so v = y_zp = 5 for C = 3. (In double:
  // m = 0.5, v = 6.5 -> 6.)
  Tensor y = ref::qlinear_matmul(u8({1, 1}, {3}), f32({}, {std::ldexp(1.0f, -75)}), u8({}, {0}),
                                 u8({1, 1}, {1}), f32({}, {std::ldexp(1.0f, -75)}), u8({}, {0}),
                                 f32({}, {std::ldexp(1.0f, -149)}), u8({}, {5}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{5}));
}

TEST(ReferenceQLinearMatMul, Float16Scales) {
  // 0x0001 = 2^-24; 0x3800 = 0.5. a*b = 2^-25 (in float32; float16 would underflow to 0),
  // / 2^-24 = 0.5. C = [5,7] -> 2.5, 3.5 -> [2,4].
  Tensor y = ref::qlinear_matmul(u8({1, 1}, {1}), f16({}, {0x0001}), u8({}, {0}), s8({1, 2}, {5, 7}),
                                 f16({}, {0x3800}), s8({}, {0}), f16({}, {0x0001}), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{2, 4}));
  // 0x3C00 = 1.0 everywhere: v = C.
  Tensor y2 = ref::qlinear_matmul(u8({1, 1}, {1}), f16({}, {0x3C00}), u8({}, {0}), s8({1, 2}, {5, -7}),
                                  f16({}, {0x3C00}), s8({}, {0}), f16({}, {0x3C00}), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y2), (std::vector<int8_t>{5, -7}));
}

TEST(ReferenceQLinearMatMul, BFloat16Scales) {
  // 0x4000 = 2, 0x3F00 = 0.5, 0x4040 = 3: m = f32(1/3) = 0.333333343...;
  // C = [3,9,-15] -> v = 1.0000000298, 3.0000000894, -5.000000149 -> [1,3,-5].
  Tensor y = ref::qlinear_matmul(u8({1, 1}, {3}), bf16({}, {0x4000}), u8({}, {0}), s8({1, 3}, {1, 3, -5}),
                                 bf16({}, {0x3F00}), s8({}, {0}), bf16({}, {0x4040}), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{1, 3, -5}));
  // y_scale 0x3E80 = 0.25: m = 4; C = [1,3,-5] * 3 -> v = [12,36,-60] + 100 (uint8).
  Tensor y2 = ref::qlinear_matmul(u8({1, 1}, {3}), bf16({}, {0x4000}), u8({}, {0}), s8({1, 3}, {1, 3, -5}),
                                  bf16({}, {0x3F00}), s8({}, {0}), bf16({}, {0x3E80}), u8({}, {100}));
  EXPECT_EQ(values<uint8_t>(y2), (std::vector<uint8_t>{112, 136, 40}));
}

TEST(ReferenceQLinearMatMul, OnnxRuntimeCompatDiffers) {
  // m = 0.1f = 13421773 * 2^-27; C = 5: exact 5m = 67108865 * 2^-27 = 0.50000000745 -> 1.
  // ORT: f32(5m) rounds 2^26+1 to 2^26 -> 0.5 -> 0.
  Tensor a = u8({1, 1}, {5});
  Tensor b = u8({1, 1}, {1});
  Tensor s = f32({}, {0.1f});
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, s, u8({}, {0}), b, one(), u8({}, {0}), one(),
                                                u8({}, {0}))),
            (std::vector<uint8_t>{1}));
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, s, u8({}, {0}), b, one(), u8({}, {0}), one(),
                                                u8({}, {0}), Requantization::OnnxRuntimeCompat)),
            (std::vector<uint8_t>{0}));

  // C = 2^24 + 1 = 258 * 65025 + 255 * 3 + 2 * 1; m = 2^-25.
  // Exact: 0.5 + 2^-25 -> 1. ORT: f32(C) = 2^24, * 2^-25 = 0.5 -> 0.
  std::vector<uint8_t> av(258, 255), bv(258, 255);
  av.push_back(255);
  bv.push_back(3);
  av.push_back(2);
  bv.push_back(1);
  Tensor a2 = u8({1, 260}, av);
  Tensor b2 = u8({260, 1}, bv);
  EXPECT_EQ(values<int32_t>(ref::matmul_integer(a2, b2, std::nullopt, std::nullopt)),
            (std::vector<int32_t>{16777217}));
  Tensor s2 = f32({}, {std::ldexp(1.0f, -25)});
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a2, s2, u8({}, {0}), b2, one(), u8({}, {0}), one(),
                                                u8({}, {0}))),
            (std::vector<uint8_t>{1}));
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a2, s2, u8({}, {0}), b2, one(), u8({}, {0}), one(),
                                                u8({}, {0}), Requantization::OnnxRuntimeCompat)),
            (std::vector<uint8_t>{0}));
}

TEST(ReferenceQLinearMatMul, InfiniteMultiplier) {
  // 3e38 * 3e38 overflows float32: m = +Inf. C = [0, 1, -1] (a - a_zp = 1, b = [0,1,-1]).
  // Default: v = NaN -> 0, +Inf -> 255, -Inf -> 0. ORT: rne(NaN) counts as 0, + y_zp 7 -> 7.
  Tensor a = u8({1, 1}, {2});
  Tensor b = s8({1, 3}, {0, 1, -1});
  Tensor big = f32({}, {3e38f});
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, big, u8({}, {1}), b, big, s8({}, {0}), one(),
                                                u8({}, {7}))),
            (std::vector<uint8_t>{0, 255, 0}));
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, big, u8({}, {1}), b, big, s8({}, {0}), one(),
                                                u8({}, {7}), Requantization::OnnxRuntimeCompat)),
            (std::vector<uint8_t>{7, 255, 0}));
}

// ---------------------------------------------------------------- number formats

TEST(ReferenceNumeric, Float16ToFloat) {
  EXPECT_EQ(ref::float16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(ref::float16_to_float(0xC000), -2.0f);
  EXPECT_EQ(ref::float16_to_float(0x3555), 0.333251953125f);  // (1 + 341/1024) / 4
  EXPECT_EQ(ref::float16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(ref::float16_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(ref::float16_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(ref::float16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(ref::float16_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(ref::float16_to_float(0x7E00)));
  EXPECT_TRUE(std::signbit(ref::float16_to_float(0x8000)));
}

TEST(ReferenceNumeric, BFloat16ToFloat) {
  EXPECT_EQ(ref::bfloat16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(ref::bfloat16_to_float(0xBF80), -1.0f);
  EXPECT_EQ(ref::bfloat16_to_float(0x4040), 3.0f);
  EXPECT_EQ(ref::bfloat16_to_float(0x3EAB), 0.333984375f);  // (1 + 43/128) / 4
  EXPECT_EQ(ref::bfloat16_to_float(0x0001), std::ldexp(1.0f, -133));
}

TEST(ReferenceFloat8, Decode) {
  const float inf = std::numeric_limits<float>::infinity();
  // e4m3fn: bias 7, NaN = S.1111.111, no infinities.
  EXPECT_EQ(ref::float8_to_float(0x38, ET::Float8E4M3FN), 1.0f);
  EXPECT_EQ(ref::float8_to_float(0xB8, ET::Float8E4M3FN), -1.0f);
  EXPECT_EQ(ref::float8_to_float(0x7E, ET::Float8E4M3FN), 448.0f);
  EXPECT_EQ(ref::float8_to_float(0x01, ET::Float8E4M3FN), std::ldexp(1.0f, -9));
  EXPECT_EQ(ref::float8_to_float(0x08, ET::Float8E4M3FN), std::ldexp(1.0f, -6));
  EXPECT_EQ(ref::float8_to_float(0x78, ET::Float8E4M3FN), 256.0f);
  EXPECT_TRUE(std::isnan(ref::float8_to_float(0x7F, ET::Float8E4M3FN)));
  EXPECT_TRUE(std::isnan(ref::float8_to_float(0xFF, ET::Float8E4M3FN)));
  EXPECT_TRUE(std::signbit(ref::float8_to_float(0x80, ET::Float8E4M3FN)));
  // e4m3fnuz: bias 8, NaN = 0x80.
  EXPECT_EQ(ref::float8_to_float(0x40, ET::Float8E4M3FNUZ), 1.0f);
  EXPECT_EQ(ref::float8_to_float(0xC0, ET::Float8E4M3FNUZ), -1.0f);
  EXPECT_EQ(ref::float8_to_float(0x7F, ET::Float8E4M3FNUZ), 240.0f);
  EXPECT_EQ(ref::float8_to_float(0x01, ET::Float8E4M3FNUZ), std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isnan(ref::float8_to_float(0x80, ET::Float8E4M3FNUZ)));
  // e5m2: bias 15, Inf = S.11111.00, NaN = S.11111.xx (xx != 0).
  EXPECT_EQ(ref::float8_to_float(0x3C, ET::Float8E5M2), 1.0f);
  EXPECT_EQ(ref::float8_to_float(0x7B, ET::Float8E5M2), 57344.0f);
  EXPECT_EQ(ref::float8_to_float(0x01, ET::Float8E5M2), std::ldexp(1.0f, -16));
  EXPECT_EQ(ref::float8_to_float(0x7C, ET::Float8E5M2), inf);
  EXPECT_EQ(ref::float8_to_float(0xFC, ET::Float8E5M2), -inf);
  EXPECT_TRUE(std::isnan(ref::float8_to_float(0x7D, ET::Float8E5M2)));
  EXPECT_TRUE(std::isnan(ref::float8_to_float(0xFF, ET::Float8E5M2)));
  // e5m2fnuz: bias 16, NaN = 0x80.
  EXPECT_EQ(ref::float8_to_float(0x40, ET::Float8E5M2FNUZ), 1.0f);
  EXPECT_EQ(ref::float8_to_float(0x7F, ET::Float8E5M2FNUZ), 57344.0f);
  EXPECT_EQ(ref::float8_to_float(0x01, ET::Float8E5M2FNUZ), std::ldexp(1.0f, -17));
  EXPECT_TRUE(std::isnan(ref::float8_to_float(0x80, ET::Float8E5M2FNUZ)));
}

bool is_nan_code(uint8_t code, ElementType t) { return std::isnan(ref::float8_to_float(code, t)); }

TEST(ReferenceFloat8, EncodeE4M3FN) {
  const double inf = std::numeric_limits<double>::infinity();
  const ET t = ET::Float8E4M3FN;
  EXPECT_EQ(ref::float8_from_double(1.0, t), 0x38);
  EXPECT_EQ(ref::float8_from_double(-1.0, t), 0xB8);
  EXPECT_EQ(ref::float8_from_double(448.0, t), 0x7E);
  EXPECT_EQ(ref::float8_from_double(464.0, t), 0x7E);  // saturates
  EXPECT_EQ(ref::float8_from_double(1e9, t), 0x7E);
  EXPECT_EQ(ref::float8_from_double(inf, t), 0x7E);
  EXPECT_EQ(ref::float8_from_double(-inf, t), 0xFE);
  EXPECT_TRUE(is_nan_code(ref::float8_from_double(std::nan(""), t), t));
  // Ties between 1.0 (0x38), 1.125 (0x39), 1.25 (0x3A): to the even code.
  EXPECT_EQ(ref::float8_from_double(1.0625, t), 0x38);
  EXPECT_EQ(ref::float8_from_double(1.1875, t), 0x3A);
  // Just above a tie: one rounding from double (via float32 it would become the tie).
  EXPECT_EQ(ref::float8_from_double(1.0625 + std::ldexp(1.0, -30), t), 0x39);
  EXPECT_EQ(ref::float8_from_double(1.0625 - std::ldexp(1.0, -30), t), 0x38);
  // Subnormals: step 2^-9. Half of it ties to 0; 1.5 steps ties to 2 steps.
  EXPECT_EQ(ref::float8_from_double(std::ldexp(1.0, -10), t), 0x00);
  EXPECT_EQ(ref::float8_from_double(std::ldexp(3.0, -10), t), 0x02);
  EXPECT_EQ(ref::float8_from_double(-std::ldexp(1.0, -10), t), 0x80);  // -0 kept
  EXPECT_EQ(ref::float8_from_double(-0.0, t), 0x80);
}

TEST(ReferenceFloat8, EncodeE5M2) {
  const double inf = std::numeric_limits<double>::infinity();
  const ET t = ET::Float8E5M2;
  EXPECT_EQ(ref::float8_from_double(1.0, t), 0x3C);
  EXPECT_EQ(ref::float8_from_double(57344.0, t), 0x7B);
  EXPECT_EQ(ref::float8_from_double(60000.0, t), 0x7B);
  EXPECT_EQ(ref::float8_from_double(inf, t), 0x7B);  // saturate: no Inf output
  EXPECT_EQ(ref::float8_from_double(-inf, t), 0xFB);
  EXPECT_TRUE(is_nan_code(ref::float8_from_double(std::nan(""), t), t));
  EXPECT_EQ(ref::float8_from_double(1.125, t), 0x3C);  // tie 1.0 / 1.25
  EXPECT_EQ(ref::float8_from_double(1.375, t), 0x3E);  // tie 1.25 / 1.5
  EXPECT_EQ(ref::float8_from_double(-0.25, t), 0xB4);
}

TEST(ReferenceFloat8, EncodeFnuz) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ref::float8_from_double(1.0, ET::Float8E4M3FNUZ), 0x40);
  EXPECT_EQ(ref::float8_from_double(240.0, ET::Float8E4M3FNUZ), 0x7F);
  EXPECT_EQ(ref::float8_from_double(1000.0, ET::Float8E4M3FNUZ), 0x7F);
  EXPECT_EQ(ref::float8_from_double(-inf, ET::Float8E4M3FNUZ), 0xFF);
  EXPECT_EQ(ref::float8_from_double(std::nan(""), ET::Float8E4M3FNUZ), 0x80);
  EXPECT_EQ(ref::float8_from_double(-0.0, ET::Float8E4M3FNUZ), 0x00);  // no -0
  EXPECT_EQ(ref::float8_from_double(-std::ldexp(1.0, -12), ET::Float8E4M3FNUZ), 0x00);
  EXPECT_EQ(ref::float8_from_double(1.0, ET::Float8E5M2FNUZ), 0x40);
  EXPECT_EQ(ref::float8_from_double(inf, ET::Float8E5M2FNUZ), 0x7F);
  EXPECT_EQ(ref::float8_from_double(std::nan(""), ET::Float8E5M2FNUZ), 0x80);
  EXPECT_EQ(ref::float8_from_double(-0.0, ET::Float8E5M2FNUZ), 0x00);
}

TEST(ReferenceFloat8, EveryCodeRoundTrips) {
  for (ET t : {ET::Float8E4M3FN, ET::Float8E4M3FNUZ, ET::Float8E5M2, ET::Float8E5M2FNUZ}) {
    for (int code = 0; code < 256; ++code) {
      const float v = ref::float8_to_float(static_cast<uint8_t>(code), t);
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(ref::float8_from_double(v, t), code) << type_name(t) << " code " << code;
    }
  }
}

TEST(ReferenceFloat8, QLinearMatMulE4M3FN) {
  // A = [1.0 (0x38), 2.0 (0x40)]; B = [[1.5 (0x3C), 2.25 (0x41)], [0.5 (0x30), 0.3125 (0x2A)]].
  // C = [1.5 + 1.0, 2.25 + 0.625] = [2.5, 2.875].
  const ET e4 = ET::Float8E4M3FN;
  Tensor a = f8(e4, {1, 2}, {0x38, 0x40});
  Tensor b = f8(e4, {2, 2}, {0x3C, 0x41, 0x30, 0x2A});
  Tensor zero = f8(e4, {}, {0x00});
  // 2.5 = 0x42 exactly; 2.875 ties 2.75 (0x43) / 3.0 (0x44) -> 0x44.
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, one(), zero, b, one(), zero, one(), zero)),
            (std::vector<uint8_t>{0x42, 0x44}));
  // y_zp 1.0: 3.5 = 0x46; 3.875 ties 3.75 (0x47) / 4.0 (0x48) -> 0x48.
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, one(), zero, b, one(), zero, one(), f8(e4, {}, {0x38}))),
            (std::vector<uint8_t>{0x46, 0x48}));
  // a_zp 1.0: a_f = [0,1], C = [0.5, 0.3125] -> 0x30, 0x2A.
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, one(), f8(e4, {}, {0x38}), b, one(), zero, one(), zero)),
            (std::vector<uint8_t>{0x30, 0x2A}));
  // Integer output: 2.5 -> 2, 2.875 -> 3.
  EXPECT_EQ(values<int8_t>(ref::qlinear_matmul(a, one(), zero, b, one(), zero, one(), s8({}, {0}))),
            (std::vector<int8_t>{2, 3}));
  // e4m3fnuz output: 2.5 = 1.25 * 2^1 -> exponent 9: 0x4A; 2.875 ties 0x4B / 0x4C -> 0x4C.
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, one(), zero, b, one(), zero, one(),
                                                f8(ET::Float8E4M3FNUZ, {}, {0x00}))),
            (std::vector<uint8_t>{0x4A, 0x4C}));
  // a_scale 1000: 2500 and 2875 saturate to 448 (0x7E).
  EXPECT_EQ(values<uint8_t>(ref::qlinear_matmul(a, f32({}, {1000.0f}), zero, b, one(), zero, one(), zero)),
            (std::vector<uint8_t>{0x7E, 0x7E}));
}

TEST(ReferenceFloat8, MixedIntegerAndFloat8Inputs) {
  // a - 1 = [2,4]; b = e5m2 [1.5 (0x3E), -0.25 (0xB4)]: C = 3 - 1 = 2; m = 1.5; v = 3 + 10.
  Tensor y = ref::qlinear_matmul(u8({1, 2}, {3, 5}), f32({}, {1.5f}), u8({}, {1}),
                                 f8(ET::Float8E5M2, {2, 1}, {0x3E, 0xB4}), one(),
                                 f8(ET::Float8E5M2, {}, {0x00}), one(), u8({}, {10}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{13}));
}

TEST(ReferenceFloat8, AccumulatesInFloat64) {
  // Products 57344^2, 1, -57344^2: in float64 C = 1; a left-to-right float32 sum would lose
  // the 1 (57344^2 + 1 needs 32 bits) and give 0.
  const ET e5 = ET::Float8E5M2;
  Tensor y = ref::qlinear_matmul(f8(e5, {1, 3}, {0x7B, 0x3C, 0xFB}), one(), f8(e5, {}, {0x00}),
                                 f8(e5, {3, 1}, {0x7B, 0x3C, 0x7B}), one(), f8(e5, {}, {0x00}), one(),
                                 s8({}, {0}));
  EXPECT_EQ(values<int8_t>(y), (std::vector<int8_t>{1}));
}

}  // namespace
}  // namespace qmatmul
