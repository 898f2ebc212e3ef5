// The validated, immutable form of a loaded ONNX model that Model::run
// executes. model_load.cpp builds it from a ModelProto (all checks happen
// there); model_run.cpp only binds inputs, checks them against the declared
// graph input types and calls the operators. Every value of the graph (graph
// input, initializer, node output) gets an integer slot, so running needs no
// name lookups.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qmatmul/onnx.h"

namespace qmatmul::onnx_io {

// The tensor type a graph input or output declares (ValueInfoProto.type).
struct DeclaredType {
  int32_t elem_type = 0;  // ONNX code; 0 = not declared
  bool has_shape = false;
  std::vector<std::optional<int64_t>> dims;  // nullopt = symbolic or unknown dim
  std::vector<std::string> dim_labels;       // "4", "N" or "?" for messages

  // "[N,4]" (the declared shape, symbolic dims by name).
  std::string shape_text() const;
  // Empty when `dims` fits the declared shape, else why not.
  std::string shape_mismatch(const Shape& dims) const;
};

enum class OpKind { MatMulInteger, QLinearMatMul };

struct Node {
  OpKind kind = OpKind::MatMulInteger;
  std::string label;        // "node 'mm0' (QLinearMatMul)" for error messages
  std::vector<int> inputs;  // value slots in ONNX input order; -1 = absent optional
  int output = -1;          // value slot written by the node
};

}  // namespace qmatmul::onnx_io

namespace qmatmul {

struct Model::Impl {
  std::string path;
  int64_t opset = 0;
  Options options;  // from load(); qlinear_opset is set per node from `opset`

  // Value slots: [0, input_names.size()) are the run() inputs, then one per
  // initializer, then one per node output.
  std::vector<std::string> input_names;
  std::vector<onnx_io::DeclaredType> input_types;
  std::vector<Tensor> initializers;  // slot input_names.size() + i
  std::vector<onnx_io::Node> nodes;  // topologically sorted
  // Per node: its B operand packed once at load when B is an int8/uint8
  // initializer (constant weights), else empty.
  std::vector<PackedB> packed_b;
  std::vector<std::string> output_names;
  std::vector<onnx_io::DeclaredType> output_types;
  std::vector<int> output_slots;
  int slot_count = 0;
};

}  // namespace qmatmul

namespace qmatmul::onnx_io {
// Packs each node's constant (initializer) int8/uint8 B once, at load.
void pack_constant_weights(Model::Impl& impl);
}  // namespace qmatmul::onnx_io
