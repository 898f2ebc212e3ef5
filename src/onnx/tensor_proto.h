// Conversion between onnx::TensorProto and qmatmul tensors, and the small file
// helpers the ONNX readers share. tensor_from_proto is the one place where
// untrusted tensor bytes become a qmatmul::Tensor: it checks the data type,
// dims, element count, storage field and data size before allocating, so a
// hostile file can neither crash the reader nor make it allocate more than the
// file itself holds. Every error names `context` (a file path, an initializer
// name, ...) and the tensor's own name.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "qmatmul/types.h"

namespace qmatmul::onnx_io {

// The ONNX spelling of any TensorProto data type code ("int64", "string",
// "float8e5m2", ...), or "unknown" for codes ONNX does not define.
std::string onnx_type_name(int32_t code);
// "uint8 (2)" style text for error messages.
std::string describe_type_code(int32_t code);

// Decodes a TensorProto. `context` prefixes every error message.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& context = "");

// Encodes a tensor view (validated: known type, non-negative dims, data
// present) as a TensorProto with raw_data in little-endian order.
void tensor_to_proto(const TensorView& tensor, const std::string& name,
                     onnx::TensorProto* proto);

// Reads a whole file into a string; throws Error naming `what` and the path
// when the file is missing, is a directory or cannot be read.
std::string read_file_bytes(const std::string& path, const std::string& what);

// Writes `bytes` to `path` (truncating); throws Error on failure.
void write_file_bytes(const std::string& path, const std::string& bytes,
                      const std::string& what);

}  // namespace qmatmul::onnx_io

namespace qmatmul {
// The brief's spelling: decode with no extra context.
inline Tensor tensor_from_proto(const onnx::TensorProto& proto) {
  return onnx_io::tensor_from_proto(proto);
}
}  // namespace qmatmul
