// Hand-worked cases run through the library (not the reference): the spec's
// worked examples, rounding ties, saturation, the full 8-bit range, int32
// wrap-around, and the ONNX Runtime compatibility mode where it differs from
// the default. Every expected value is derived in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace qmatmul::testing {
namespace {

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Tensor u8(Shape d, std::vector<uint8_t> v) { return make_tensor(ET::Uint8, std::move(d), v); }
Tensor s8(Shape d, std::vector<int8_t> v) { return make_tensor(ET::Int8, std::move(d), v); }
Tensor f32(Shape d, std::vector<float> v) { return make_tensor(ET::Float32, std::move(d), v); }

TEST(ExactMatMulInteger, SpecExamples) {
  const Tensor b = u8({3, 2}, {1, 4, 2, 5, 3, 6});
  EXPECT_EQ(values<int32_t>(matmul_integer(u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}), b,
                                           u8({1}, {12}).view(), u8({1}, {0}).view())),
            (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
  EXPECT_EQ(values<int32_t>(matmul_integer(s8({2, 3}, {1, -2, 3, -4, 5, -6}), s8({3, 2}, {1, 2, -3, 4, 5, -6}),
                                           s8({}, {1}).view(), s8({}, {-1}).view())),
            (std::vector<int32_t>{18, -25, -60, 40}));
  const Tensor a2 = u8({2, 3}, {11, 7, 3, 10, 6, 2});
  EXPECT_EQ(values<int32_t>(matmul_integer(a2, b, std::nullopt, u8({2}, {1, 2}).view())),
            (std::vector<int32_t>{13, 55, 10, 46}));
  EXPECT_EQ(values<int32_t>(matmul_integer(a2, b, u8({2}, {1, 2}).view(), std::nullopt)),
            (std::vector<int32_t>{28, 82, 16, 52}));
}

// u8 255 x s8 -128: the product a 16-bit pair sum would saturate on.
// K = 40: 40 * 255 * -128 = -1305600 for every element.
TEST(ExactMatMulInteger, FullRangeNeverSaturates) {
  const int64_t m = 5, k = 40, n = 67;
  const Tensor a = u8({m, k}, std::vector<uint8_t>(m * k, 255));
  const Tensor b = s8({k, n}, std::vector<int8_t>(k * n, -128));
  for (int threads : {1, 2}) {
    Options o;
    o.threads = threads;
    o.min_macs_per_thread = 0;  // two threads even for this small problem
    const Tensor y = matmul_integer(a, b, std::nullopt, std::nullopt, o);
    EXPECT_EQ(values<int32_t>(y), std::vector<int32_t>(m * n, -1305600));
  }
  // With zero points: (255 - 0) * (-128 - 127) = -65025 per k; K = 40 -> -2601000.
  const Tensor y = matmul_integer(a, b, u8({}, {0}).view(), s8({}, {127}).view());
  EXPECT_EQ(values<int32_t>(y), std::vector<int32_t>(m * n, -2601000));
}

// (0 - 255) * (0 - 255) = 65025 per k (uint8 zero points 255, data 0).
// K = 40000: 2601000000, which wraps to 2601000000 - 2^32 = -1693967296.
TEST(ExactMatMulInteger, Int32WrapAround) {
  const int64_t k = 40000;
  const Tensor a = u8({2, k}, std::vector<uint8_t>(2 * k, 0));
  const Tensor b = u8({k, 3}, std::vector<uint8_t>(k * 3, 0));
  const Tensor y = matmul_integer(a, b, u8({}, {255}).view(), u8({}, {255}).view());
  EXPECT_EQ(values<int32_t>(y), std::vector<int32_t>(6, -1693967296));
}

// y = rne(C * m + zp) with m = 0.5 (a_scale 1, b_scale 0.5, y_scale 1):
// C = 5 -> 2.5 -> 2, C = 7 -> 3.5 -> 4, C = 1 -> 0.5 -> 0, C = 3 -> 1.5 -> 2.
TEST(ExactQLinearMatMul, RoundsHalfToEven) {
  const Tensor a = u8({4, 1}, {5, 7, 1, 3});
  const Tensor b = u8({1, 1}, {1});
  const Tensor y = qlinear_matmul(a, f32({}, {1.0f}), u8({}, {0}), b, f32({}, {0.5f}), u8({}, {0}), f32({}, {1.0f}),
                                  u8({}, {0}));
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{2, 4, 0, 2}));
  // Negative ties with int8 output: C = -5 -> -2.5 -> -2; C = -7 -> -3.5 -> -4.
  const Tensor as = s8({2, 1}, {-5, -7});
  const Tensor ys = qlinear_matmul(as, f32({}, {1.0f}), s8({}, {0}), s8({1, 1}, {1}), f32({}, {0.5f}), s8({}, {0}),
                                   f32({}, {1.0f}), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(ys), (std::vector<int8_t>{-2, -4}));
}

// Saturation: C = 255 * 255 = 65025 with m = 1 -> 255 (uint8) / 127 (int8);
// C = -65025 -> 0 / -128.
TEST(ExactQLinearMatMul, Saturates) {
  const Tensor a = u8({2, 1}, {255, 0});
  const Tensor b = u8({1, 1}, {255});
  const auto run = [&](const Tensor& yzp) {
    return qlinear_matmul(a, f32({}, {1.0f}), u8({}, {0}), b, f32({}, {1.0f}), u8({}, {0}), f32({}, {1.0f}), yzp);
  };
  EXPECT_EQ(values<uint8_t>(run(u8({}, {0}))), (std::vector<uint8_t>{255, 0}));
  EXPECT_EQ(values<int8_t>(run(s8({}, {0}))), (std::vector<int8_t>{127, 0}));
  const Tensor neg = qlinear_matmul(a, f32({}, {1.0f}), u8({}, {0}), b, f32({}, {1.0f}), u8({}, {255}),
                                    f32({}, {1.0f}), s8({}, {0}));
  // b_zero_point 255 makes b - zb = 0, so C = 0 on both rows.
  EXPECT_EQ(values<int8_t>(neg), (std::vector<int8_t>{0, 0}));
  // b = 0 with b_zero_point 255: row 0 is 255 * (0 - 255) = -65025 -> -128.
  const Tensor low = qlinear_matmul(a, f32({}, {1.0f}), u8({}, {0}), u8({1, 1}, {0}), f32({}, {1.0f}),
                                    u8({}, {255}), f32({}, {1.0f}), s8({}, {0}));
  EXPECT_EQ(values<int8_t>(low), (std::vector<int8_t>{-128, 0}));
}

// Where ORT's float32 arithmetic differs from the default float64 one.
// C = 645 * 255*255 + 10*190 + 4*4 = 41943041 = 2.5 * 2^24 + 1, m = 2^-24:
//   default: 41943041 * 2^-24 = 2.50000006 -> 3
//   ORT:     f32(41943041) = 41943040 (spacing 4 there), * 2^-24 = 2.5 -> 2
TEST(ExactQLinearMatMul, OnnxRuntimeCompatibilityDiffers) {
  std::vector<uint8_t> a(647, 255), b(647, 255);
  a[645] = 10;
  b[645] = 190;
  a[646] = 4;
  b[646] = 4;
  const Tensor ta = u8({1, 647}, a), tb = u8({647, 1}, b);
  const float s = std::ldexp(1.0f, -12);
  const auto run = [&](Requantization mode) {
    Options o;
    o.requantization = mode;
    return qlinear_matmul(ta, f32({}, {s}), u8({}, {0}), tb, f32({}, {s}), u8({}, {0}), f32({}, {1.0f}),
                          u8({}, {0}), o);
  };
  EXPECT_EQ(values<uint8_t>(run(Requantization::OnnxReference)), (std::vector<uint8_t>{3}));
  EXPECT_EQ(values<uint8_t>(run(Requantization::OnnxRuntimeCompat)), (std::vector<uint8_t>{2}));
}

// float16 scale 0x0001 is the smallest subnormal, 2^-24; computed in half
// precision a_scale * b_scale would underflow to 0. Widened: m = 2^-24 * 2^24
// / 1 = 1, so y = C = 3 * 2 = 6.
TEST(ExactQLinearMatMul, Float16SubnormalScaleIsWidenedExactly) {
  const Tensor a = u8({1, 1}, {3}), b = u8({1, 1}, {2});
  const Tensor as = make_tensor<uint16_t>(ET::Float16, {}, {0x0001});
  const Tensor bs = make_tensor<uint16_t>(ET::Float16, {}, {0x6C00});  // 2^12 = 4096
  const Tensor ys = make_tensor<uint16_t>(ET::Float16, {}, {0x0C00});  // 2^-12
  const Tensor y = qlinear_matmul(a, as, u8({}, {0}), b, bs, u8({}, {0}), ys, u8({}, {0}));
  // m = f32(2^-24 * 2^12) / 2^-12 = 1 -> 6.
  EXPECT_EQ(values<uint8_t>(y), (std::vector<uint8_t>{6}));
  // bfloat16: 0x3F80 = 1.0, 0x4000 = 2.0, 0x3F00 = 0.5: m = 1 * 2 / 0.5 = 4 -> 24.
  const Tensor y2 = qlinear_matmul(a, make_tensor<uint16_t>(ET::BFloat16, {}, {0x3F80}), u8({}, {0}), b,
                                   make_tensor<uint16_t>(ET::BFloat16, {}, {0x4000}), u8({}, {0}),
                                   make_tensor<uint16_t>(ET::BFloat16, {}, {0x3F00}), u8({}, {0}));
  EXPECT_EQ(values<uint8_t>(y2), (std::vector<uint8_t>{24}));
}

// Shapes: numpy.matmul output shapes of SEMANTICS.md §1.
TEST(ExactShapes, OutputShapes) {
  EXPECT_EQ(matmul_output_shape({5, 1, 4, 2}, {1, 3, 2, 3}), (Shape{5, 3, 4, 3}));
  EXPECT_EQ(matmul_output_shape({4, 2}, {3, 2, 3}), (Shape{3, 4, 3}));
  EXPECT_EQ(matmul_output_shape({7}, {7, 3}), (Shape{3}));
  EXPECT_EQ(matmul_output_shape({2, 7}, {7}), (Shape{2}));
  EXPECT_EQ(matmul_output_shape({7}, {7}), (Shape{}));
  EXPECT_EQ(matmul_output_shape({2, 0, 7}, {7, 3}), (Shape{2, 0, 3}));
}

// K = 0: every accumulator is 0, so y = y_zero_point; MatMulInteger gives 0.
TEST(ExactShapes, EmptyReduction) {
  const Tensor a(ET::Uint8, {3, 0}), b(ET::Int8, {0, 2});
  EXPECT_EQ(values<int32_t>(matmul_integer(a, b, u8({}, {7}).view(), s8({}, {-3}).view())),
            std::vector<int32_t>(6, 0));
  const Tensor y = qlinear_matmul(a, f32({}, {1.0f}), u8({}, {9}), b, f32({}, {1.0f}), s8({}, {4}), f32({}, {1.0f}),
                                  u8({}, {42}));
  EXPECT_EQ(values<uint8_t>(y), std::vector<uint8_t>(6, 42));
}

}  // namespace
}  // namespace qmatmul::testing
