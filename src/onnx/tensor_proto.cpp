// TensorProto <-> Tensor conversion and the .pb tensor file reader/writer.
// Decoding validates in a fixed order (storage location, data type, dims,
// element count, which field holds the data, its size, and the range of each
// typed value) and only then allocates, so every malformed tensor becomes a
// qmatmul::Error naming the file and tensor instead of a crash, a huge
// allocation or a silently wrong tensor. Data is read from raw_data
// (little-endian) or from the typed field ONNX assigns to the element type:
// int32_data for int32 and, one value per element, for uint8, int8, float16
// and bfloat16 (as the uint16 bit pattern) and float8 (as the byte);
// float_data for float32; double_data for float64.
#include "tensor_proto.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "qmatmul/onnx.h"

namespace qmatmul::onnx_io {
namespace {

// The element types qmatmul stores, as ONNX codes.
bool is_supported_code(int32_t code) {
  switch (code) {
    case 1: case 2: case 3: case 6: case 10: case 11: case 16:
    case 17: case 18: case 19: case 20:
      return true;
    default:
      return false;
  }
}

// The one typed field ONNX assigns to each supported element type.
enum class TypedField { Int32Data, FloatData, DoubleData };

TypedField typed_field_for(ElementType type) {
  switch (type) {
    case ElementType::Float32: return TypedField::FloatData;
    case ElementType::Float64: return TypedField::DoubleData;
    default: return TypedField::Int32Data;
  }
}

const char* typed_field_name(TypedField field) {
  switch (field) {
    case TypedField::Int32Data: return "int32_data";
    case TypedField::FloatData: return "float_data";
    case TypedField::DoubleData: return "double_data";
  }
  return "?";
}

// Copies `count` elements of `size` bytes between host order and
// little-endian order (the same operation in both directions).
void copy_little_endian(void* dst, const void* src, std::size_t count, std::size_t size) {
  if constexpr (std::endian::native == std::endian::little) {
    if (count > 0) std::memcpy(dst, src, count * size);
  } else {
    auto* out = static_cast<unsigned char*>(dst);
    const auto* in = static_cast<const unsigned char*>(src);
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t b = 0; b < size; ++b) out[i * size + b] = in[i * size + size - 1 - b];
  }
}

// Range of the values int32_data may hold for an element type stored there.
struct IntRange {
  int64_t lo, hi;
};

IntRange int32_data_range(ElementType type) {
  switch (type) {
    case ElementType::Uint8: return {0, 255};
    case ElementType::Int8: return {-128, 127};
    case ElementType::Float16:
    case ElementType::BFloat16: return {0, 65535};
    case ElementType::Int32: return {INT32_MIN, INT32_MAX};
    default: return {0, 255};  // float8: the byte
  }
}

// Stores the int32_data values of `proto` into `out`, checking each one.
void decode_int32_data(const onnx::TensorProto& proto, Tensor& out, const std::string& where) {
  const IntRange range = int32_data_range(out.type());
  const auto& values = proto.int32_data();
  const std::size_t size = element_size(out.type());
  auto* bytes = static_cast<unsigned char*>(out.raw());
  for (int i = 0; i < values.size(); ++i) {
    const int64_t v = values.Get(i);
    if (v < range.lo || v > range.hi) {
      throw Error(where + "int32_data[" + std::to_string(i) + "] = " + std::to_string(v) +
                  " is outside [" + std::to_string(range.lo) + ", " +
                  std::to_string(range.hi) + "], the range of " + type_name(out.type()) +
                  " values stored in int32_data");
    }
    if (size == 1) {
      bytes[i] = static_cast<unsigned char>(static_cast<uint8_t>(v));
    } else if (size == 2) {
      const uint16_t bits = static_cast<uint16_t>(v);
      std::memcpy(bytes + 2 * static_cast<std::size_t>(i), &bits, 2);
    } else {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(bytes + 4 * static_cast<std::size_t>(i), &x, 4);
    }
  }
}

// "file.pb: tensor 'x': " -- the prefix of every decoding error.
std::string error_prefix(const std::string& context, const onnx::TensorProto& proto) {
  std::string where = context.empty() ? "" : context + ": ";
  where += proto.name().empty() ? "tensor (unnamed): " : "tensor '" + proto.name() + "': ";
  return where;
}

// The dims as a Shape, rejecting negative dims and counts that overflow
// either the element count or the byte count.
Shape checked_dims(const onnx::TensorProto& proto, std::size_t elem_size, int64_t* count,
                   const std::string& where) {
  Shape dims(proto.dims().begin(), proto.dims().end());
  int64_t n = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      throw Error(where + "dim " + std::to_string(i) + " is negative (" + std::to_string(dims[i]) +
                  ") in dims " + shape_to_string(dims) + "; dims must be >= 0");
    }
    if (__builtin_mul_overflow(n, dims[i], &n)) {
      throw Error(where + "dims " + shape_to_string(dims) +
                  " overflow: the element count does not fit in int64");
    }
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(elem_size), &bytes)) {
    throw Error(where + "dims " + shape_to_string(dims) +
                " overflow: the byte size does not fit in int64");
  }
  *count = n;
  return dims;
}

// Rejects data in fields the element type does not use.
void check_unused_fields(const onnx::TensorProto& proto, ElementType type,
                         const std::string& where) {
  const TypedField used = typed_field_for(type);
  struct FieldUse {
    const char* name;
    int size;
    bool allowed;
  };
  const FieldUse fields[] = {
      {"int32_data", proto.int32_data_size(), used == TypedField::Int32Data},
      {"float_data", proto.float_data_size(), used == TypedField::FloatData},
      {"double_data", proto.double_data_size(), used == TypedField::DoubleData},
      {"int64_data", proto.int64_data_size(), false},
      {"uint64_data", proto.uint64_data_size(), false},
      {"string_data", proto.string_data_size(), false},
  };
  for (const FieldUse& f : fields) {
    if (f.size > 0 && !f.allowed) {
      throw Error(where + "holds " + std::to_string(f.size) + " values in " + f.name +
                  ", a field ONNX does not use for data_type " +
                  describe_type_code(static_cast<int32_t>(type)));
    }
    if (f.size > 0 && proto.has_raw_data()) {
      throw Error(where + "holds data both in raw_data and in " + f.name +
                  "; a tensor must use exactly one");
    }
  }
}

}  // namespace

std::string onnx_type_name(int32_t code) {
  static const char* const names[] = {
      "undefined", "float",   "uint8",      "int8",          "uint16",     "int16",
      "int32",     "int64",   "string",     "bool",          "float16",    "double",
      "uint32",    "uint64",  "complex64",  "complex128",    "bfloat16",   "float8e4m3fn",
      "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1"};
  if (code >= 0 && code < static_cast<int32_t>(std::size(names))) return names[code];
  return "unknown";
}

std::string describe_type_code(int32_t code) {
  return onnx_type_name(code) + " (" + std::to_string(code) + ")";
}

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& context) {
  const std::string where = error_prefix(context, proto);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0) {
    throw Error(where + "external data (data_location EXTERNAL) is not supported; "
                "store the tensor's data inside the file");
  }
  if (proto.has_segment()) {
    throw Error(where + "segmented tensors (the segment field) are not supported");
  }
  const int32_t code = proto.data_type();
  if (code == 0) throw Error(where + "data_type is 0 (undefined); the tensor has no element type");
  if (!is_supported_code(code)) {
    const std::string what = onnx_type_name(code) == "unknown"
                                 ? "data_type " + std::to_string(code) + " is unknown"
                                 : "data_type " + describe_type_code(code) + " is not supported";
    throw Error(where + what + "; qmatmul reads uint8, int8, int32, float, float16, bfloat16, "
                "double and the float8 types (17-20)");
  }
  const auto type = static_cast<ElementType>(code);
  const std::size_t esize = element_size(type);
  int64_t count = 0;
  Shape dims = checked_dims(proto, esize, &count, where);
  check_unused_fields(proto, type, where);

  const auto ucount = static_cast<std::size_t>(count);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != ucount * esize) {
      throw Error(where + "raw_data holds " + std::to_string(raw.size()) + " bytes but dims " +
                  shape_to_string(dims) + " of " + type_name(type) + " need " +
                  std::to_string(ucount * esize) + " (" + std::to_string(count) + " x " +
                  std::to_string(esize) + ")");
    }
    Tensor out(type, dims);
    copy_little_endian(out.raw(), raw.data(), ucount, esize);
    return out;
  }

  const TypedField field = typed_field_for(type);
  const int stored = field == TypedField::Int32Data   ? proto.int32_data_size()
                     : field == TypedField::FloatData ? proto.float_data_size()
                                                      : proto.double_data_size();
  if (static_cast<int64_t>(stored) != count) {
    if (stored == 0) {
      throw Error(where + "has no data (neither raw_data nor " + typed_field_name(field) +
                  ") but dims " + shape_to_string(dims) + " need " + std::to_string(count) +
                  " " + type_name(type) + " values");
    }
    throw Error(where + typed_field_name(field) + " holds " + std::to_string(stored) +
                " values but dims " + shape_to_string(dims) + " need " + std::to_string(count));
  }
  Tensor out(type, dims);
  switch (field) {
    case TypedField::Int32Data:
      decode_int32_data(proto, out, where);
      break;
    case TypedField::FloatData:
      if (count > 0) std::memcpy(out.raw(), proto.float_data().data(), ucount * sizeof(float));
      break;
    case TypedField::DoubleData:
      if (count > 0) std::memcpy(out.raw(), proto.double_data().data(), ucount * sizeof(double));
      break;
  }
  return out;
}

void tensor_to_proto(const TensorView& tensor, const std::string& name,
                     onnx::TensorProto* proto) {
  const std::string where = "tensor '" + name + "': ";
  const auto code = static_cast<int32_t>(tensor.type);
  if (!is_supported_code(code)) {
    throw Error(where + "cannot write element type " + describe_type_code(code));
  }
  int64_t count = 0;
  try {
    count = element_count(tensor.dims);
  } catch (const Error& e) {
    throw Error(where + "cannot write shape " + shape_to_string(tensor.dims) + ": " + e.what());
  }
  if (count > 0 && tensor.data == nullptr) {
    throw Error(where + "has " + std::to_string(count) + " elements but no data pointer");
  }
  const std::size_t esize = element_size(tensor.type);
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(code);
  for (int64_t d : tensor.dims) proto->add_dims(d);
  std::string raw(static_cast<std::size_t>(count) * esize, '\0');
  copy_little_endian(raw.data(), tensor.data, static_cast<std::size_t>(count), esize);
  proto->set_raw_data(std::move(raw));
}

std::string read_file_bytes(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw Error("cannot read " + what + " '" + path + "': no such file");
  if (fs::is_directory(status)) {
    throw Error("cannot read " + what + " '" + path + "': it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error("cannot open " + what + " '" + path + "': " + std::strerror(errno));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error("error while reading " + what + " '" + path + "'");
  return std::move(buffer).str();
}

void write_file_bytes(const std::string& path, const std::string& bytes,
                      const std::string& what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot create " + what + " '" + path + "': " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("error while writing " + what + " '" + path + "'");
}

}  // namespace qmatmul::onnx_io

namespace qmatmul {

Tensor read_tensor_pb(const std::string& path) {
  const std::string bytes = onnx_io::read_file_bytes(path, "tensor file");
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    throw Error(path + ": not a valid ONNX TensorProto (truncated or malformed protobuf, " +
                std::to_string(bytes.size()) + " bytes)");
  }
  return onnx_io::tensor_from_proto(proto, path);
}

void write_tensor_pb(const std::string& path, const TensorView& tensor,
                     const std::string& name) {
  onnx::TensorProto proto;
  onnx_io::tensor_to_proto(tensor, name, &proto);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    throw Error("cannot serialize tensor '" + name + "' for '" + path + "' (over 2 GiB?)");
  }
  onnx_io::write_file_bytes(path, bytes, "tensor file");
}

}  // namespace qmatmul
