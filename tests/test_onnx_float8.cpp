// Float8 QLinearMatMul-21 through ONNX files, end to end. Each case builds,
// with the ONNX protobuf classes, a one-node opset-21 model with float8
// inputs (e4m3fn x e5m2, uint8 x e4m3fn, e5m2 x e4m3fn; float32, float16 and
// bfloat16 scales; zero and nonzero float8 zero points, per tensor and per
// column; B as an initializer or as a graph input; tensors in raw_data or in
// int32_data / float_data) and saves it in the ONNX backend node-test layout
// (model.onnx, test_data_set_0/input_<i>.pb, output_0.pb) in a temp dir. The
// expected output comes from the reference oracle (reference/). Inputs are
// chosen so that every float32 partial sum is exact (float8 values v with
// |v| <= 2 and 8v an integer, as in test_float8_gemm.cpp), so SEMANTICS.md §5's
// free summation order cannot change a bit and the comparison is exact, as
// `qmatmul onnx-test` requires; one random case with arbitrary finite codes
// is checked through the API within §5's one-step tolerance instead. Checks:
// qmatmul::Model::load/run reproduces the expected tensors, `qmatmul
// onnx-test` passes them (and fails a corrupted copy), `qmatmul run` writes
// the expected output_0.pb, and float8 / float16 initializers and input files
// stored in int32_data are decoded right. Suite name Float8Onnx, so CTest's
// forced-ISA runs (filter Float8*) repeat it on every instruction set.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "onnx/tensor_compare.h"
#include "onnx_fixtures.h"
#include "onnx/tensor_proto.h"
#include "qmatmul/onnx.h"
#include "reference/reference.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace qmatmul::testing {
namespace {

namespace ref = qmatmul::reference;
using onnx_fixtures::temp_dir;

// QLinearMatMul's inputs in ONNX order; these are also the graph names.
const char* const kInputNames[] = {"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point",
                                   "y_scale", "y_zero_point"};
enum Input { kA, kAScale, kAZp, kB, kBScale, kBZp, kYScale, kYZp, kInputCount };

enum class Storage { Raw, Typed };  // raw_data, or int32_data / float_data

struct ModelCase {
  std::string name;  // the node-test directory name
  ET a_type, b_type, y_type, scale_type;
  Shape a_dims, b_dims;
  bool b_initializer;  // b, b_scale, b_zero_point, y_scale, y_zero_point as initializers
  Storage storage;
  double a_zp, b_zp, y_zp;   // zero point values (per tensor)
  bool per_column_b;         // b_scale and b_zero_point of shape [N] (b_zp varied per column)
  double a_scale, b_scale, y_scale;
};

const ModelCase kCases[] = {
    {"test_qlinearmatmul_float8_e4m3fn_e5m2_b_initializer", ET::Float8E4M3FN, ET::Float8E5M2, ET::Float8E4M3FN,
     ET::Float32, {4, 16}, {16, 6}, true, Storage::Raw, 0, 0, 0, false, 0.5, 0.25, 0.025},
    {"test_qlinearmatmul_float8_e4m3fn_e5m2_b_input_float16_zero_points", ET::Float8E4M3FN, ET::Float8E5M2,
     ET::Float8E4M3FN, ET::Float16, {2, 3, 16}, {16, 5}, false, Storage::Raw, 0.5, -1.0, 2.0, false, 0.5, 0.25,
     0.03},
    {"test_qlinearmatmul_float8_uint8_e4m3fn_bfloat16_per_column", ET::Uint8, ET::Float8E4M3FN, ET::Float8E4M3FN,
     ET::BFloat16, {5, 16}, {16, 7}, true, Storage::Raw, 128, 0, -1.5, true, 0.05, 0.5, 0.25},
    {"test_qlinearmatmul_float8_e5m2_e4m3fn_uint8_output", ET::Float8E5M2, ET::Float8E4M3FN, ET::Uint8, ET::Float32,
     {6, 24}, {24, 9}, false, Storage::Raw, -0.25, 0.75, 100, false, 0.25, 0.5, 0.02},
    {"test_qlinearmatmul_float8_int32_data", ET::Float8E4M3FN, ET::Float8E5M2, ET::Float8E4M3FN, ET::Float16,
     {3, 16}, {16, 4}, true, Storage::Typed, 1.5, 0.5, -2.0, true, 0.5, 0.25, 0.02},
};

// Float8 codes whose values v are finite with |v| <= 2 and 8v an integer:
// every sum of products of such values (minus such zero points) over a few
// dozen terms is exact in float32. `exact` false: every finite code.
std::vector<uint8_t> code_pool(ET t, bool exact) {
  std::vector<uint8_t> pool;
  for (int c = 0; c < 256; ++c) {
    const float v = ref::float8_to_float(static_cast<uint8_t>(c), t);
    if (!std::isfinite(v)) continue;
    if (exact && !(std::fabs(v) <= 2 && v * 8 == std::floor(v * 8))) continue;
    pool.push_back(static_cast<uint8_t>(c));
  }
  return pool;
}

Tensor random_operand(std::mt19937& rng, ET t, const Shape& dims, bool exact) {
  if (!is_float8(t)) return random_int8(rng, t, dims, 0);
  const std::vector<uint8_t> pool = code_pool(t, exact);
  Tensor out(t, dims);
  for (int64_t i = 0; i < out.size(); ++i) out.data<uint8_t>()[i] = pool[rng() % pool.size()];
  return out;
}

// A zero point of `dims` holding `value` (float8 encoded exactly, or the
// integer), or with `vary`, exact float8 values picked per element.
Tensor zero_point(std::mt19937& rng, ET t, const Shape& dims, double value, bool vary) {
  Tensor out(t, dims);
  const std::vector<uint8_t> pool = is_float8(t) ? code_pool(t, true) : std::vector<uint8_t>{};
  for (int64_t i = 0; i < out.size(); ++i) {
    auto* p = out.data<uint8_t>() + i;
    if (is_float8(t) && vary && i > 0) {
      *p = pool[rng() % pool.size()];
    } else if (is_float8(t)) {
      *p = ref::float8_from_double(value, t);
      EXPECT_EQ(ref::float8_to_float(*p, t), value) << "zero point not exact in " << type_name(t);
    } else if (t == ET::Int8) {
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(value);
    } else {
      *p = static_cast<uint8_t>(value);
    }
  }
  return out;
}

// A scale tensor of `dims` holding `value` (varied slightly per element) in
// the scale type.
Tensor scale(ET t, const Shape& dims, double value) {
  Tensor out(t, dims);
  for (int64_t i = 0; i < out.size(); ++i) {
    const float v = static_cast<float>(value * (1.0 + 0.125 * double(i % 4)));
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (t == ET::Float32) {
      out.data<float>()[i] = v;
    } else if (t == ET::BFloat16) {
      out.data<uint16_t>()[i] = static_cast<uint16_t>(bits >> 16);  // truncation: any value will do
    } else {  // float16 by hand, normal range only: round the 23-bit mantissa to 10 bits
      const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
      EXPECT_TRUE(exponent > 0 && exponent < 31) << value;
      const uint32_t mantissa = (bits & 0x7FFFFF) >> 13;
      out.data<uint16_t>()[i] = static_cast<uint16_t>((exponent << 10) | mantissa);
    }
  }
  return out;
}

// The eight input tensors and the expected output of one case.
struct CaseData {
  Tensor inputs[kInputCount];
  Tensor expected;
};

CaseData make_case_data(const ModelCase& c, unsigned seed) {
  std::mt19937 rng(seed);
  CaseData d;
  const int64_t n = c.b_dims.back();
  const Shape b_param = c.per_column_b ? Shape{n} : Shape{};
  d.inputs[kA] = random_operand(rng, c.a_type, c.a_dims, true);
  d.inputs[kB] = random_operand(rng, c.b_type, c.b_dims, true);
  d.inputs[kAScale] = scale(c.scale_type, {}, c.a_scale);
  d.inputs[kBScale] = scale(c.scale_type, b_param, c.b_scale);
  d.inputs[kYScale] = scale(c.scale_type, {}, c.y_scale);
  d.inputs[kAZp] = zero_point(rng, c.a_type, {}, c.a_zp, false);
  d.inputs[kBZp] = zero_point(rng, c.b_type, b_param, c.b_zp, c.per_column_b);
  d.inputs[kYZp] = zero_point(rng, c.y_type, {}, c.y_zp, false);
  const Tensor* in = d.inputs;
  d.expected = ref::qlinear_matmul(in[kA], in[kAScale], in[kAZp], in[kB], in[kBScale], in[kBZp], in[kYScale],
                                   in[kYZp]);
  return d;
}

bool is_initializer(const ModelCase& c, int input) {
  return c.b_initializer && (input == kB || input == kBScale || input == kBZp || input == kYScale || input == kYZp);
}

// A TensorProto of `t` named `name`: in raw_data, or in the typed field ONNX
// assigns to the type (float_data for float32, int32_data for the rest: one
// element per entry, 16-bit floats as their bits, float8 as their codes).
onnx::TensorProto to_proto(const std::string& name, const Tensor& t, Storage storage) {
  if (storage == Storage::Raw) {
    return onnx_fixtures::raw_tensor(name, static_cast<int32_t>(t.type()), t.dims(),
                                     std::string(static_cast<const char*>(t.raw()), t.byte_size()));
  }
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(static_cast<int32_t>(t.type()));
  for (int64_t d : t.dims()) p.add_dims(d);
  for (int64_t i = 0; i < t.size(); ++i) {
    switch (t.type()) {
      case ET::Float32: p.add_float_data(t.data<float>()[i]); break;
      case ET::Float16:
      case ET::BFloat16: p.add_int32_data(t.data<uint16_t>()[i]); break;
      case ET::Int8: p.add_int32_data(t.data<int8_t>()[i]); break;
      default: p.add_int32_data(t.data<uint8_t>()[i]); break;  // uint8 and float8 codes
    }
  }
  return p;
}

// Writes one case as an ONNX backend node test under `root`; returns its dir.
fs::path write_node_test(const fs::path& root, const ModelCase& c, const CaseData& d) {
  const fs::path dir = root / c.name;
  const fs::path data = dir / "test_data_set_0";
  fs::create_directories(data);
  onnx::ModelProto model;
  model.set_ir_version(9);  // float8 types need IR version 9
  model.set_producer_name("qmatmul tests");
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(21);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(c.name);
  onnx::NodeProto* node = g->add_node();
  node->set_op_type("QLinearMatMul");
  node->set_name("qlinearmatmul");
  for (const char* in : kInputNames) node->add_input(in);
  node->add_output("y");
  int graph_input = 0;
  for (int i = 0; i < kInputCount; ++i) {
    const Tensor& t = d.inputs[i];
    if (is_initializer(c, i)) {
      *g->add_initializer() = to_proto(kInputNames[i], t, c.storage);
      continue;
    }
    onnx_fixtures::add_value_info(g->mutable_input(), kInputNames[i], static_cast<int32_t>(t.type()), t.dims());
    onnx_fixtures::save_proto(data / ("input_" + std::to_string(graph_input++) + ".pb"),
                              to_proto(kInputNames[i], t, c.storage));
  }
  onnx_fixtures::add_value_info(g->mutable_output(), "y", static_cast<int32_t>(c.y_type), d.expected.dims());
  onnx_fixtures::save_proto(dir / "model.onnx", model);
  onnx_fixtures::save_proto(data / "output_0.pb", to_proto("y", d.expected, Storage::Raw));
  return dir;
}

// The expected outputs must exercise the rounding, not sit at 0 or saturate.
void expect_varied_output(const Tensor& y, const std::string& name) {
  std::set<uint8_t> codes(y.data<uint8_t>(), y.data<uint8_t>() + y.size());
  EXPECT_GE(codes.size(), std::min<std::size_t>(8, static_cast<std::size_t>(y.size()) / 2)) << name;
  int64_t saturated = 0;
  for (int64_t i = 0; i < y.size(); ++i) {
    const uint8_t v = y.data<uint8_t>()[i];
    if (is_float8(y.type()) ? std::fabs(ref::float8_to_float(v, y.type())) >= 448 : (v == 0 || v == 255)) ++saturated;
  }
  EXPECT_LT(saturated * 4, y.size()) << name << ": too many saturated outputs";
}

struct BuiltTests {
  fs::path root;
  std::vector<fs::path> dirs;
  std::vector<CaseData> data;
  explicit BuiltTests(const std::string& tag) : root(temp_dir(tag)) {
    unsigned seed = 100;
    for (const ModelCase& c : kCases) {
      data.push_back(make_case_data(c, seed++));
      dirs.push_back(write_node_test(root, c, data.back()));
    }
  }
  ~BuiltTests() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

std::vector<Tensor> read_inputs(const fs::path& dir, std::size_t count) {
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < count; ++i) {
    inputs.push_back(read_tensor_pb((dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string()));
  }
  return inputs;
}

std::string bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.raw()), t.byte_size()); }

TEST(Float8Onnx, ModelRunReproducesReference) {
  const BuiltTests built("float8_onnx_model");
  for (std::size_t n = 0; n < built.dirs.size(); ++n) {
    const ModelCase& c = kCases[n];
    SCOPED_TRACE(c.name);
    const Tensor& expected = built.data[n].expected;
    expect_varied_output(expected, c.name);
    for (int threads : {1, 2}) {
      Options options;
      options.threads = threads;
      options.min_macs_per_thread = 0;  // every thread, however small the model
      const Model model = Model::load((built.dirs[n] / "model.onnx").string(), options);
      EXPECT_EQ(model.opset(), 21);
      std::vector<std::string> want_inputs;
      for (int i = 0; i < kInputCount; ++i) {
        if (!is_initializer(c, i)) want_inputs.push_back(kInputNames[i]);
      }
      EXPECT_EQ(model.input_names(), want_inputs);
      ASSERT_EQ(model.output_names(), std::vector<std::string>{"y"});
      const std::vector<Tensor> inputs = read_inputs(built.dirs[n], want_inputs.size());
      std::vector<Tensor> got;
      ASSERT_NO_THROW(got = model.run(inputs));
      ASSERT_EQ(got.size(), 1u);
      const Tensor file = read_tensor_pb((built.dirs[n] / "test_data_set_0" / "output_0.pb").string());
      EXPECT_EQ(onnx_io::compare_tensors(got[0], file), "") << "threads " << threads;
      EXPECT_EQ(got[0].type(), c.y_type);
      EXPECT_EQ(bytes(got[0]), bytes(expected)) << "threads " << threads;  // NaN-free: bytes are exact
    }
  }
}

// Float8 and float16 tensors in int32_data (one code per entry) and float32
// ones in float_data, as initializers inside the model and as input files.
TEST(Float8Onnx, Int32DataTensorsDecode) {
  const BuiltTests built("float8_onnx_int32");
  std::size_t typed_cases = 0;
  for (std::size_t n = 0; n < built.dirs.size(); ++n) {
    const ModelCase& c = kCases[n];
    if (c.storage != Storage::Typed) continue;
    ++typed_cases;
    SCOPED_TRACE(c.name);
    onnx::ModelProto model;
    ASSERT_TRUE(model.ParseFromString(onnx_fixtures::load_bytes(built.dirs[n] / "model.onnx")));
    bool float8_initializer = false;
    for (const onnx::TensorProto& init : model.graph().initializer()) {
      EXPECT_FALSE(init.has_raw_data()) << init.name();
      if (is_float8(static_cast<ET>(init.data_type()))) {
        float8_initializer = true;
        EXPECT_EQ(init.int32_data_size(), element_count(Shape(init.dims().begin(), init.dims().end())));
      }
    }
    EXPECT_TRUE(float8_initializer);
    int graph_input = 0;
    for (int i = 0; i < kInputCount; ++i) {
      if (is_initializer(c, i)) continue;
      const fs::path pb = built.dirs[n] / "test_data_set_0" / ("input_" + std::to_string(graph_input++) + ".pb");
      onnx::TensorProto proto;
      ASSERT_TRUE(proto.ParseFromString(onnx_fixtures::load_bytes(pb)));
      EXPECT_FALSE(proto.has_raw_data());
      const Tensor t = read_tensor_pb(pb.string());
      EXPECT_EQ(t.type(), built.data[n].inputs[i].type()) << kInputNames[i];
      EXPECT_EQ(bytes(t), bytes(built.data[n].inputs[i])) << kInputNames[i];
    }
    const Model m = Model::load((built.dirs[n] / "model.onnx").string());
    const std::vector<Tensor> got = m.run(read_inputs(built.dirs[n], m.input_names().size()));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(bytes(got[0]), bytes(built.data[n].expected));
  }
  EXPECT_GT(typed_cases, 0u);
}

// Arbitrary finite codes (large values, subnormals): float32 sums are no
// longer exact, so the library may differ from the float64 reference by one
// float8 step (SEMANTICS.md §5); checked through the model API only, since
// `onnx-test` compares exactly.
TEST(Float8Onnx, RandomCodesWithinOneStep) {
  const fs::path root = temp_dir("float8_onnx_random");
  const ModelCase c{"test_qlinearmatmul_float8_random", ET::Float8E4M3FN, ET::Float8E5M2, ET::Float8E4M3FN,
                    ET::Float32, {9, 300}, {300, 20}, true, Storage::Raw, 0, 0, 0, false, 1, 1, 1};
  std::mt19937 rng(7);
  CaseData d;
  d.inputs[kA] = random_operand(rng, c.a_type, c.a_dims, false);
  d.inputs[kB] = random_operand(rng, c.b_type, c.b_dims, false);
  d.inputs[kAScale] = scale(ET::Float32, {}, 0.01);
  d.inputs[kBScale] = scale(ET::Float32, {}, 0.01);
  d.inputs[kYScale] = scale(ET::Float32, {}, 20.0);
  d.inputs[kAZp] = Tensor(c.a_type, {});
  d.inputs[kBZp] = Tensor(c.b_type, {});
  d.inputs[kYZp] = Tensor(c.y_type, {});
  const Tensor* in = d.inputs;
  d.expected = ref::qlinear_matmul(in[kA], in[kAScale], in[kAZp], in[kB], in[kBScale], in[kBZp], in[kYScale],
                                   in[kYZp]);
  expect_varied_output(d.expected, c.name);
  const fs::path dir = write_node_test(root, c, d);
  const Model model = Model::load((dir / "model.onnx").string());
  const std::vector<Tensor> got = model.run(read_inputs(dir, model.input_names().size()));
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].dims(), d.expected.dims());
  const auto line = [](uint8_t code) { return (code & 0x80) ? -(code & 0x7F) : (code & 0x7F); };
  for (int64_t i = 0; i < got[0].size(); ++i) {
    EXPECT_LE(std::abs(line(got[0].data<uint8_t>()[i]) - line(d.expected.data<uint8_t>()[i])), 1) << "element " << i;
  }
  fs::remove_all(root);
}

// ---- the qmatmul program ----

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Runs `qmatmul ARGS...` (QMATMUL_CLI_PATH) with stdout and stderr captured in `scratch`.
CliResult run_cli(const fs::path& scratch, const std::vector<std::string>& args) {
  static int counter = 0;
  const fs::path out = scratch / ("cli_out" + std::to_string(counter) + ".txt");
  const fs::path err = scratch / ("cli_err" + std::to_string(counter++) + ".txt");
  std::string command = quote(QMATMUL_CLI_PATH);
  for (const std::string& a : args) command.append(" ").append(quote(a));
  command.append(" >").append(quote(out.string())).append(" 2>").append(quote(err.string())).append(" </dev/null");
  const int status = std::system(command.c_str());
  CliResult r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = onnx_fixtures::load_bytes(out);
  r.err = onnx_fixtures::load_bytes(err);
  return r;
}

#define REQUIRE_CLI()                                                                        \
  do {                                                                                       \
    if (!fs::exists(QMATMUL_CLI_PATH)) GTEST_SKIP() << "qmatmul program not built; skipping"; \
  } while (0)

TEST(Float8Onnx, OnnxTestCommandPasses) {
  REQUIRE_CLI();
  const BuiltTests built("float8_onnx_cli");
  const fs::path scratch = temp_dir("float8_onnx_cli_capture");
  const std::string total = std::to_string(std::size(kCases)) + " passed, 0 failed\n";
  for (const char* threads : {"1", "2"}) {
    const CliResult r = run_cli(scratch, {"onnx-test", built.root.string(), "--threads", threads});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    for (const ModelCase& c : kCases) EXPECT_NE(r.out.find("PASS " + c.name + "\n"), std::string::npos) << r.out;
    ASSERT_GE(r.out.size(), total.size());
    EXPECT_EQ(r.out.substr(r.out.size() - total.size()), total) << r.out;
  }
  // A single test directory, and a corrupted expected output (one code one
  // step off) that must fail.
  const CliResult single = run_cli(scratch, {"onnx-test", built.dirs[0].string()});
  EXPECT_EQ(single.exit_code, 0) << single.out << single.err;
  EXPECT_EQ(single.out, "PASS " + kCases[0].name + "\n1 passed, 0 failed\n");
  Tensor wrong = built.data[1].expected;
  wrong.data<uint8_t>()[2] ^= 1;
  onnx_fixtures::save_proto(built.dirs[1] / "test_data_set_0" / "output_0.pb", to_proto("y", wrong, Storage::Raw));
  const CliResult bad = run_cli(scratch, {"onnx-test", built.dirs[1].string()});
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("FAIL " + kCases[1].name + ": test_data_set_0: output 0 'y': element 2"), std::string::npos)
      << bad.out;
  fs::remove_all(scratch);
}

TEST(Float8Onnx, RunCommandWritesExpectedOutput) {
  REQUIRE_CLI();
  const BuiltTests built("float8_onnx_run");
  const fs::path scratch = temp_dir("float8_onnx_run_capture");
  for (std::size_t n = 0; n < built.dirs.size(); ++n) {
    SCOPED_TRACE(kCases[n].name);
    const fs::path out = scratch / ("out" + std::to_string(n));
    std::vector<std::string> args = {"run", (built.dirs[n] / "model.onnx").string(), "-o", out.string(),
                                     "--threads", "2"};
    const fs::path data = built.dirs[n] / "test_data_set_0";
    for (int i = 0; fs::exists(data / ("input_" + std::to_string(i) + ".pb")); ++i) {
      args.push_back("-i");
      args.push_back((data / ("input_" + std::to_string(i) + ".pb")).string());
    }
    const CliResult r = run_cli(scratch, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    onnx::TensorProto proto;
    ASSERT_TRUE(proto.ParseFromString(onnx_fixtures::load_bytes(out / "output_0.pb")));
    EXPECT_EQ(proto.name(), "y");
    EXPECT_EQ(proto.data_type(), static_cast<int32_t>(kCases[n].y_type));
    const Tensor got = read_tensor_pb((out / "output_0.pb").string());
    EXPECT_EQ(onnx_io::compare_tensors(got, built.data[n].expected), "");
    EXPECT_EQ(bytes(got), bytes(built.data[n].expected));
  }
  fs::remove_all(scratch);
}

}  // namespace
}  // namespace qmatmul::testing
