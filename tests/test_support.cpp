// Definitions of tests/test_support.h.
#include "test_support.h"

#include <cmath>

namespace qmatmul::testing {

namespace {
uint16_t float_to_half_bits(float f) {
  // Only used for test scales, which are normal and well inside float16's
  // range; truncation is fine because the test reads the value back.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  const uint32_t mant = (x >> 13) & 0x3FFu;
  if (exp <= 0) return static_cast<uint16_t>(sign | 0x0001u);  // tiny: smallest subnormal
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7BFFu);  // huge: max finite
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | mant);
}
}  // namespace

Tensor random_scale(std::mt19937& rng, ElementType type, const Shape& dims, float base) {
  Tensor t(type, dims);
  std::uniform_real_distribution<float> factor(0.5f, 2.0f);
  for (int64_t i = 0; i < t.size(); ++i) {
    const float v = base * factor(rng);
    if (type == ET::Float32) {
      t.data<float>()[i] = v;
    } else if (type == ET::Float16) {
      t.data<uint16_t>()[i] = float_to_half_bits(v);
    } else {
      uint32_t x;
      std::memcpy(&x, &v, 4);
      t.data<uint16_t>()[i] = static_cast<uint16_t>(x >> 16);  // bfloat16 by truncation
    }
  }
  return t;
}

float scale_value(const Tensor& t, int64_t i) {
  if (t.type() == ET::Float32) return t.data<float>()[i];
  const uint16_t bits = t.data<uint16_t>()[i];
  if (t.type() == ET::BFloat16) {
    const uint32_t x = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  const int exp = (bits >> 10) & 0x1F, mant = bits & 0x3FF;
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
                             : std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return (bits & 0x8000) ? -mag : mag;
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Absent: return "absent";
    case Layout::Scalar: return "scalar[]";
    case Layout::One: return "[1]";
    case Layout::Vector: return "vector";
    case Layout::BatchedMatrix: return "batched-matrix";
    case Layout::Matrix11: return "[1,1]";
  }
  return "?";
}

bool param_shape(Layout l, bool a_side, const Shape& op_dims, Shape* out) {
  const bool vector_operand = op_dims.size() == 1;
  const int64_t len = vector_operand ? 1 : (a_side ? op_dims[op_dims.size() - 2] : op_dims.back());
  switch (l) {
    case Layout::Absent:
    case Layout::Scalar: *out = {}; return true;
    case Layout::One: *out = {1}; return true;
    case Layout::Vector:
      if (vector_operand) return false;
      *out = {len};
      return true;
    case Layout::BatchedMatrix:
    case Layout::Matrix11: {
      if (vector_operand) return false;
      Shape s(op_dims.begin(), op_dims.end() - 2);
      if (l == Layout::Matrix11) {
        for (auto& d : s) d = 1;
        s.push_back(1);
        s.push_back(1);
      } else {
        s.push_back(a_side ? len : 1);
        s.push_back(a_side ? 1 : len);
      }
      *out = s;
      return true;
    }
  }
  return false;
}

std::string describe(const Tensor& t) { return type_name(t.type()) + shape_to_string(t.dims()); }

}  // namespace qmatmul::testing
