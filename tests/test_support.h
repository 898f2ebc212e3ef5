// Shared helpers for the library tests: building tensors from values,
// adversarial random data (full 8-bit range, extremes, edge zero points),
// and the enumeration of quantization-parameter layouts of SEMANTICS.md §2.
// Expected values always come from the reference (reference/) or are worked
// by hand in the test; nothing here computes a matmul.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "qmatmul/qmatmul.h"

namespace qmatmul::testing {

using ET = ElementType;

template <typename T>
Tensor make_tensor(ElementType type, Shape dims, const std::vector<T>& values) {
  Tensor t(type, std::move(dims));
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(T));
  return t;
}

inline bool is_signed8(ElementType t) { return t == ET::Int8; }

// Random 8-bit data. `style` 0: uniform over the full range; 1: only the two
// extremes (0/255 or -128/127); 2: mostly extremes with some uniform values.
inline Tensor random_int8(std::mt19937& rng, ElementType type, const Shape& dims, int style) {
  Tensor t(type, dims);
  auto* p = static_cast<unsigned char*>(t.raw());
  const unsigned char lo = is_signed8(type) ? 0x80 : 0x00, hi = is_signed8(type) ? 0x7F : 0xFF;
  for (int64_t i = 0; i < t.size(); ++i) {
    const unsigned r = rng();
    if (style == 1 || (style == 2 && (r & 3) != 0))
      p[i] = (r >> 8) & 1 ? hi : lo;
    else
      p[i] = static_cast<unsigned char>(r >> 8);
  }
  return t;
}

// A zero-point tensor of `dims`: extreme values (the type's min or max) or
// uniform ones, to stress the zero-point algebra.
inline Tensor random_zero_point(std::mt19937& rng, ElementType type, const Shape& dims) {
  Tensor t = random_int8(rng, type, dims, rng() % 3 == 0 ? 1 : 0);
  return t;
}

// A positive scale around `base`, of the given scale type, varied per element.
Tensor random_scale(std::mt19937& rng, ElementType type, const Shape& dims, float base);

// float32 value of element i of a scale tensor, for choosing output scales.
float scale_value(const Tensor& t, int64_t i);

// Per-operand parameter layouts of SEMANTICS.md §2.
enum class Layout { Absent, Scalar, One, Vector, BatchedMatrix, Matrix11 };
const char* layout_name(Layout l);

// The parameter shape for a layout on the `a` side (rows) or `b` side
// (columns). `op_dims` are the operand's dims. Returns false when the layout
// does not apply (e.g. Vector for a 1-D operand).
bool param_shape(Layout l, bool a_side, const Shape& op_dims, Shape* out);

std::string describe(const Tensor& t);  // "uint8[2,3]"

}  // namespace qmatmul::testing
