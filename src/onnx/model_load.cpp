// Model::load: parses an ONNX ModelProto and turns it into the slot-based
// Model::Impl that model_run.cpp executes. This is where a model is judged:
// the file must parse, hold a graph and import opset >= 10 of the default
// domain; every node must be MatMulInteger or QLinearMatMul in the default
// domain with the right number of inputs, no attributes and one output; every
// node input must be a graph input, an initializer or the output of an
// earlier node (ONNX graphs are topologically sorted and in SSA form);
// initializers are decoded once, here. Each rejection names the model file
// and the node, input or tensor at fault.
#include <map>
#include <set>

#include "model_impl.h"
#include "tensor_proto.h"

namespace qmatmul::onnx_io {
namespace {

// ONNX input names per operator, for messages and arity checks.
const std::vector<std::string> kMatMulIntegerInputs = {"A", "B", "a_zero_point",
                                                       "b_zero_point"};
const std::vector<std::string> kQLinearMatMulInputs = {
    "a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"};

bool is_default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string node_label(const onnx::NodeProto& node, int index) {
  std::string label = node.name().empty() ? "node #" + std::to_string(index)
                                          : "node '" + node.name() + "'";
  return label + " (" + (node.op_type().empty() ? "no op_type" : node.op_type()) + ")";
}

// Reads ValueInfoProto.type. `what` is "graph input 'x'" style text.
DeclaredType parse_declared_type(const onnx::ValueInfoProto& info, const std::string& where) {
  DeclaredType out;
  if (!info.has_type()) return out;
  const onnx::TypeProto& type = info.type();
  if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET) return out;
  if (type.value_case() != onnx::TypeProto::kTensorType) {
    throw Error(where + " is not a tensor (sequence, map, optional and sparse values are not "
                "supported)");
  }
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  out.elem_type = tensor.elem_type();
  if (out.elem_type != 0 && element_size(static_cast<ElementType>(out.elem_type)) == 0) {
    throw Error(where + " declares element type " + describe_type_code(out.elem_type) +
                ", which qmatmul does not support");
  }
  if (!tensor.has_shape()) return out;
  out.has_shape = true;
  for (const auto& dim : tensor.shape().dim()) {
    if (dim.value_case() == onnx::TensorShapeProto::Dimension::kDimValue) {
      if (dim.dim_value() < 0) {
        throw Error(where + " declares a negative dim (" + std::to_string(dim.dim_value()) + ")");
      }
      out.dims.emplace_back(dim.dim_value());
      out.dim_labels.push_back(std::to_string(dim.dim_value()));
    } else {
      out.dims.emplace_back(std::nullopt);
      out.dim_labels.push_back(dim.value_case() == onnx::TensorShapeProto::Dimension::kDimParam
                                   ? dim.dim_param()
                                   : "?");
    }
  }
  return out;
}

// The default domain's opset version; rejects models that import none or
// one below 10.
int64_t default_opset(const onnx::ModelProto& model, const std::string& path) {
  std::optional<int64_t> version;
  for (const auto& import : model.opset_import()) {
    if (!is_default_domain(import.domain())) continue;
    if (version && *version != import.version()) {
      throw Error(path + ": the model imports the default domain twice, as opset " +
                  std::to_string(*version) + " and " + std::to_string(import.version()));
    }
    version = import.version();
  }
  if (!version) {
    throw Error(path + ": the model imports no opset of the default ONNX domain "
                "(opset_import has no entry with domain \"\" or \"ai.onnx\")");
  }
  if (*version < 10) {
    throw Error(path + ": the model imports opset " + std::to_string(*version) +
                " of the default domain; MatMulInteger and QLinearMatMul need opset 10 or later");
  }
  return *version;
}

// Builds the slot table and nodes of `impl` from the graph.
class GraphBuilder {
 public:
  GraphBuilder(const onnx::GraphProto& graph, Model::Impl& impl)
      : graph_(graph), impl_(impl), path_(impl.path) {}

  void build() {
    if (graph_.sparse_initializer_size() > 0) {
      throw Error(path_ + ": sparse initializers are not supported");
    }
    add_initializers();
    add_inputs();
    // Initializer slots follow the input slots.
    const int first_init = static_cast<int>(impl_.input_names.size());
    for (auto& [name, slot] : slots_) {
      if (slot < 0) slot = first_init + (-slot - 1);
    }
    impl_.slot_count = first_init + static_cast<int>(impl_.initializers.size());
    for (const auto& node : graph_.node()) {
      for (const auto& out : node.output()) all_node_outputs_.insert(out);
    }
    for (int i = 0; i < graph_.node_size(); ++i) add_node(graph_.node(i), i);
    add_outputs();
  }

 private:
  void define(const std::string& name, int slot, const std::string& what) {
    if (name.empty()) throw Error(path_ + ": " + what + " has an empty name");
    if (!slots_.emplace(name, slot).second) {
      throw Error(path_ + ": " + what + " '" + name +
                  "' is defined twice (ONNX graphs give each value one definition)");
    }
  }

  // Initializers get provisional negative slots (-1 - index) until the
  // number of run() inputs is known.
  void add_initializers() {
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const onnx::TensorProto& init = graph_.initializer(i);
      define(init.name(), -1 - i, "initializer");
      impl_.initializers.push_back(tensor_from_proto(init, path_ + ": initializer"));
    }
  }

  void add_inputs() {
    std::set<std::string> seen;
    for (const auto& input : graph_.input()) {
      if (input.name().empty()) throw Error(path_ + ": a graph input has an empty name");
      if (!seen.insert(input.name()).second) {
        throw Error(path_ + ": graph input '" + input.name() + "' is listed twice");
      }
      // An input with an initializer of the same name is a constant with a
      // declared type (IR < 4 style); it is not bound by run().
      if (slots_.count(input.name())) continue;
      const int slot = static_cast<int>(impl_.input_names.size());
      define(input.name(), slot, "graph input");
      impl_.input_names.push_back(input.name());
      impl_.input_types.push_back(
          parse_declared_type(input, path_ + ": graph input '" + input.name() + "'"));
    }
  }

  int resolve(const std::string& name, const std::string& where) const {
    const auto it = slots_.find(name);
    if (it != slots_.end()) return it->second;
    if (all_node_outputs_.count(name)) {
      throw Error(where + " '" + name + "' is produced by a later node; nodes must be "
                  "topologically sorted (every input defined before the node that uses it)");
    }
    throw Error(where + " '" + name + "' is not a graph input, an initializer or the output "
                "of an earlier node");
  }

  void add_node(const onnx::NodeProto& proto, int index) {
    const std::string label = node_label(proto, index);
    const std::string where = path_ + ": " + label;
    if (!is_default_domain(proto.domain())) {
      throw Error(where + " is in domain '" + proto.domain() +
                  "'; only the default ONNX domain (\"\" or \"ai.onnx\") is supported");
    }
    Node node;
    node.label = label;
    const std::vector<std::string>* names = nullptr;
    std::size_t min_inputs = 0;
    if (proto.op_type() == "MatMulInteger") {
      node.kind = OpKind::MatMulInteger;
      names = &kMatMulIntegerInputs;
      min_inputs = 2;
    } else if (proto.op_type() == "QLinearMatMul") {
      node.kind = OpKind::QLinearMatMul;
      names = &kQLinearMatMulInputs;
      min_inputs = 8;
    } else {
      throw Error(where + ": operator '" + proto.op_type() +
                  "' is not supported; qmatmul runs only MatMulInteger and QLinearMatMul");
    }
    const auto count = static_cast<std::size_t>(proto.input_size());
    if (count < min_inputs || count > names->size()) {
      const std::string expected = min_inputs == names->size()
                                       ? "exactly " + std::to_string(min_inputs)
                                       : std::to_string(min_inputs) + " to " +
                                             std::to_string(names->size());
      throw Error(where + " has " + std::to_string(count) + " inputs; " + proto.op_type() +
                  " takes " + expected);
    }
    if (proto.attribute_size() > 0) {
      throw Error(where + " has attribute '" + proto.attribute(0).name() + "'; " +
                  proto.op_type() + " takes no attributes");
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::string& name = proto.input(static_cast<int>(i));
      if (name.empty()) {
        if (i < min_inputs) {
          throw Error(where + ": required input " + (*names)[i] + " (input " +
                      std::to_string(i) + ") is empty");
        }
        node.inputs.push_back(-1);  // absent optional zero point
        continue;
      }
      node.inputs.push_back(resolve(name, where + ": input " + (*names)[i]));
    }
    if (proto.output_size() != 1 || proto.output(0).empty()) {
      throw Error(where + " has " + std::to_string(proto.output_size()) +
                  " outputs; it must have exactly one, named");
    }
    node.output = impl_.slot_count++;
    define(proto.output(0), node.output, label + " output");
    impl_.nodes.push_back(std::move(node));
  }

  void add_outputs() {
    if (graph_.output_size() == 0) throw Error(path_ + ": the graph has no outputs");
    for (const auto& output : graph_.output()) {
      const std::string where = path_ + ": graph output";
      impl_.output_slots.push_back(resolve(output.name(), where));
      impl_.output_names.push_back(output.name());
      impl_.output_types.push_back(
          parse_declared_type(output, where + " '" + output.name() + "'"));
    }
  }

  const onnx::GraphProto& graph_;
  Model::Impl& impl_;
  const std::string& path_;
  std::map<std::string, int> slots_;
  std::set<std::string> all_node_outputs_;
};

}  // namespace

std::string DeclaredType::shape_text() const {
  std::string text = "[";
  for (std::size_t i = 0; i < dim_labels.size(); ++i) {
    if (i > 0) text += ",";
    text += dim_labels[i];
  }
  return text + "]";
}

std::string DeclaredType::shape_mismatch(const Shape& shape) const {
  if (!has_shape) return "";
  bool ok = shape.size() == dims.size();
  for (std::size_t i = 0; ok && i < dims.size(); ++i) {
    if (dims[i] && *dims[i] != shape[i]) ok = false;
  }
  if (ok) return "";
  return "has shape " + shape_to_string(shape) + " but the graph declares " + shape_text();
}

// Packs every node's B operand that is an int8, uint8 or float8 initializer,
// once (with its zero point and scale when those are initializers as well),
// so run() never repacks constant weights. Anything else (a B from a
// graph input or node output, or an initializer of another type, which the
// operator will reject with its own message) stays unpacked.
void pack_constant_weights(Model::Impl& impl) {
  const int first_init = static_cast<int>(impl.input_names.size());
  const int end_init = first_init + static_cast<int>(impl.initializers.size());
  impl.packed_b.assign(impl.nodes.size(), PackedB());
  for (std::size_t n = 0; n < impl.nodes.size(); ++n) {
    const Node& node = impl.nodes[n];
    const std::size_t b_input = node.kind == OpKind::MatMulInteger ? 1 : 3;
    if (b_input >= node.inputs.size()) continue;
    const int slot = node.inputs[b_input];
    if (slot < first_init || slot >= end_init) continue;
    const Tensor& b = impl.initializers[static_cast<std::size_t>(slot - first_init)];
    if ((b.type() != ElementType::Uint8 && b.type() != ElementType::Int8 && !is_float8(b.type())) ||
        b.dims().empty())
      continue;
    // b_zero_point (and b_scale) that are initializers too are stored with
    // the packed weights; the operator checks them against each call.
    const auto initializer = [&](std::size_t input) -> const Tensor* {
      if (input >= node.inputs.size()) return nullptr;
      const int s = node.inputs[input];
      return s >= first_init && s < end_init ? &impl.initializers[static_cast<std::size_t>(s - first_init)] : nullptr;
    };
    const Tensor* b_zero_point = initializer(node.kind == OpKind::MatMulInteger ? 3 : 5);
    const Tensor* b_scale = node.kind == OpKind::MatMulInteger ? nullptr : initializer(4);
    const bool complete = b_zero_point != nullptr && (node.kind == OpKind::MatMulInteger || b_scale != nullptr);
    try {
      impl.packed_b[n] = complete ? PackedB::pack(b.view(), b_zero_point->view(),
                                                  b_scale ? std::optional<TensorView>(b_scale->view()) : std::nullopt,
                                                  impl.options)
                                  : PackedB::pack(b.view(), impl.options);
    } catch (const Error&) {
      impl.packed_b[n] = PackedB::pack(b.view(), impl.options);  // a mistyped parameter: the call reports it
    }
  }
}

}  // namespace qmatmul::onnx_io

namespace qmatmul {

Model Model::load(const std::string& path, const Options& options) {
  const std::string bytes = onnx_io::read_file_bytes(path, "model file");
  onnx::ModelProto proto;
  if (!proto.ParseFromString(bytes)) {
    throw Error(path + ": not a valid ONNX model (truncated or malformed protobuf, " +
                std::to_string(bytes.size()) + " bytes)");
  }
  if (!proto.has_graph()) {
    throw Error(path + ": the file holds no graph (not an ONNX model, or truncated)");
  }
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->options = options;
  impl->opset = onnx_io::default_opset(proto, path);
  onnx_io::GraphBuilder(proto.graph(), *impl).build();
  onnx_io::pack_constant_weights(*impl);
  return Model(std::move(impl));
}

const std::vector<std::string>& Model::input_names() const { return impl_->input_names; }
const std::vector<std::string>& Model::output_names() const { return impl_->output_names; }
int64_t Model::opset() const { return impl_->opset; }
const std::string& Model::path() const { return impl_->path; }

}  // namespace qmatmul
