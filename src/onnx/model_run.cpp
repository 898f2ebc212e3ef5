// Model::run: executes a loaded graph. Binds the caller's tensors to the
// input slots after checking their count, element type and shape against the
// graph's declarations, runs each node in order through the public operators
// (qmatmul::matmul_integer / qmatmul::qlinear_matmul, with the Options given
// to load and the QLinearMatMul version the model's opset selects), and
// returns the graph outputs as owning tensors. Operator errors are re-raised
// with the model path and node label in front.

#include "model_impl.h"
#include "tensor_proto.h"

namespace qmatmul {
namespace {

using onnx_io::DeclaredType;

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

// Checks a run() input: a supported type, a valid shape, data present, and
// agreement with the declared type when the graph declares one.
void check_input(const Model::Impl& impl, std::size_t index, const TensorView& view) {
  const std::string where = impl.path + ": input '" + impl.input_names[index] + "'";
  const auto code = static_cast<int32_t>(view.type);
  if (code == 0 || element_size(view.type) == 0) {
    throw Error(where + " has unsupported element type " + onnx_io::describe_type_code(code));
  }
  int64_t count = 0;
  try {
    count = element_count(view.dims);
  } catch (const Error& e) {
    throw Error(where + " has an invalid shape " + shape_to_string(view.dims) + ": " + e.what());
  }
  if (count > 0 && view.data == nullptr) throw Error(where + " has no data");
  const DeclaredType& declared = impl.input_types[index];
  if (declared.elem_type != 0 && declared.elem_type != code) {
    throw Error(where + " has element type " + type_name(view.type) +
                " but the graph declares " + onnx_io::onnx_type_name(declared.elem_type));
  }
  const std::string mismatch = declared.shape_mismatch(view.dims);
  if (!mismatch.empty()) throw Error(where + " " + mismatch);
}

// Checks a computed output against the graph's declared output type: a
// disagreement means the model is inconsistent, never silently ignored.
void check_output(const Model::Impl& impl, std::size_t index, const TensorView& view) {
  const std::string where = impl.path + ": output '" + impl.output_names[index] + "'";
  const DeclaredType& declared = impl.output_types[index];
  if (declared.elem_type != 0 && declared.elem_type != static_cast<int32_t>(view.type)) {
    throw Error(where + " is computed as " + type_name(view.type) +
                " but the graph declares " + onnx_io::onnx_type_name(declared.elem_type));
  }
  const std::string mismatch = declared.shape_mismatch(view.dims);
  if (!mismatch.empty()) throw Error(where + " " + mismatch);
}

Tensor run_node(const Model::Impl& impl, std::size_t index, const std::vector<TensorView>& values) {
  const onnx_io::Node& node = impl.nodes[index];
  const PackedB& packed = impl.packed_b[index];
  auto in = [&](std::size_t i) -> const TensorView& { return values[node.inputs[i]]; };
  auto optional_in = [&](std::size_t i) -> std::optional<TensorView> {
    if (i >= node.inputs.size() || node.inputs[i] < 0) return std::nullopt;
    return values[node.inputs[i]];
  };
  try {
    if (node.kind == onnx_io::OpKind::MatMulInteger) {
      if (packed.empty()) return matmul_integer(in(0), in(1), optional_in(2), optional_in(3), impl.options);
      if (packed.b_zero_point()) return matmul_integer(in(0), optional_in(2), packed, impl.options);
      return matmul_integer(in(0), packed, optional_in(2), optional_in(3), impl.options);
    }
    Options options = impl.options;
    options.qlinear_opset = impl.opset >= 21 ? 21 : 10;
    // An int8/uint8 PackedB serves integer a and y only; with a float8 a or y
    // the initializer goes in as a plain tensor.
    const bool integer_packed_for_float8 =
        !packed.empty() && !is_float8(packed.type()) && (is_float8(in(0).type) || is_float8(in(7).type));
    if (packed.empty() || integer_packed_for_float8)
      return qlinear_matmul(in(0), in(1), in(2), in(3), in(4), in(5), in(6), in(7), options);
    if (packed.b_scale() && packed.b_zero_point())  // packed with the node's b_scale and b_zero_point
      return qlinear_matmul(in(0), in(1), in(2), packed, in(6), in(7), options);
    return qlinear_matmul(in(0), in(1), in(2), packed, in(4), in(5), in(6), in(7), options);
  } catch (const Error& e) {
    throw Error(impl.path + ": " + node.label + ": " + e.what());
  }
}

}  // namespace

std::vector<Tensor> Model::run(const std::vector<TensorView>& inputs) const {
  const Impl& impl = *impl_;
  if (inputs.size() != impl.input_names.size()) {
    throw Error(impl.path + ": the model has " + std::to_string(impl.input_names.size()) +
                " inputs (" + join_names(impl.input_names) + ") but " +
                std::to_string(inputs.size()) + " were given");
  }
  std::vector<TensorView> values(static_cast<std::size_t>(impl.slot_count));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check_input(impl, i, inputs[i]);
    values[i] = inputs[i];
  }
  const std::size_t first_init = inputs.size();
  for (std::size_t i = 0; i < impl.initializers.size(); ++i) {
    values[first_init + i] = impl.initializers[i].view();
  }
  // Node results live here; `values` holds views of them.
  std::vector<Tensor> produced(impl.nodes.size());
  std::vector<int> producer(values.size(), -1);
  for (std::size_t n = 0; n < impl.nodes.size(); ++n) {
    const onnx_io::Node& node = impl.nodes[n];
    produced[n] = run_node(impl, n, values);
    values[static_cast<std::size_t>(node.output)] = produced[n].view();
    producer[static_cast<std::size_t>(node.output)] = static_cast<int>(n);
  }
  std::vector<Tensor> outputs;
  outputs.reserve(impl.output_slots.size());
  std::vector<bool> moved(produced.size(), false);
  for (std::size_t i = 0; i < impl.output_slots.size(); ++i) {
    const auto slot = static_cast<std::size_t>(impl.output_slots[i]);
    check_output(impl, i, values[slot]);
    const int p = producer[slot];
    if (p >= 0 && !moved[static_cast<std::size_t>(p)]) {
      // The last view of this tensor is not read again once moved: a slot
      // listed twice among the outputs is copied from the first output.
      outputs.push_back(std::move(produced[static_cast<std::size_t>(p)]));
      moved[static_cast<std::size_t>(p)] = true;
      values[slot] = outputs.back().view();
    } else {
      outputs.push_back(Tensor::copy_of(values[slot]));
    }
  }
  return outputs;
}

std::vector<Tensor> Model::run(std::span<const Tensor> inputs) const {
  std::vector<TensorView> views;
  views.reserve(inputs.size());
  for (const Tensor& t : inputs) views.push_back(t.view());
  return run(views);
}

}  // namespace qmatmul
