// ONNX file I/O for qmatmul: reading and writing single tensors stored as
// serialized onnx.TensorProto (.pb files, the layout of the ONNX backend node
// tests), and loading and running ONNX models whose graph holds only
// MatMulInteger and QLinearMatMul nodes. Everything read from a file is
// validated before use (SEMANTICS.md section 6): a malformed, truncated or
// unsupported file raises qmatmul::Error with a message naming the file, the
// tensor or node, and the rule broken. This header does not expose protobuf
// types; the proto-level entry points live in src/onnx/tensor_proto.h.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "qmatmul/qmatmul.h"
#include "qmatmul/types.h"

namespace qmatmul {

// Reads one serialized TensorProto. Supported element types: uint8, int8,
// int32, float32, float16, bfloat16, float64 and the four float8 types, from
// raw_data (little-endian) or the typed field ONNX assigns to the type.
// External data and segments are rejected.
Tensor read_tensor_pb(const std::string& path);

// Writes `tensor` as a TensorProto named `name`, with its data in raw_data.
void write_tensor_pb(const std::string& path, const TensorView& tensor,
                     const std::string& name);

// A loaded ONNX model: a graph of MatMulInteger / QLinearMatMul nodes in the
// default domain, topologically sorted, with initializers converted once at
// load time. Copies share the loaded graph; run() may be called from several
// threads at once.
class Model {
 public:
  // Reads and validates the model. `options` applies to every node when the
  // model runs (threads, requantization); Options::qlinear_opset is ignored
  // and taken from the model's opset import instead (10..20 -> 10, >= 21 -> 21).
  static Model load(const std::string& path, const Options& options = {});

  // Graph inputs that are not initializers, in graph order: run() binds its
  // arguments to these.
  const std::vector<std::string>& input_names() const;
  // Graph outputs, in graph order: run() returns one tensor per name.
  const std::vector<std::string>& output_names() const;
  // The opset version the model imports for the default domain.
  int64_t opset() const;
  // The path given to load(), used in error messages.
  const std::string& path() const;

  // Runs the graph on one tensor per input name. Checks the count, and each
  // input's element type and fixed dims against the graph's declared types.
  std::vector<Tensor> run(const std::vector<TensorView>& inputs) const;
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;

  struct Impl;  // defined in src/onnx/model_impl.h

 private:
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace qmatmul
