// Public value types of qmatmul: element types numbered as ONNX TensorProto
// data types, shapes, the non-owning tensor views every operator takes, the
// owning Tensor the convenience overloads return, and the Error every
// validation failure raises. Nothing here allocates except Tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace qmatmul {

// Values are ONNX TensorProto.DataType codes, so a .pb file's data_type maps
// onto this enum without a table.
enum class ElementType : int32_t {
  Undefined = 0,
  Float32 = 1,
  Uint8 = 2,
  Int8 = 3,
  Int32 = 6,
  Float16 = 10,
  Float64 = 11,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
};

// ONNX spelling ("uint8", "float8e4m3fn", ...); "unknown(N)" for other codes.
std::string type_name(ElementType type);
// Bytes per element; 0 for a type qmatmul does not store.
std::size_t element_size(ElementType type);
bool is_float8(ElementType type);
// True for a code this enum names (used to reject unknown ONNX data types).
bool is_known_type(int32_t onnx_code);

using Shape = std::vector<int64_t>;

// "[2,3,4]"; "[]" for a scalar.
std::string shape_to_string(const Shape& shape);
// Product of the dims; throws Error when a dim is negative or the product
// overflows int64.
int64_t element_count(const Shape& shape);

// A read-only view of a contiguous row-major tensor owned by the caller.
struct TensorView {
  ElementType type = ElementType::Undefined;
  Shape dims;
  const void* data = nullptr;
};

// A writable view: the output buffer of an operator.
struct MutableTensorView {
  ElementType type = ElementType::Undefined;
  Shape dims;
  void* data = nullptr;
};

// An owning, contiguous row-major tensor.
class Tensor {
 public:
  Tensor() = default;
  Tensor(ElementType type, Shape dims);  // zero-filled
  // A copy of a view's elements (throws qmatmul::Error when it has elements but no data).
  static Tensor copy_of(const TensorView& view);

  ElementType type() const { return type_; }
  const Shape& dims() const { return dims_; }
  int64_t size() const { return count_; }  // element count
  std::size_t byte_size() const { return bytes_.size(); }

  void* raw() { return bytes_.data(); }
  const void* raw() const { return bytes_.data(); }
  template <typename T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T> const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }

  TensorView view() const { return {type_, dims_, bytes_.data()}; }
  MutableTensorView mutable_view() { return {type_, dims_, bytes_.data()}; }
  operator TensorView() const { return view(); }  // NOLINT: a Tensor is usable wherever a view is

 private:
  ElementType type_ = ElementType::Undefined;
  Shape dims_;
  int64_t count_ = 0;
  std::vector<unsigned char> bytes_;
};

// Every rejected input raises this. The message names the operator, the
// input by its ONNX name, what was seen and the rule broken.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace qmatmul
