// The oracle's operators. Both walk every output element of the promoted
// problem [batch..., M, N] (a 1-D A is read as [1,K], a 1-D B as [K,1]; the
// promoted and the real output have the same row-major order), locate each
// input and parameter element through one right-aligned broadcasting rule, and
// loop over k. MatMulInteger wraps in uint32; QLinearMatMul follows
// SEMANTICS.md sections 4-5 literally, one rounding step per statement.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "reference/reference.h"

namespace qmatmul::reference {
namespace {

using Index = std::vector<int64_t>;

bool is_f8(ElementType t) {
  return t == ElementType::Float8E4M3FN || t == ElementType::Float8E4M3FNUZ ||
         t == ElementType::Float8E5M2 || t == ElementType::Float8E5M2FNUZ;
}

int64_t product(const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Offset into a row-major tensor of shape `dims` of the element that `index`
// (a multi-index into a possibly larger shape) selects under numpy
// broadcasting: both aligned on the right, a dim of 1 always reads index 0,
// and indices to the left of the tensor's rank are ignored.
int64_t broadcast_offset(const Shape& dims, const Index& index) {
  int64_t offset = 0;
  int64_t stride = 1;
  const std::size_t rank = dims.size();
  const std::size_t n = index.size();
  for (std::size_t d = 0; d < rank; ++d) {  // d counts from the right
    const int64_t dim = dims[rank - 1 - d];
    const int64_t i = (d < n && dim != 1) ? index[n - 1 - d] : 0;
    offset += i * stride;
    stride *= dim;
  }
  return offset;
}

// The problem as numpy.matmul sees it.
struct Geometry {
  bool a_vector = false, b_vector = false;  // 1-D operand, its axis dropped from the output
  Shape a_dims, b_dims;                     // promoted to rank >= 2
  Shape batch;                              // broadcast batch dims
  int64_t M = 0, K = 0, N = 0;
  Shape out_dims;                           // the real output shape
};

Geometry make_geometry(const Shape& a, const Shape& b) {
  Geometry g;
  g.a_vector = a.size() == 1;
  g.b_vector = b.size() == 1;
  g.a_dims = g.a_vector ? Shape{1, a[0]} : a;
  g.b_dims = g.b_vector ? Shape{b[0], 1} : b;
  g.M = g.a_dims[g.a_dims.size() - 2];
  g.K = g.a_dims[g.a_dims.size() - 1];
  g.N = g.b_dims[g.b_dims.size() - 1];
  const Shape a_batch(g.a_dims.begin(), g.a_dims.end() - 2);
  const Shape b_batch(g.b_dims.begin(), g.b_dims.end() - 2);
  const std::size_t rank = std::max(a_batch.size(), b_batch.size());
  g.batch.assign(rank, 1);
  for (std::size_t d = 0; d < rank; ++d) {  // from the right
    const int64_t da = d < a_batch.size() ? a_batch[a_batch.size() - 1 - d] : 1;
    const int64_t db = d < b_batch.size() ? b_batch[b_batch.size() - 1 - d] : 1;
    g.batch[rank - 1 - d] = da == 1 ? db : da;  // valid input: equal, or one of them 1
  }
  g.out_dims = g.batch;
  if (!g.a_vector) g.out_dims.push_back(g.M);
  if (!g.b_vector) g.out_dims.push_back(g.N);
  return g;
}

// One output element of the promoted problem.
struct Cell {
  Index batch;
  int64_t i = 0, j = 0;
};

Cell cell_at(const Geometry& g, int64_t flat) {
  Cell c;
  c.j = flat % g.N;
  flat /= g.N;
  c.i = flat % g.M;
  flat /= g.M;
  c.batch.assign(g.batch.size(), 0);
  for (std::size_t d = g.batch.size(); d-- > 0;) {
    c.batch[d] = flat % g.batch[d];
    flat /= g.batch[d];
  }
  return c;
}

Index with_tail(const Index& batch, int64_t x, int64_t y) {
  Index index = batch;
  index.push_back(x);
  index.push_back(y);
  return index;
}

// Offset of element (batch..., i, 0) of A (row start; row elements are contiguous).
int64_t a_row(const Geometry& g, const Cell& c) {
  return broadcast_offset(g.a_dims, with_tail(c.batch, c.i, 0));
}
// Offset of element (batch..., 0, j) of B (column start; stride N).
int64_t b_col(const Geometry& g, const Cell& c) {
  return broadcast_offset(g.b_dims, with_tail(c.batch, 0, c.j));
}

// a parameters: [] / [1] per tensor, [M] per row, [..., M|1, 1] per row and batch.
int64_t a_param(const Shape& dims, const Cell& c) {
  if (dims.empty()) return 0;
  if (dims.size() == 1) return dims[0] == 1 ? 0 : c.i;
  return broadcast_offset(dims, with_tail(c.batch, c.i, 0));
}

// b parameters: [] / [1] per tensor, [N] per column, [..., 1, N|1] per column and batch.
int64_t b_param(const Shape& dims, const Cell& c) {
  if (dims.empty()) return 0;
  if (dims.size() == 1) return dims[0] == 1 ? 0 : c.j;
  return broadcast_offset(dims, with_tail(c.batch, 0, c.j));
}

// y parameters broadcast against the real output shape (dropped axes removed).
int64_t y_param(const Shape& dims, const Geometry& g, const Cell& c) {
  Index index = c.batch;
  if (!g.a_vector) index.push_back(c.i);
  if (!g.b_vector) index.push_back(c.j);
  return broadcast_offset(dims, index);
}

int32_t int_at(const TensorView& t, int64_t offset) {
  if (t.type == ElementType::Uint8) return static_cast<const uint8_t*>(t.data)[offset];
  if (t.type == ElementType::Int8) return static_cast<const int8_t*>(t.data)[offset];
  throw Error("reference: expected int8 or uint8, got " + type_name(t.type));
}

// An int8/uint8 or float8 element as float32 (exact).
float float_at(const TensorView& t, int64_t offset) {
  if (is_f8(t.type)) return float8_to_float(static_cast<const uint8_t*>(t.data)[offset], t.type);
  return static_cast<float>(int_at(t, offset));
}

// A scale element widened exactly to float32.
float scale_at(const TensorView& t, int64_t offset) {
  const auto* bytes = static_cast<const unsigned char*>(t.data);
  if (t.type == ElementType::Float32) {
    float f;
    std::memcpy(&f, bytes + offset * 4, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, bytes + offset * 2, 2);
  if (t.type == ElementType::Float16) return float16_to_float(h);
  if (t.type == ElementType::BFloat16) return bfloat16_to_float(h);
  throw Error("reference: scale type " + type_name(t.type) + " is not float32/float16/bfloat16");
}

// m = f32(f32(a_scale * b_scale) / y_scale): two float32 roundings.
float multiplier(float a_scale, float b_scale, float y_scale) {
  volatile float ab = a_scale * b_scale;
  volatile float m = ab / y_scale;
  return m;
}

// (A - a_zp) . (B - b_zp) over k for one cell, wrapping modulo 2^32.
int32_t int_accumulator(const TensorView& a, const TensorView* a_zp, const TensorView& b,
                        const TensorView* b_zp, const Geometry& g, const Cell& c) {
  const int32_t za = a_zp ? int_at(*a_zp, a_param(a_zp->dims, c)) : 0;
  const int32_t zb = b_zp ? int_at(*b_zp, b_param(b_zp->dims, c)) : 0;
  const int64_t a0 = a_row(g, c);
  const int64_t b0 = b_col(g, c);
  uint32_t acc = 0;
  for (int64_t k = 0; k < g.K; ++k) {
    const int32_t product = (int_at(a, a0 + k) - za) * (int_at(b, b0 + k * g.N) - zb);  // |.| <= 65025
    acc += static_cast<uint32_t>(product);
  }
  return static_cast<int32_t>(acc);  // modular conversion (C++20)
}

// (A - a_zp) . (B - b_zp) for one cell when an input is float8: each difference
// in float32 (exact for integer inputs), products and sum in float64.
double float_accumulator(const TensorView& a, const TensorView& a_zp, const TensorView& b,
                         const TensorView& b_zp, const Geometry& g, const Cell& c) {
  const float za = float_at(a_zp, a_param(a_zp.dims, c));
  const float zb = float_at(b_zp, b_param(b_zp.dims, c));
  const int64_t a0 = a_row(g, c);
  const int64_t b0 = b_col(g, c);
  double acc = 0.0;
  for (int64_t k = 0; k < g.K; ++k) {
    volatile float af = float_at(a, a0 + k) - za;
    volatile float bf = float_at(b, b0 + k * g.N) - zb;
    const double product = static_cast<double>(af) * static_cast<double>(bf);  // exact
    acc += product;
  }
  return acc;
}

// Saturating store of an already rounded (integral or infinite) value; NaN -> 0.
void store_integer(Tensor& y, int64_t flat, double rounded) {
  const bool is_u8 = y.type() == ElementType::Uint8;
  const double lo = is_u8 ? 0.0 : -128.0;
  const double hi = is_u8 ? 255.0 : 127.0;
  double r = std::isnan(rounded) ? 0.0 : rounded;
  if (r < lo) r = lo;
  if (r > hi) r = hi;
  if (is_u8) {
    y.data<uint8_t>()[flat] = static_cast<uint8_t>(r);
  } else {
    y.data<int8_t>()[flat] = static_cast<int8_t>(r);
  }
}

}  // namespace

Shape output_shape(const Shape& a, const Shape& b) { return make_geometry(a, b).out_dims; }

Tensor matmul_integer(const TensorView& a, const TensorView& b,
                      const std::optional<TensorView>& a_zero_point,
                      const std::optional<TensorView>& b_zero_point) {
  const Geometry g = make_geometry(a.dims, b.dims);
  Tensor y(ElementType::Int32, g.out_dims);
  const int64_t count = product(g.out_dims);
  const TensorView* za = a_zero_point ? &*a_zero_point : nullptr;
  const TensorView* zb = b_zero_point ? &*b_zero_point : nullptr;
  for (int64_t flat = 0; flat < count; ++flat) {
    const Cell c = cell_at(g, flat);
    y.data<int32_t>()[flat] = int_accumulator(a, za, b, zb, g, c);
  }
  return y;
}

Tensor qlinear_matmul(const TensorView& a, const TensorView& a_scale,
                      const TensorView& a_zero_point, const TensorView& b,
                      const TensorView& b_scale, const TensorView& b_zero_point,
                      const TensorView& y_scale, const TensorView& y_zero_point,
                      Requantization mode) {
  const Geometry g = make_geometry(a.dims, b.dims);
  const ElementType out_type = y_zero_point.type;
  Tensor y(out_type, g.out_dims);
  const int64_t count = product(g.out_dims);
  const bool integer_inputs = !is_f8(a.type) && !is_f8(b.type);
  const bool float8_output = is_f8(out_type);
  const bool ort_compat = mode == Requantization::OnnxRuntimeCompat && integer_inputs && !float8_output;
  for (int64_t flat = 0; flat < count; ++flat) {
    const Cell c = cell_at(g, flat);
    const float m = multiplier(scale_at(a_scale, a_param(a_scale.dims, c)),
                               scale_at(b_scale, b_param(b_scale.dims, c)),
                               scale_at(y_scale, y_param(y_scale.dims, g, c)));
    const int64_t zy_offset = y_param(y_zero_point.dims, g, c);

    if (ort_compat) {
      // sat(rne(f32(f32(C) * m)) + y_zero_point); a NaN product rounds to 0.
      const int32_t acc = int_accumulator(a, &a_zero_point, b, &b_zero_point, g, c);
      volatile float cf = static_cast<float>(acc);
      volatile float scaled = cf * m;
      float rounded = std::nearbyint(static_cast<float>(scaled));
      if (std::isnan(rounded)) rounded = 0.0f;
      const double zy = static_cast<double>(int_at(y_zero_point, zy_offset));
      const double shifted = static_cast<double>(rounded) + zy;
      store_integer(y, flat, shifted);  // integral (or +-Inf) already
      continue;
    }

    double C;
    if (integer_inputs) {
      C = static_cast<double>(int_accumulator(a, &a_zero_point, b, &b_zero_point, g, c));
    } else {
      C = float_accumulator(a, a_zero_point, b, b_zero_point, g, c);
    }
    const double zy = static_cast<double>(float_at(y_zero_point, zy_offset));
    volatile double scaled = C * static_cast<double>(m);
    const double v = scaled + zy;
    if (float8_output) {
      y.data<uint8_t>()[flat] = float8_from_double(v, out_type);
    } else {
      store_integer(y, flat, std::nearbyint(v));  // NaN stays NaN -> 0
    }
  }
  return y;
}

}  // namespace qmatmul::reference
