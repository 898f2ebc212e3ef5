// Exact comparison and human-readable element formatting for test results.
// The small decoders here (float16, bfloat16, float8) exist only to print
// values in mismatch messages and to recognise NaN encodings; they are kept
// apart from src/numeric so that the test runner does not judge the library
// with the library's own conversions.
#include "tensor_compare.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace qmatmul::onnx_io {
namespace {

// Layout of a small float format, enough to decode it exactly to double.
struct SmallFloat {
  int exp_bits, mant_bits, bias;
  bool ieee_specials;  // all-ones exponent is Inf / NaN (float16, bfloat16, e5m2)
  bool fnuz;           // 0x80 is the only NaN, no infinities, no -0
};

SmallFloat layout(ElementType type) {
  switch (type) {
    case ElementType::Float16: return {5, 10, 15, true, false};
    case ElementType::BFloat16: return {8, 7, 127, true, false};
    case ElementType::Float8E4M3FN: return {4, 3, 7, false, false};
    case ElementType::Float8E4M3FNUZ: return {4, 3, 8, false, true};
    case ElementType::Float8E5M2: return {5, 2, 15, true, false};
    default: return {5, 2, 16, false, true};  // Float8E5M2FNUZ
  }
}

uint32_t load_bits(const void* p, std::size_t size) {
  if (size == 1) return *static_cast<const uint8_t*>(p);
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

bool small_float_is_nan(const SmallFloat& f, uint32_t bits) {
  const int total = 1 + f.exp_bits + f.mant_bits;
  const uint32_t exp_mask = ((1u << f.exp_bits) - 1) << f.mant_bits;
  const uint32_t mant_mask = (1u << f.mant_bits) - 1;
  if (f.fnuz) return bits == (1u << (total - 1));
  if (f.ieee_specials) return (bits & exp_mask) == exp_mask && (bits & mant_mask) != 0;
  return (bits & (exp_mask | mant_mask)) == (exp_mask | mant_mask);  // e4m3fn: S.1111.111
}

double decode_small_float(const SmallFloat& f, uint32_t bits) {
  if (small_float_is_nan(f, bits)) return std::numeric_limits<double>::quiet_NaN();
  const int total = 1 + f.exp_bits + f.mant_bits;
  const bool negative = (bits >> (total - 1)) & 1u;
  const uint32_t exp = (bits >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t mant = bits & ((1u << f.mant_bits) - 1);
  double value;
  if (f.ieee_specials && exp == (1u << f.exp_bits) - 1) {
    value = std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    value = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mant_bits);
  } else {
    value = std::ldexp(static_cast<double>(mant + (1u << f.mant_bits)),
                       static_cast<int>(exp) - f.bias - f.mant_bits);
  }
  return negative ? -value : value;
}

bool is_float_type(ElementType type) {
  return type == ElementType::Float32 || type == ElementType::Float64 ||
         type == ElementType::Float16 || type == ElementType::BFloat16 || is_float8(type);
}

std::string format_double(double v, int digits) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// "[1,2]": the coordinates of a flat row-major index.
std::string coordinates(const Shape& dims, int64_t index) {
  Shape coord(dims.size());
  for (std::size_t i = dims.size(); i-- > 0;) {
    coord[i] = dims[i] > 0 ? index % dims[i] : 0;
    index = dims[i] > 0 ? index / dims[i] : 0;
  }
  return shape_to_string(coord);
}

}  // namespace

bool is_nan_element(ElementType type, const void* bits) {
  switch (type) {
    case ElementType::Float32: {
      float v;
      std::memcpy(&v, bits, sizeof v);
      return std::isnan(v);
    }
    case ElementType::Float64: {
      double v;
      std::memcpy(&v, bits, sizeof v);
      return std::isnan(v);
    }
    case ElementType::Float16:
    case ElementType::BFloat16:
    case ElementType::Float8E4M3FN:
    case ElementType::Float8E4M3FNUZ:
    case ElementType::Float8E5M2:
    case ElementType::Float8E5M2FNUZ:
      return small_float_is_nan(layout(type), load_bits(bits, element_size(type)));
    default:
      return false;
  }
}

std::string format_element(const TensorView& tensor, int64_t index) {
  const std::size_t size = element_size(tensor.type);
  const auto* p = static_cast<const unsigned char*>(tensor.data) +
                  static_cast<std::size_t>(index) * size;
  switch (tensor.type) {
    case ElementType::Uint8: return std::to_string(*p);
    case ElementType::Int8: return std::to_string(static_cast<int8_t>(*p));
    case ElementType::Int32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return std::to_string(v);
    }
    case ElementType::Float32: {
      float v;
      std::memcpy(&v, p, 4);
      return format_double(v, 9);
    }
    case ElementType::Float64: {
      double v;
      std::memcpy(&v, p, 8);
      return format_double(v, 17);
    }
    default: {
      const uint32_t bits = load_bits(p, size);
      char hex[16];
      std::snprintf(hex, sizeof hex, size == 1 ? "0x%02x" : "0x%04x", bits);
      return format_double(decode_small_float(layout(tensor.type), bits), 9) + " (" + hex + ")";
    }
  }
}

std::string compare_tensors(const TensorView& got, const TensorView& expected) {
  if (got.type != expected.type) {
    return "element type is " + type_name(got.type) + ", expected " + type_name(expected.type);
  }
  if (got.dims != expected.dims) {
    return "shape is " + shape_to_string(got.dims) + ", expected " +
           shape_to_string(expected.dims);
  }
  const std::size_t size = element_size(got.type);
  const int64_t count = element_count(got.dims);
  const bool floats = is_float_type(got.type);
  const auto* a = static_cast<const unsigned char*>(got.data);
  const auto* b = static_cast<const unsigned char*>(expected.data);
  int64_t first = -1, differing = 0;
  for (int64_t i = 0; i < count; ++i) {
    const std::size_t off = static_cast<std::size_t>(i) * size;
    if (std::memcmp(a + off, b + off, size) == 0) continue;
    if (floats && is_nan_element(got.type, a + off) && is_nan_element(got.type, b + off)) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (first < 0) return "";
  return "element " + std::to_string(first) + " " + coordinates(got.dims, first) + ": got " +
         format_element(got, first) + ", expected " + format_element(expected, first) + " (" +
         std::to_string(differing) + " of " + std::to_string(count) + " elements differ)";
}

}  // namespace qmatmul::onnx_io
