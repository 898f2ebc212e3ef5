// The bad-input catalogue for the C++ API (SEMANTICS.md §6): every rejected
// input raises qmatmul::Error, before any data is read, with a message that
// names the operator and the offending input. ONNX-file and CLI errors are in
// test_onnx_io.cpp and test_cli.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "test_support.h"

namespace qmatmul::testing {
namespace {

struct BadCase {
  std::string name;
  std::function<void()> call;
  std::vector<std::string> message_parts;  // each must appear in the message
};

// Valid default inputs; each case breaks one thing.
struct Inputs {
  Tensor a = Tensor(ET::Uint8, {2, 3});
  Tensor b = Tensor(ET::Int8, {3, 4});
  Tensor a_scale = make_tensor<float>(ET::Float32, {}, {0.5f});
  Tensor b_scale = make_tensor<float>(ET::Float32, {}, {0.25f});
  Tensor y_scale = make_tensor<float>(ET::Float32, {}, {1.0f});
  Tensor a_zp = Tensor(ET::Uint8, {});
  Tensor b_zp = Tensor(ET::Int8, {});
  Tensor y_zp = Tensor(ET::Uint8, {});
  Options options;

  void qlinear() const {
    qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, options);
  }
  void integer() const { matmul_integer(a, b, a_zp.view(), b_zp.view(), options); }
};

template <typename Mutate>
std::function<void()> q(Mutate m) {
  return [m] {
    Inputs in;
    m(in);
    in.qlinear();
  };
}
template <typename Mutate>
std::function<void()> mi(Mutate m) {
  return [m] {
    Inputs in;
    m(in);
    in.integer();
  };
}

Tensor f32s(Shape d, float v) {
  Tensor t(ET::Float32, d);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = v;
  return t;
}

std::vector<BadCase> catalogue() {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<BadCase> c = {
      // Element types.
      {"a float32", q([](Inputs& i) { i.a = Tensor(ET::Float32, {2, 3}); }), {"QLinearMatMul", "a has type float"}},
      {"A int32", mi([](Inputs& i) { i.a = Tensor(ET::Int32, {2, 3}); }), {"MatMulInteger", "A has type int32"}},
      {"B float16", mi([](Inputs& i) { i.b = Tensor(ET::Float16, {3, 4}); }), {"MatMulInteger", "B has type float16"}},
      {"A float8 for MatMulInteger", mi([](Inputs& i) { i.a = Tensor(ET::Float8E4M3FN, {2, 3}); i.a_zp = Tensor(ET::Float8E4M3FN, {}); }),
       {"MatMulInteger", "A", "float8e4m3fn"}},
      {"a float8 under opset 10", q([](Inputs& i) { i.a = Tensor(ET::Float8E5M2, {2, 3}); i.a_zp = Tensor(ET::Float8E5M2, {}); i.options.qlinear_opset = 10; }),
       {"QLinearMatMul", "a", "opset 21"}},
      {"a_zero_point type differs", mi([](Inputs& i) { i.a_zp = Tensor(ET::Int8, {}); }),
       {"MatMulInteger", "a_zero_point has type int8", "A has type uint8"}},
      {"b_zero_point type differs", q([](Inputs& i) { i.b_zp = Tensor(ET::Uint8, {}); }),
       {"QLinearMatMul", "b_zero_point has type uint8", "b has type int8"}},
      {"y_zero_point int32", q([](Inputs& i) { i.y_zp = Tensor(ET::Int32, {}); }), {"QLinearMatMul", "y_zero_point"}},
      {"scale int8", q([](Inputs& i) { i.a_scale = Tensor(ET::Int8, {}); }), {"QLinearMatMul", "a_scale has type int8"}},
      {"scale float64", q([](Inputs& i) { i.y_scale = Tensor(ET::Float64, {}); }), {"QLinearMatMul", "y_scale has type double"}},
      {"scale types differ", q([](Inputs& i) { i.b_scale = Tensor(ET::Float16, {}); i.b_scale.data<uint16_t>()[0] = 0x3C00; }),
       {"QLinearMatMul", "scales have different types", "b_scale float16"}},
      {"float16 scales under opset 10", q([](Inputs& i) {
         for (Tensor* s : {&i.a_scale, &i.b_scale, &i.y_scale}) { *s = Tensor(ET::Float16, {}); s->data<uint16_t>()[0] = 0x3C00; }
         i.options.qlinear_opset = 10; }),
       {"QLinearMatMul", "a_scale has type float16"}},
      {"opset 9", q([](Inputs& i) { i.options.qlinear_opset = 9; }), {"QLinearMatMul", "opset 9"}},
      // Shapes.
      {"K mismatch", mi([](Inputs& i) { i.b = Tensor(ET::Int8, {4, 4}); }), {"MatMulInteger", "A has shape [2,3]", "B has shape [4,4]", "inner dimensions"}},
      {"K mismatch 1-D", q([](Inputs& i) { i.a = Tensor(ET::Uint8, {5}); }), {"QLinearMatMul", "a has shape [5]", "inner dimensions"}},
      {"batch not broadcastable", mi([](Inputs& i) { i.a = Tensor(ET::Uint8, {2, 2, 3}); i.b = Tensor(ET::Int8, {3, 3, 4}); }),
       {"MatMulInteger", "batch dimensions 2 and 3"}},
      {"scalar A", mi([](Inputs& i) { i.a = Tensor(ET::Uint8, {}); }), {"MatMulInteger", "A is a scalar"}},
      {"negative dim", mi([](Inputs& i) { i.a = Tensor(ET::Uint8, {2, 3}); }), {}},  // replaced below
      {"null data", mi([](Inputs&) {}), {}},  // replaced below
      // Parameter layouts.
      {"a_zero_point wrong length", mi([](Inputs& i) { i.a_zp = Tensor(ET::Uint8, {3}); }),
       {"MatMulInteger", "a_zero_point has shape [3]", "A has 2 rows", "[2] or [...,2,1]"}},
      {"b_scale per-column wrong length", q([](Inputs& i) { i.b_scale = f32s({3}, 1.0f); }),
       {"QLinearMatMul: b_scale has shape [3] but b has 4 columns; per-column parameters need shape [4] or [...,1,4]"}},
      {"b_zero_point [K] instead of [N]", mi([](Inputs& i) { i.b_zp = Tensor(ET::Int8, {3}); }), {"MatMulInteger", "b_zero_point has shape [3]"}},
      {"a param [1,M] orientation", q([](Inputs& i) { i.a_scale = f32s({1, 2}, 1.0f); }), {"QLinearMatMul", "a_scale has shape [1,2]"}},
      {"b param [N,1] orientation", q([](Inputs& i) { i.b_zp = Tensor(ET::Int8, {4, 1}); }), {"QLinearMatMul", "b_zero_point has shape [4,1]"}},
      {"a param batch does not broadcast", q([](Inputs& i) { i.a = Tensor(ET::Uint8, {3, 2, 3}); i.a_scale = f32s({2, 2, 1}, 1.0f); }),
       {"QLinearMatMul", "a_scale has shape [2,2,1]", "batch dimensions [3]"}},
      {"a param more dims than a", q([](Inputs& i) { i.a_scale = f32s({1, 2, 1}, 1.0f); }), {"QLinearMatMul", "a_scale has shape [1,2,1]"}},
      {"per-row param for 1-D a", q([](Inputs& i) { i.a = Tensor(ET::Uint8, {3}); i.a_zp = Tensor(ET::Uint8, {1, 1}); }),
       {"QLinearMatMul", "a_zero_point", "a is 1-D"}},
      {"y_scale does not broadcast", q([](Inputs& i) { i.y_scale = f32s({3}, 1.0f); }), {"QLinearMatMul", "y_scale has shape [3]", "output shape [2,4]"}},
      {"y_zero_point too many dims", q([](Inputs& i) { i.y_zp = Tensor(ET::Uint8, {1, 1, 1}); }), {"QLinearMatMul", "y_zero_point has shape [1,1,1]"}},
      // Scale values.
      {"a_scale zero", q([](Inputs& i) { i.a_scale = f32s({}, 0.0f); }), {"QLinearMatMul", "a_scale element 0 is 0"}},
      {"b_scale negative zero", q([](Inputs& i) { i.b_scale = f32s({4}, 1.0f); i.b_scale.data<float>()[2] = -0.0f; }),
       {"QLinearMatMul", "b_scale element 2 is -0"}},
      {"y_scale NaN", q([nan](Inputs& i) { i.y_scale = f32s({}, nan); }), {"QLinearMatMul", "y_scale element 0 is NaN"}},
      {"a_scale infinite", q([inf](Inputs& i) { i.a_scale = f32s({2}, inf); }), {"QLinearMatMul", "a_scale element 0 is infinite"}},
      {"bfloat16 scale NaN", q([](Inputs& i) {
         for (Tensor* s : {&i.a_scale, &i.b_scale, &i.y_scale}) { *s = Tensor(ET::BFloat16, {}); s->data<uint16_t>()[0] = 0x3F80; }
         i.y_scale.data<uint16_t>()[0] = 0x7FC0; }),
       {"QLinearMatMul", "y_scale element 0 is NaN"}},
      {"float16 scale infinite", q([](Inputs& i) {
         for (Tensor* s : {&i.a_scale, &i.b_scale, &i.y_scale}) { *s = Tensor(ET::Float16, {}); s->data<uint16_t>()[0] = 0x3C00; }
         i.b_scale.data<uint16_t>()[0] = 0x7C00; }),
       {"QLinearMatMul", "b_scale element 0 is infinite"}},
      // Options.
      {"negative threads", mi([](Inputs& i) { i.options.threads = -2; }), {"MatMulInteger", "threads is -2"}},
      {"negative min_macs_per_thread", mi([](Inputs& i) { i.options.min_macs_per_thread = -1; }),
       {"MatMulInteger", "min_macs_per_thread is -1"}},
  };
  // Cases that need raw views rather than Tensors.
  c[17] = {"negative dim", [] {
             const uint8_t data[6] = {};
             const int8_t bd[12] = {};
             matmul_integer(TensorView{ET::Uint8, {2, -3}, data}, TensorView{ET::Int8, {3, 4}, bd});
           },
           {"MatMulInteger", "A has shape [2,-3]", "negative"}};
  c[18] = {"null data", [] {
             const int8_t bd[12] = {};
             matmul_integer(TensorView{ET::Uint8, {2, 3}, nullptr}, TensorView{ET::Int8, {3, 4}, bd});
           },
           {"MatMulInteger", "A has shape [2,3] but no data"}};
  c.push_back({"element count overflow", [] {
                 const uint8_t d = 0;
                 const int64_t big = int64_t{1} << 40;
                 matmul_integer(TensorView{ET::Uint8, {big, big, 1}, &d}, TensorView{ET::Uint8, {1, 1}, &d});
               },
               {"overflow"}});
  c.push_back({"output wrong shape", [] {
                 Inputs in;
                 Tensor y(ET::Uint8, {4, 2});
                 qlinear_matmul(in.a, in.a_scale, in.a_zp, in.b, in.b_scale, in.b_zp, in.y_scale, in.y_zp, y.mutable_view());
               },
               {"QLinearMatMul", "output y has shape [4,2]", "[2,4]"}});
  c.push_back({"output wrong type", [] {
                 Inputs in;
                 Tensor y(ET::Int8, {2, 4});
                 qlinear_matmul(in.a, in.a_scale, in.a_zp, in.b, in.b_scale, in.b_zp, in.y_scale, in.y_zp, y.mutable_view());
               },
               {"QLinearMatMul", "output y has type int8", "uint8"}});
  c.push_back({"MatMulInteger output not int32", [] {
                 Inputs in;
                 Tensor y(ET::Uint8, {2, 4});
                 matmul_integer(in.a, in.b, std::nullopt, std::nullopt, y.mutable_view());
               },
               {"MatMulInteger", "output Y has type uint8", "int32"}});
  return c;
}

TEST(BadInput, CatalogueRaisesNamedErrors) {
  const auto cases = catalogue();
  EXPECT_GE(cases.size(), 30u);
  for (const auto& bad : cases) {
    SCOPED_TRACE(bad.name);
    try {
      bad.call();
      ADD_FAILURE() << bad.name << ": no error raised";
    } catch (const Error& e) {
      const std::string msg = e.what();
      for (const auto& part : bad.message_parts)
        EXPECT_NE(msg.find(part), std::string::npos) << bad.name << ": message \"" << msg << "\" lacks \"" << part << "\"";
    } catch (const std::exception& e) {
      ADD_FAILURE() << bad.name << ": raised a non-qmatmul exception: " << e.what();
    }
  }
}

// A bad call must not write the output buffer.
TEST(BadInput, OutputUntouchedOnError) {
  Inputs in;
  in.b_scale = f32s({3}, 1.0f);
  Tensor y(ET::Uint8, {2, 4});
  for (int64_t i = 0; i < y.size(); ++i) y.data<uint8_t>()[i] = 0xAB;
  EXPECT_THROW(qlinear_matmul(in.a, in.a_scale, in.a_zp, in.b, in.b_scale, in.b_zp, in.y_scale, in.y_zp, y.mutable_view()),
               Error);
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_EQ(y.data<uint8_t>()[i], 0xAB);
}

}  // namespace
}  // namespace qmatmul::testing
