// Definitions behind include/qmatmul/types.h: type names and sizes, shape
// printing, overflow-checked element counts, and the owning Tensor.
#include "qmatmul/types.h"

#include <cstring>
#include <limits>

namespace qmatmul {

std::string type_name(ElementType type) {
  switch (type) {
    case ElementType::Float32: return "float";
    case ElementType::Uint8: return "uint8";
    case ElementType::Int8: return "int8";
    case ElementType::Int32: return "int32";
    case ElementType::Float16: return "float16";
    case ElementType::Float64: return "double";
    case ElementType::BFloat16: return "bfloat16";
    case ElementType::Float8E4M3FN: return "float8e4m3fn";
    case ElementType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case ElementType::Float8E5M2: return "float8e5m2";
    case ElementType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case ElementType::Undefined: return "undefined";
  }
  return "unknown(" + std::to_string(static_cast<int32_t>(type)) + ")";
}

std::size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::Uint8:
    case ElementType::Int8:
    case ElementType::Float8E4M3FN:
    case ElementType::Float8E4M3FNUZ:
    case ElementType::Float8E5M2:
    case ElementType::Float8E5M2FNUZ: return 1;
    case ElementType::Float16:
    case ElementType::BFloat16: return 2;
    case ElementType::Int32:
    case ElementType::Float32: return 4;
    case ElementType::Float64: return 8;
    case ElementType::Undefined: return 0;
  }
  return 0;
}

bool is_float8(ElementType type) {
  return type == ElementType::Float8E4M3FN || type == ElementType::Float8E4M3FNUZ ||
         type == ElementType::Float8E5M2 || type == ElementType::Float8E5M2FNUZ;
}

bool is_known_type(int32_t onnx_code) {
  return onnx_code != 0 && element_size(static_cast<ElementType>(onnx_code)) != 0;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t element_count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("shape " + shape_to_string(shape) + " has a negative dimension");
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      throw Error("shape " + shape_to_string(shape) + ": its element count overflows int64");
    count *= d;
  }
  return count;
}

Tensor::Tensor(ElementType type, Shape dims) : type_(type), dims_(std::move(dims)) {
  if (element_size(type) == 0) throw Error("Tensor: unsupported element type " + type_name(type));
  count_ = element_count(dims_);
  const auto size = static_cast<uint64_t>(count_);
  if (size > std::numeric_limits<std::size_t>::max() / element_size(type))
    throw Error("Tensor: " + shape_to_string(dims_) + " is too large to allocate");
  bytes_.assign(static_cast<std::size_t>(size) * element_size(type), 0);
}

Tensor Tensor::copy_of(const TensorView& view) {
  Tensor out(view.type, view.dims);
  if (out.byte_size() > 0) {
    if (view.data == nullptr) throw Error("Tensor::copy_of: the view of " + shape_to_string(view.dims) + " has no data");
    std::memcpy(out.raw(), view.data, out.byte_size());
  }
  return out;
}

}  // namespace qmatmul
