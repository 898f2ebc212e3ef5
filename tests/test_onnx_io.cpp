// Tests of the ONNX I/O stage through the library API: every .pb and model of
// the shared node tests loads and runs to the exact expected output; tensors
// of every element type round-trip through .pb files, as raw_data and in
// typed fields built with the protobuf API; models run with initializers,
// chained nodes, checked inputs and the load Options / opset reaching the
// operators; and catalogues of malformed tensors and models, built in a temp
// directory, are rejected with a qmatmul::Error naming the problem. The
// onnx_fixtures helpers are shared with test_cli.cpp (same executable).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "onnx/tensor_compare.h"
#include "onnx_fixtures.h"
#include "onnx/tensor_proto.h"
#include "qmatmul/onnx.h"

namespace fs = std::filesystem;
using qmatmul::ElementType;
using qmatmul::Tensor;

namespace onnx_fixtures {

// A fresh, empty directory under the system temp dir.
fs::path temp_dir(const std::string& tag) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("qmatmul_" + tag + "_" + std::to_string(::getpid()) + "_" +
                        std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void save_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string load_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void save_proto(const fs::path& path, const google::protobuf::MessageLite& message) {
  save_bytes(path, message.SerializeAsString());
}

onnx::TensorProto raw_tensor(const std::string& name, int32_t type,
                             const std::vector<int64_t>& dims, const std::string& raw) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(raw);
  return t;
}

// Adds a tensor-typed value info; a dim of -1 becomes the symbolic dim "K".
void add_value_info(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                    const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* info = list->Add();
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(type);
  for (int64_t d : dims) {
    auto* dim = tensor->mutable_shape()->add_dim();
    if (d < 0) dim->set_dim_param("K"); else dim->set_dim_value(d);
  }
}

// Y = MatMulInteger(A uint8 [2,K], B int8 [K,2]) with both operands graph
// inputs and no zero points.
onnx::ModelProto matmul_integer_model(int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("mm");
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type("MatMulInteger");
  node->set_name("mm0");
  node->add_input("A");
  node->add_input("B");
  node->add_output("Y");
  add_value_info(graph->mutable_input(), "A", 2, {2, -1});
  add_value_info(graph->mutable_input(), "B", 3, {-1, 2});
  add_value_info(graph->mutable_output(), "Y", 6, {2, 2});
  return model;
}

// The shared ONNX node tests, or "" when the shared folder is absent.
std::string node_tests_dir() {
#ifdef QMATMUL_SHARED_DIR
  const fs::path dir = fs::path(QMATMUL_SHARED_DIR) / "onnx-node-tests";
  if (fs::is_directory(dir)) return dir.string();
#endif
  return "";
}


}  // namespace onnx_fixtures

namespace {

using namespace onnx_fixtures;

#define REQUIRE_NODE_TESTS(dir)                                                        \
  const std::string dir = node_tests_dir();                                            \
  if (dir.empty()) GTEST_SKIP() << "shared ONNX node tests not found (QMATMUL_SHARED_DIR" \
                                   "/onnx-node-tests); skipping"

// The message of the qmatmul::Error `f` throws, or "<no error>".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const qmatmul::Error& e) {
    return e.what();
  }
  return "<no error>";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

Tensor make_tensor(ElementType type, qmatmul::Shape dims, const std::vector<uint8_t>& bytes) {
  Tensor t(type, std::move(dims));
  if (t.byte_size() == bytes.size()) std::memcpy(t.raw(), bytes.data(), bytes.size());
  return t;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  return {p, p + t.byte_size()};
}

const ElementType kAllTypes[] = {
    ElementType::Uint8,        ElementType::Int8,           ElementType::Int32,
    ElementType::Float32,      ElementType::Float16,        ElementType::BFloat16,
    ElementType::Float64,      ElementType::Float8E4M3FN,   ElementType::Float8E4M3FNUZ,
    ElementType::Float8E5M2,   ElementType::Float8E5M2FNUZ};

TEST(OnnxIo, ReadsEveryNodeTestTensor) {
  REQUIRE_NODE_TESTS(root);
  int files = 0;
  for (const fs::path& test : sorted_entries(root)) {
    for (const fs::path& set : sorted_entries(test)) {
      if (!fs::is_directory(set)) continue;
      for (const fs::path& pb : sorted_entries(set)) {
        SCOPED_TRACE(pb.string());
        const Tensor t = qmatmul::read_tensor_pb(pb.string());
        EXPECT_EQ(t.byte_size(), static_cast<size_t>(t.size()) * qmatmul::element_size(t.type()));
        ++files;
      }
    }
  }
  EXPECT_EQ(files, 10 * 9 + 5);  // 10 QLinearMatMul tests x 9 files, MatMulInteger 5
  const Tensor a = qmatmul::read_tensor_pb(root + "/test_matmulinteger/test_data_set_0/input_0.pb");
  EXPECT_EQ(a.type(), ElementType::Uint8);
  EXPECT_EQ(a.dims(), (qmatmul::Shape{4, 3}));
  EXPECT_EQ(a.data<uint8_t>()[0], 11);
  const Tensor s = qmatmul::read_tensor_pb(
      root + "/test_qlinearmatmul_2D_int8_float16/test_data_set_0/input_1.pb");
  EXPECT_EQ(s.type(), ElementType::Float16);
  EXPECT_EQ(s.data<uint16_t>()[0], 0x1ec2);
}

TEST(OnnxIo, LoadsEveryNodeTestModel) {
  REQUIRE_NODE_TESTS(root);
  for (const fs::path& test : sorted_entries(root)) {
    SCOPED_TRACE(test.string());
    const qmatmul::Model model = qmatmul::Model::load((test / "model.onnx").string());
    const bool integer = test.filename() == "test_matmulinteger";
    EXPECT_EQ(model.input_names().size(), integer ? 4u : 8u);
    EXPECT_EQ(model.output_names().size(), 1u);
    EXPECT_GE(model.opset(), 10);
  }
}

// Runs each node test through Model and compares exactly (needs the
// operators; the CLI test checks the same through `qmatmul onnx-test`).
TEST(OnnxIo, NodeTestsMatchThroughModel) {
  REQUIRE_NODE_TESTS(root);
  for (const fs::path& test : sorted_entries(root)) {
    SCOPED_TRACE(test.string());
    const qmatmul::Model model = qmatmul::Model::load((test / "model.onnx").string());
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < model.input_names().size(); ++i) {
      inputs.push_back(qmatmul::read_tensor_pb(
          (test / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string()));
    }
    const Tensor expected =
        qmatmul::read_tensor_pb((test / "test_data_set_0" / "output_0.pb").string());
    std::vector<Tensor> got;
    ASSERT_NO_THROW(got = model.run(inputs));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(qmatmul::onnx_io::compare_tensors(got[0], expected), "");
  }
}

TEST(OnnxIo, RawDataRoundTripEveryType) {
  const fs::path dir = temp_dir("roundtrip");
  for (ElementType type : kAllTypes) {
    for (const qmatmul::Shape& dims : {qmatmul::Shape{}, qmatmul::Shape{0, 3},
                                       qmatmul::Shape{2, 3}, qmatmul::Shape{1, 2, 5}}) {
      SCOPED_TRACE(qmatmul::type_name(type) + " " + qmatmul::shape_to_string(dims));
      Tensor t(type, dims);
      auto* p = static_cast<uint8_t*>(t.raw());
      for (size_t i = 0; i < t.byte_size(); ++i) p[i] = static_cast<uint8_t>(i * 37 + 11);
      const std::string path = (dir / "t.pb").string();
      qmatmul::write_tensor_pb(path, t, "value");
      const Tensor back = qmatmul::read_tensor_pb(path);
      EXPECT_EQ(back.type(), type);
      EXPECT_EQ(back.dims(), dims);
      EXPECT_EQ(bytes_of(back), bytes_of(t));
      onnx::TensorProto proto;
      ASSERT_TRUE(proto.ParseFromString(load_bytes(path)));
      EXPECT_EQ(proto.name(), "value");
      EXPECT_EQ(proto.data_type(), static_cast<int32_t>(type));
    }
  }
  fs::remove_all(dir);
}

TEST(OnnxIo, TypedFieldsDecodeEveryType) {
  const fs::path dir = temp_dir("typed");
  struct Case {
    ElementType type;
    std::vector<int32_t> int32_data;
    std::vector<uint8_t> expected;  // little-endian bytes
  };
  const Case cases[] = {
      {ElementType::Uint8, {0, 255, 7}, {0, 255, 7}},
      {ElementType::Int8, {-128, 127, -1}, {0x80, 0x7f, 0xff}},
      {ElementType::Int32, {INT32_MIN, INT32_MAX, -2}, {0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0x7f,
                                                        0xfe, 0xff, 0xff, 0xff}},
      {ElementType::Float16, {0x3c00, 0xfc00, 0x7e01}, {0x00, 0x3c, 0x00, 0xfc, 0x01, 0x7e}},
      {ElementType::BFloat16, {0x3f80, 0xffff, 0}, {0x80, 0x3f, 0xff, 0xff, 0, 0}},
      {ElementType::Float8E4M3FN, {0x7e, 0xff, 0x01}, {0x7e, 0xff, 0x01}},
      {ElementType::Float8E4M3FNUZ, {0x80, 0x7f, 0}, {0x80, 0x7f, 0}},
      {ElementType::Float8E5M2, {0x7c, 0xfd, 0x3c}, {0x7c, 0xfd, 0x3c}},
      {ElementType::Float8E5M2FNUZ, {0x80, 0x01, 0xff}, {0x80, 0x01, 0xff}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(qmatmul::type_name(c.type));
    onnx::TensorProto proto;
    proto.set_name("typed");
    proto.set_data_type(static_cast<int32_t>(c.type));
    proto.add_dims(3);
    for (int32_t v : c.int32_data) proto.add_int32_data(v);
    save_proto(dir / "t.pb", proto);
    const Tensor t = qmatmul::read_tensor_pb((dir / "t.pb").string());
    EXPECT_EQ(t.type(), c.type);
    EXPECT_EQ(t.dims(), qmatmul::Shape{3});
    EXPECT_EQ(bytes_of(t), c.expected);
    // Writing and reading again gives the same tensor (now in raw_data).
    qmatmul::write_tensor_pb((dir / "t2.pb").string(), t, "typed");
    EXPECT_EQ(bytes_of(qmatmul::read_tensor_pb((dir / "t2.pb").string())), c.expected);
  }
  onnx::TensorProto floats;
  floats.set_data_type(1);
  floats.add_dims(2);
  floats.add_dims(2);
  for (float v : {1.5f, -0.0f, INFINITY, 3e-39f}) floats.add_float_data(v);
  const Tensor f = qmatmul::tensor_from_proto(floats);
  ASSERT_EQ(f.type(), ElementType::Float32);
  EXPECT_EQ(f.data<float>()[0], 1.5f);
  EXPECT_TRUE(std::signbit(f.data<float>()[1]));
  EXPECT_EQ(f.data<float>()[3], 3e-39f);
  onnx::TensorProto doubles;
  doubles.set_data_type(11);
  for (double v : {0.1, -2.0}) doubles.add_double_data(v);
  doubles.add_dims(2);
  const Tensor d = qmatmul::tensor_from_proto(doubles);
  ASSERT_EQ(d.type(), ElementType::Float64);
  EXPECT_EQ(d.data<double>()[0], 0.1);
  EXPECT_EQ(d.data<double>()[1], -2.0);
  onnx::TensorProto empty;  // zero elements need no data at all
  empty.set_data_type(2);
  empty.add_dims(0);
  EXPECT_EQ(qmatmul::tensor_from_proto(empty).size(), 0);
  fs::remove_all(dir);
}

// A malformed tensor or model file and a phrase its error message must contain.
struct BadFile {
  const char* label;
  std::string bytes;
  const char* phrase;
};

std::vector<BadFile> bad_tensor_catalogue() {
  auto serialize = [](const onnx::TensorProto& t) { return t.SerializeAsString(); };
  std::vector<BadFile> out;
  out.push_back({"raw_data too short", serialize(raw_tensor("x", 2, {2, 3}, "12345")),
                 "raw_data holds 5 bytes but dims [2,3] of uint8 need 6"});
  out.push_back({"raw_data too long", serialize(raw_tensor("x", 1, {2}, std::string(9, 'a'))),
                 "raw_data holds 9 bytes"});
  out.push_back({"negative dim", serialize(raw_tensor("x", 2, {2, -3}, "")), "negative"});
  out.push_back({"unknown data_type", serialize(raw_tensor("x", 99, {1}, "a")),
                 "data_type 99 is unknown"});
  out.push_back({"unsupported data_type", serialize(raw_tensor("x", 7, {1}, "abcdefgh")),
                 "data_type int64 (7) is not supported"});
  out.push_back({"undefined data_type", serialize(raw_tensor("x", 0, {1}, "a")), "undefined"});
  out.push_back({"element count overflow",
                 serialize(raw_tensor("x", 2, {int64_t{1} << 40, int64_t{1} << 40}, "")),
                 "overflow"});
  out.push_back({"byte count overflow",
                 serialize(raw_tensor("x", 11, {int64_t{1} << 61}, "")), "overflow"});
  onnx::TensorProto t;
  t.set_name("x");
  t.set_data_type(3);
  t.add_dims(3);
  t.add_int32_data(1);
  t.add_int32_data(2);
  out.push_back({"typed field too short", serialize(t), "int32_data holds 2 values but dims [3]"});
  t.add_int32_data(300);
  out.push_back({"int8 value out of range", serialize(t), "int32_data[2] = 300 is outside"});
  t.set_raw_data("abc");
  out.push_back({"raw and typed data", serialize(t), "both in raw_data and in int32_data"});
  onnx::TensorProto wrong_field;
  wrong_field.set_data_type(3);
  wrong_field.add_dims(1);
  wrong_field.add_float_data(1.0f);
  out.push_back({"float_data for int8", serialize(wrong_field), "float_data"});
  onnx::TensorProto no_data;
  no_data.set_data_type(1);
  no_data.add_dims(4);
  out.push_back({"no data", serialize(no_data), "has no data"});
  onnx::TensorProto external = raw_tensor("x", 2, {1}, "");
  external.clear_raw_data();
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = external.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  out.push_back({"external data", serialize(external), "external data"});
  onnx::TensorProto segmented = raw_tensor("x", 2, {1}, "a");
  segmented.mutable_segment()->set_begin(0);
  segmented.mutable_segment()->set_end(1);
  out.push_back({"segment", serialize(segmented), "segment"});
  const std::string good = serialize(raw_tensor("x", 1, {4}, std::string(16, '\1')));
  out.push_back({"truncated", good.substr(0, good.size() - 5), "truncated or malformed"});
  out.push_back({"garbage", std::string(12, '\xff'), "truncated or malformed"});
  return out;
}

TEST(OnnxIo, BadTensorFilesAreRejected) {
  const fs::path dir = temp_dir("badtensor");
  for (const BadFile& bad : bad_tensor_catalogue()) {
    SCOPED_TRACE(bad.label);
    const fs::path path = dir / "bad.pb";
    save_bytes(path, bad.bytes);
    const std::string message = error_of([&] { qmatmul::read_tensor_pb(path.string()); });
    EXPECT_TRUE(contains(message, bad.phrase)) << message;
    EXPECT_TRUE(contains(message, path.string())) << message;
  }
  EXPECT_TRUE(contains(error_of([&] { qmatmul::read_tensor_pb((dir / "missing.pb").string()); }),
                       "no such file"));
  EXPECT_TRUE(contains(error_of([&] { qmatmul::read_tensor_pb(dir.string()); }), "directory"));
  fs::remove_all(dir);
}

TEST(OnnxIo, WriteRejectsInvalidViews) {
  const fs::path dir = temp_dir("badwrite");
  const std::string path = (dir / "out.pb").string();
  const qmatmul::TensorView no_data{ElementType::Uint8, {2}, nullptr};
  EXPECT_TRUE(contains(error_of([&] { qmatmul::write_tensor_pb(path, no_data, "y"); }),
                       "no data"));
  const uint8_t byte = 0;
  const qmatmul::TensorView bad_type{static_cast<ElementType>(7), {1}, &byte};
  EXPECT_TRUE(contains(error_of([&] { qmatmul::write_tensor_pb(path, bad_type, "y"); }),
                       "int64 (7)"));
  const qmatmul::TensorView ok{ElementType::Uint8, {1}, &byte};
  EXPECT_TRUE(contains(error_of([&] {
                         qmatmul::write_tensor_pb((dir / "no" / "such" / "dir.pb").string(), ok,
                                                  "y");
                       }),
                       "cannot create"));
  fs::remove_all(dir);
}

std::vector<BadFile> bad_model_catalogue() {
  std::vector<BadFile> out;
  const std::string good = matmul_integer_model(10).SerializeAsString();
  out.push_back({"truncated", good.substr(0, 20), "truncated or malformed"});
  out.push_back({"garbage", "this is not an ONNX model\n", "truncated or malformed"});
  out.push_back({"empty file", "", "no graph"});
  onnx::ModelProto m = matmul_integer_model(10);
  onnx::NodeProto* relu = m.mutable_graph()->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu0");
  relu->add_input("Y");
  relu->add_output("Z");
  out.push_back({"Relu node", m.SerializeAsString(), "node 'relu0' (Relu): operator 'Relu'"});
  out.push_back({"opset 9", matmul_integer_model(9).SerializeAsString(), "opset 9"});
  m = matmul_integer_model(10);
  m.mutable_opset_import(0)->set_domain("com.example");
  out.push_back({"no default opset", m.SerializeAsString(), "imports no opset"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  out.push_back({"unknown domain", m.SerializeAsString(), "domain 'com.microsoft'"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->set_input(1, "C");
  out.push_back({"undefined input", m.SerializeAsString(), "input B 'C' is not a graph input"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->add_input("");
  m.mutable_graph()->mutable_node(0)->add_input("");
  m.mutable_graph()->mutable_node(0)->add_input("");
  out.push_back({"five inputs", m.SerializeAsString(), "has 5 inputs; MatMulInteger takes 2 to 4"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->set_input(1, "");
  out.push_back({"empty required input", m.SerializeAsString(), "required input B"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->set_op_type("QLinearMatMul");
  out.push_back({"QLinearMatMul with 2 inputs", m.SerializeAsString(),
                 "has 2 inputs; QLinearMatMul takes exactly 8"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->add_attribute()->set_name("transA");
  out.push_back({"attribute", m.SerializeAsString(), "attribute 'transA'"});
  m = matmul_integer_model(10);
  *m.mutable_graph()->add_node() = m.graph().node(0);  // Y defined twice
  out.push_back({"duplicate output", m.SerializeAsString(), "'Y' is defined twice"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_node(0)->set_input(0, "Z");  // Z comes from the next node
  onnx::NodeProto* later = m.mutable_graph()->add_node();
  *later = m.graph().node(0);
  later->set_input(0, "A");
  later->set_output(0, "Z");
  out.push_back({"not topologically sorted", m.SerializeAsString(), "topologically sorted"});
  m = matmul_integer_model(10);
  *m.mutable_graph()->add_initializer() = raw_tensor("W", 3, {3, 2}, "12");
  out.push_back({"bad initializer", m.SerializeAsString(), "initializer: tensor 'W': raw_data"});
  m = matmul_integer_model(10);
  m.mutable_graph()->mutable_output(0)->set_name("nowhere");
  out.push_back({"undefined output", m.SerializeAsString(), "graph output 'nowhere'"});
  return out;
}

TEST(OnnxIo, BadModelsAreRejected) {
  const fs::path dir = temp_dir("badmodel");
  for (const BadFile& bad : bad_model_catalogue()) {
    SCOPED_TRACE(bad.label);
    const fs::path path = dir / "bad.onnx";
    save_bytes(path, bad.bytes);
    const std::string message = error_of([&] { qmatmul::Model::load(path.string()); });
    EXPECT_TRUE(contains(message, bad.phrase)) << message;
    EXPECT_TRUE(contains(message, path.string())) << message;
  }
  EXPECT_TRUE(contains(error_of([&] { qmatmul::Model::load((dir / "none.onnx").string()); }),
                       "no such file"));
  fs::remove_all(dir);
}

TEST(OnnxIo, TruncatedNodeTestModelIsRejected) {
  REQUIRE_NODE_TESTS(root);
  const fs::path dir = temp_dir("truncated");
  const std::string real = load_bytes(fs::path(root) / "test_matmulinteger" / "model.onnx");
  save_bytes(dir / "cut.onnx", real.substr(0, 20));
  EXPECT_TRUE(contains(error_of([&] { qmatmul::Model::load((dir / "cut.onnx").string()); }),
                       "truncated or malformed"));
  fs::remove_all(dir);
}

TEST(OnnxIo, RunChecksInputsAgainstTheGraph) {
  const fs::path dir = temp_dir("runcheck");
  save_proto(dir / "mm.onnx", matmul_integer_model(10));
  const qmatmul::Model model = qmatmul::Model::load((dir / "mm.onnx").string());
  EXPECT_EQ(model.input_names(), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(model.output_names(), std::vector<std::string>{"Y"});
  const Tensor a(ElementType::Uint8, {2, 3}), b(ElementType::Int8, {3, 2});
  EXPECT_TRUE(contains(error_of([&] { model.run(std::vector<Tensor>{a}); }),
                       "has 2 inputs (A, B) but 1 were given"));
  const Tensor a_int8(ElementType::Int8, {2, 3});
  EXPECT_TRUE(contains(error_of([&] { model.run({a_int8.view(), b.view()}); }),
                       "input 'A' has element type int8 but the graph declares uint8"));
  const Tensor a_3x3(ElementType::Uint8, {3, 3});
  EXPECT_TRUE(contains(error_of([&] { model.run({a_3x3.view(), b.view()}); }),
                       "has shape [3,3] but the graph declares [2,K]"));
  // The symbolic K accepts any size; the operator then checks K itself.
  const Tensor a_2x4(ElementType::Uint8, {2, 4});
  EXPECT_TRUE(contains(error_of([&] { model.run({a_2x4.view(), b.view()}); }),
                       "node 'mm0' (MatMulInteger)"));
  fs::remove_all(dir);
}

TEST(OnnxIo, RunsInitializersAndChains) {
  // q = QLinearMatMul(A, 1, 0, W2, 1, 0, 1, 0) = sat(A @ W2) with W2 = 2I;
  // Y = MatMulInteger(q, ones[2,1], a_zero_point = 1, b_zero_point = 0) =
  // row sums of q - 1. Every B, b_scale and b_zero_point is an initializer,
  // so both nodes run on weights packed with their quantization at load.
  onnx::ModelProto m;
  auto* import = m.add_opset_import();
  import->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  const float one = 1.0f;
  const std::string one_bytes(reinterpret_cast<const char*>(&one), 4);
  *g->add_initializer() = raw_tensor("s", 1, {}, one_bytes);
  *g->add_initializer() = raw_tensor("z", 2, {}, std::string(1, '\0'));
  *g->add_initializer() = raw_tensor("W2", 2, {2, 2}, std::string("\2\0\0\2", 4));
  *g->add_initializer() = raw_tensor("ones", 2, {2, 1}, "\1\1");
  *g->add_initializer() = raw_tensor("zp1", 2, {}, "\1");
  onnx::NodeProto* q = g->add_node();
  q->set_op_type("QLinearMatMul");
  for (const char* in : {"A", "s", "z", "W2", "s", "z", "s", "z"}) q->add_input(in);
  q->add_output("q");
  onnx::NodeProto* mm = g->add_node();
  mm->set_op_type("MatMulInteger");
  mm->set_domain("ai.onnx");
  for (const char* in : {"q", "ones", "zp1", "z"}) mm->add_input(in);  // b_zero_point 0, stored with "ones"
  mm->add_output("Y");
  add_value_info(g->mutable_input(), "A", 2, {2, 2});
  add_value_info(g->mutable_input(), "s", 1, {});  // an initializer: not a run() input
  add_value_info(g->mutable_output(), "Y", 6, {2, 1});
  add_value_info(g->mutable_output(), "q", 2, {2, 2});
  const fs::path dir = temp_dir("chain");
  save_proto(dir / "chain.onnx", m);
  const qmatmul::Model model = qmatmul::Model::load((dir / "chain.onnx").string());
  EXPECT_EQ(model.input_names(), std::vector<std::string>{"A"});
  EXPECT_EQ(model.output_names(), (std::vector<std::string>{"Y", "q"}));
  const Tensor a = make_tensor(ElementType::Uint8, {2, 2}, {10, 20, 200, 3});
  std::vector<Tensor> out;
  ASSERT_NO_THROW(out = model.run(std::vector<Tensor>{a}));
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].type(), ElementType::Int32);
  ASSERT_EQ(out[0].dims(), (qmatmul::Shape{2, 1}));
  EXPECT_EQ(out[0].data<int32_t>()[0], 19 + 39);   // q row 0 = {20, 40}
  EXPECT_EQ(out[0].data<int32_t>()[1], 254 + 5);   // q row 1 = {255 (400 saturated), 6}
  EXPECT_EQ(bytes_of(out[1]), (std::vector<uint8_t>{20, 40, 255, 6}));
  fs::remove_all(dir);
}

TEST(OnnxIo, OutputsMayBeInputsOrInitializers) {
  // A graph without nodes: its outputs are an input, an initializer, and the
  // input again; each comes back as its own copy.
  onnx::ModelProto m;
  m.add_opset_import()->set_version(21);
  onnx::GraphProto* g = m.mutable_graph();
  *g->add_initializer() = raw_tensor("w", 6, {1}, std::string("\7\0\0\0", 4));
  add_value_info(g->mutable_input(), "x", 2, {});
  for (const char* name : {"x", "w", "x"}) add_value_info(g->mutable_output(), name, 0, {});
  const fs::path dir = temp_dir("passthrough");
  save_proto(dir / "p.onnx", m);
  const Tensor x = make_tensor(ElementType::Uint8, {}, {42});
  const std::vector<Tensor> out =
      qmatmul::Model::load((dir / "p.onnx").string()).run(std::vector<Tensor>{x});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(bytes_of(out[0]), std::vector<uint8_t>{42});
  EXPECT_EQ(out[1].data<int32_t>()[0], 7);
  EXPECT_EQ(bytes_of(out[2]), std::vector<uint8_t>{42});
  fs::remove_all(dir);
}

TEST(OnnxIo, OptionsAndOpsetReachTheOperator) {
  const fs::path dir = temp_dir("options");
  const std::string path = (dir / "q.onnx").string();
  const Tensor a = make_tensor(ElementType::Uint8, {1, 1}, {5});
  save_proto(path, qlinear_scale_model(21, 1));
  std::vector<Tensor> out;
  ASSERT_NO_THROW(out = qmatmul::Model::load(path).run(std::vector<Tensor>{a}));
  EXPECT_EQ(out.at(0).data<uint8_t>()[0], 3);
  qmatmul::Options ort;
  ort.requantization = qmatmul::Requantization::OnnxRuntimeCompat;
  ort.threads = 1;
  ASSERT_NO_THROW(out = qmatmul::Model::load(path, ort).run(std::vector<Tensor>{a}));
  EXPECT_EQ(out.at(0).data<uint8_t>()[0], 2);
  // float16 scales: accepted by QLinearMatMul-21, rejected by -10 (opset 20).
  save_proto(path, qlinear_scale_model(21, 10));
  ASSERT_NO_THROW(out = qmatmul::Model::load(path).run(std::vector<Tensor>{a}));
  EXPECT_EQ(out.at(0).data<uint8_t>()[0], 3);
  save_proto(path, qlinear_scale_model(20, 10));
  const std::string message =
      error_of([&] { qmatmul::Model::load(path).run(std::vector<Tensor>{a}); });
  EXPECT_TRUE(contains(message, "node 'q' (QLinearMatMul)")) << message;
  fs::remove_all(dir);
}

}  // namespace
