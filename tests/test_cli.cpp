// Tests of the `qmatmul run` and `qmatmul onnx-test` subcommands, driving the
// built program (QMATMUL_CLI_PATH) through the shell with stdout and stderr
// captured: outputs written by `run` match the node tests' expected tensors,
// `onnx-test` passes the shared node tests and reports mismatches and shape
// errors as FAIL lines, and every bad input (truncated or garbage model, a
// Relu node, opset 9, malformed .pb files, missing or extra -i files, missing
// files) ends with exit code 1 and one stderr line naming the problem, never
// a crash. Models and tensors are built in a temporary directory with the
// fixture helpers of test_onnx_io.cpp. Also checks the comparison rules of
// onnx-test (exact bytes, NaN equals NaN) directly.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>
#include <vector>

#include "onnx/tensor_compare.h"
#include "onnx/tensor_proto.h"
#include "onnx_fixtures.h"
#include "qmatmul/onnx.h"

namespace fs = std::filesystem;
using qmatmul::ElementType;

// qlinear_scale_model of onnx_fixtures.h is defined here.
namespace onnx_fixtures {

// One QLinearMatMul y = a*b / 10 on 1x1 tensors, with a = b = 5: the exact
// value 2.5000000373 (m = f32(0.1)) rounds to 3, while ONNX Runtime's float32
// product rounds to 2.5 and then to 2. `opset` picks QLinearMatMul-10 or -21.
onnx::ModelProto qlinear_scale_model(int64_t opset, int32_t scale_type) {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  const float f32[] = {1.0f, 10.0f};
  const uint16_t f16[] = {0x3c00, 0x4900};
  for (int i = 0; i < 2; ++i) {
    const std::string bytes = scale_type == 1
                                  ? std::string(reinterpret_cast<const char*>(&f32[i]), 4)
                                  : std::string(reinterpret_cast<const char*>(&f16[i]), 2);
    *g->add_initializer() = raw_tensor(i == 0 ? "one" : "ten", scale_type, {}, bytes);
  }
  *g->add_initializer() = raw_tensor("zero", 2, {}, std::string(1, '\0'));
  *g->add_initializer() = raw_tensor("five", 2, {1, 1}, "\5");
  onnx::NodeProto* q = g->add_node();
  q->set_op_type("QLinearMatMul");
  q->set_name("q");
  for (const char* in : {"a", "one", "zero", "five", "one", "zero", "ten", "zero"}) {
    q->add_input(in);
  }
  q->add_output("y");
  add_value_info(g->mutable_input(), "a", 2, {1, 1});
  add_value_info(g->mutable_output(), "y", 2, {1, 1});
  return m;
}

}  // namespace onnx_fixtures

namespace {

using namespace onnx_fixtures;

#define REQUIRE_CLI()                                                         \
  do {                                                                        \
    if (cli_path().empty() || !fs::exists(cli_path()))                        \
      GTEST_SKIP() << "qmatmul program not built (QMATMUL_CLI_PATH); skipping"; \
  } while (0)

#define REQUIRE_NODE_TESTS(dir)                                                        \
  const std::string dir = node_tests_dir();                                            \
  if (dir.empty()) GTEST_SKIP() << "shared ONNX node tests not found (QMATMUL_SHARED_DIR" \
                                   "/onnx-node-tests); skipping"

std::string cli_path() {
#ifdef QMATMUL_CLI_PATH
  return QMATMUL_CLI_PATH;
#else
  return "";
#endif
}

struct CliResult {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `qmatmul ARGS...` with stdout and stderr captured in files.
CliResult run_cli(const std::vector<std::string>& args) {
  struct CaptureDir {  // removed when the test program exits
    fs::path path = temp_dir("cli_capture");
    ~CaptureDir() { fs::remove_all(path); }
  };
  static const CaptureDir capture;
  const fs::path& dir = capture.path;
  static int counter = 0;
  const fs::path out = dir / ("out" + std::to_string(counter) + ".txt");
  const fs::path err = dir / ("err" + std::to_string(counter++) + ".txt");
  std::string command = quote(cli_path());
  for (const std::string& a : args) command.append(" ").append(quote(a));
  command.append(" >").append(quote(out.string()));
  command.append(" 2>").append(quote(err.string())).append(" </dev/null");
  const int status = std::system(command.c_str());
  CliResult result;
  if (status != -1 && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = load_bytes(out);
  result.err = load_bytes(err);
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto pos = t.rfind('\n');
  return pos == std::string::npos ? t : t.substr(pos + 1);
}

// Exit code 1, nothing on stdout, and exactly one "qmatmul: ..." stderr line
// containing `phrase`.
void expect_clean_failure(const CliResult& r, const std::string& phrase) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("qmatmul: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(contains(r.err, phrase)) << "expected '" << phrase << "' in: " << r.err;
}

// A folder holding mm.onnx (Y = MatMulInteger(A uint8 [2,K], B int8 [K,2]))
// with a.pb, b.pb as good inputs.
fs::path matmul_fixture(const std::string& tag) {
  const fs::path dir = temp_dir(tag);
  save_proto(dir / "mm.onnx", matmul_integer_model(10));
  save_proto(dir / "a.pb", raw_tensor("A", 2, {2, 3}, "\1\2\3\4\5\6"));
  save_proto(dir / "b.pb", raw_tensor("B", 3, {3, 2}, "\1\xff\2\xfe\3\xfd"));
  return dir;
}

TEST(Cli, HelpForEachCommand) {
  REQUIRE_CLI();
  const CliResult run = run_cli({"run", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(contains(run.out, "--threads") && contains(run.out, "--ort-compat") &&
              contains(run.out, "--min-macs-per-thread") && contains(run.out, "-o")) << run.out;
  const CliResult test = run_cli({"onnx-test", "--help"});
  EXPECT_EQ(test.exit_code, 0);
  EXPECT_TRUE(contains(test.out, "test_data_set") && contains(test.out, "--min-macs-per-thread")) << test.out;
}

// `qmatmul info` names the chosen path, and how a call picks its threads
// (the default of Options::min_macs_per_thread).
TEST(Cli, InfoShowsChoiceAndThreads) {
  REQUIRE_CLI();
  const CliResult r = run_cli({"info"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "chosen: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "batched A over one B")) << r.out;
  EXPECT_TRUE(contains(r.out, "threads: ") && contains(r.out, "Options::min_macs_per_thread") &&
              contains(r.out, std::to_string(qmatmul::Options{}.min_macs_per_thread)))
      << r.out;
}

TEST(Cli, RunWritesNamedOutputs) {
  REQUIRE_CLI();
  const fs::path dir = matmul_fixture("cli_run");
  const fs::path outdir = dir / "nested" / "out";  // created by run
  const CliResult r = run_cli({"run", (dir / "mm.onnx").string(), "-i", (dir / "a.pb").string(),
                               "-i", (dir / "b.pb").string(), "-o", outdir.string(),
                               "--threads", "2", "--min-macs-per-thread", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  onnx::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(load_bytes(outdir / "output_0.pb")));
  EXPECT_EQ(proto.name(), "Y");
  const qmatmul::Tensor y = qmatmul::onnx_io::tensor_from_proto(proto);
  ASSERT_EQ(y.dims(), (qmatmul::Shape{2, 2}));
  // [[1,2,3],[4,5,6]] @ [[1,-1],[2,-2],[3,-3]]
  const int32_t expected[] = {14, -14, 32, -32};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<int32_t>()[i], expected[i]);
  fs::remove_all(dir);
}

TEST(Cli, RunMatchesNodeTestOutputs) {
  REQUIRE_CLI();
  REQUIRE_NODE_TESTS(root);
  const fs::path out = temp_dir("cli_nodetest");
  for (const char* name : {"test_matmulinteger", "test_qlinearmatmul_3D_int8_float16"}) {
    SCOPED_TRACE(name);
    const fs::path test = fs::path(root) / name;
    const fs::path data = test / "test_data_set_0";
    std::vector<std::string> args = {"run", (test / "model.onnx").string(), "-o", out.string()};
    for (int i = 0; fs::exists(data / ("input_" + std::to_string(i) + ".pb")); ++i) {
      args.push_back("-i");
      args.push_back((data / ("input_" + std::to_string(i) + ".pb")).string());
    }
    const CliResult r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const qmatmul::Tensor got = qmatmul::read_tensor_pb((out / "output_0.pb").string());
    const qmatmul::Tensor want = qmatmul::read_tensor_pb((data / "output_0.pb").string());
    EXPECT_EQ(qmatmul::onnx_io::compare_tensors(got, want), "");
  }
  fs::remove_all(out);
}

TEST(Cli, RunOrtCompatChangesRequantization) {
  REQUIRE_CLI();
  const fs::path dir = temp_dir("cli_ort");
  save_proto(dir / "q.onnx", qlinear_scale_model(21, 1));
  save_proto(dir / "a.pb", raw_tensor("a", 2, {1, 1}, "\5"));
  for (const bool ort : {false, true}) {
    std::vector<std::string> args = {"run", (dir / "q.onnx").string(), "-i",
                                     (dir / "a.pb").string(), "-o", dir.string()};
    if (ort) args.push_back("--ort-compat");
    const CliResult r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const qmatmul::Tensor y = qmatmul::read_tensor_pb((dir / "output_0.pb").string());
    EXPECT_EQ(y.data<uint8_t>()[0], ort ? 2 : 3);
  }
  fs::remove_all(dir);
}

TEST(Cli, OnnxTestPassesSharedNodeTests) {
  REQUIRE_CLI();
  REQUIRE_NODE_TESTS(root);
  // --min-macs-per-thread 0: every thread, however small the node tests.
  for (const char* threads : {"0", "1", "3"}) {
    const CliResult r = run_cli({"onnx-test", root, "--threads", threads, "--min-macs-per-thread", "0"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(last_line(r.out), "11 passed, 0 failed") << r.out;
    EXPECT_TRUE(contains(r.out, "PASS test_matmulinteger\n")) << r.out;
  }
}

TEST(Cli, OnnxTestReportsFailures) {
  REQUIRE_CLI();
  // Three tests of the same model: one right, one wrong value, one wrong shape.
  const fs::path root = temp_dir("cli_onnxtest");
  const std::string good_y("\x0e\0\0\0\xf2\xff\xff\xff\x20\0\0\0\xe0\xff\xff\xff", 16);
  std::string bad_y = good_y;
  bad_y[8] = 0x21;
  const struct {
    const char* name;
    onnx::TensorProto y;
  } tests[] = {{"test_a_good", raw_tensor("Y", 6, {2, 2}, good_y)},
               {"test_b_value", raw_tensor("Y", 6, {2, 2}, bad_y)},
               {"test_c_shape", raw_tensor("Y", 6, {4}, good_y)}};
  for (const auto& t : tests) {
    const fs::path data = root / t.name / "test_data_set_0";
    fs::create_directories(data);
    save_proto(root / t.name / "model.onnx", matmul_integer_model(10));
    save_proto(data / "input_0.pb", raw_tensor("A", 2, {2, 3}, "\1\2\3\4\5\6"));
    save_proto(data / "input_1.pb", raw_tensor("B", 3, {3, 2}, "\1\xff\2\xfe\3\xfd"));
    save_proto(data / "output_0.pb", t.y);
  }
  const CliResult r = run_cli({"onnx-test", root.string(), (root / "missing").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "PASS test_a_good\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL test_b_value: test_data_set_0: output 0 'Y': element 2 "
                              "[1,0]: got 32, expected 33")) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL test_c_shape: test_data_set_0: output 0 'Y': shape is "
                              "[2,2], expected [4]")) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL missing: ")) << r.out;
  EXPECT_EQ(last_line(r.out), "1 passed, 3 failed") << r.out;
  const CliResult single = run_cli({"onnx-test", (root / "test_a_good").string()});
  EXPECT_EQ(single.exit_code, 0);
  EXPECT_EQ(single.out, "PASS test_a_good\n1 passed, 0 failed\n");
  fs::remove_all(root);
}

// The comparison `onnx-test` applies: exact bytes, any NaN equals any NaN.
TEST(Cli, OnnxTestComparisonRules) {
  using qmatmul::onnx_io::compare_tensors;
  auto view = [](ElementType type, const void* data, int64_t n) {
    return qmatmul::TensorView{type, {n}, data};
  };
  const uint8_t e4m3_nans[] = {0x7f, 0xff}, e4m3_nans2[] = {0xff, 0x7f};
  EXPECT_EQ(compare_tensors(view(ElementType::Float8E4M3FN, e4m3_nans, 2),
                            view(ElementType::Float8E4M3FN, e4m3_nans2, 2)), "");
  const uint16_t half_nans[] = {0x7e00, 0xfc01}, half_nans2[] = {0x7c01, 0x7fff};
  EXPECT_EQ(compare_tensors(view(ElementType::Float16, half_nans, 2),
                            view(ElementType::Float16, half_nans2, 2)), "");
  const float zero = 0.0f, neg_zero = -0.0f;
  EXPECT_NE(compare_tensors(view(ElementType::Float32, &zero, 1),
                            view(ElementType::Float32, &neg_zero, 1)), "");
  const uint8_t e5m2_inf = 0x7c, e5m2_nan = 0x7d;
  const std::string diff = compare_tensors(view(ElementType::Float8E5M2, &e5m2_inf, 1),
                                           view(ElementType::Float8E5M2, &e5m2_nan, 1));
  EXPECT_TRUE(contains(diff, "got inf (0x7c), expected nan (0x7d)")) << diff;
  const uint8_t fnuz[] = {0x80, 0x7f};  // fnuz: 0x80 is NaN, 0x7f is 240 in e4m3fnuz
  EXPECT_NE(compare_tensors(view(ElementType::Float8E4M3FNUZ, fnuz, 1),
                            view(ElementType::Float8E4M3FNUZ, fnuz + 1, 1)), "");
  EXPECT_TRUE(contains(qmatmul::onnx_io::format_element(
                           view(ElementType::Float8E4M3FNUZ, fnuz, 2), 1), "240"));
  const int32_t a[] = {1, 2, 3, 4}, b[] = {1, 2, 5, 4};
  const std::string d2 = compare_tensors({ElementType::Int32, {2, 2}, a},
                                         {ElementType::Int32, {2, 2}, b});
  EXPECT_EQ(d2, "element 2 [1,0]: got 3, expected 5 (1 of 4 elements differ)");
  EXPECT_TRUE(contains(compare_tensors({ElementType::Int32, {4}, a},
                                       {ElementType::Int32, {2, 2}, a}),
                       "shape is [4], expected [2,2]"));
}

TEST(Cli, BadInputsFailCleanly) {
  REQUIRE_CLI();
  const fs::path dir = matmul_fixture("cli_bad");
  const std::string a = (dir / "a.pb").string(), b = (dir / "b.pb").string();
  const std::string out = (dir / "out").string();
  auto run_model = [&](const std::string& model_bytes, const std::string& phrase) {
    save_bytes(dir / "model.onnx", model_bytes);
    SCOPED_TRACE(phrase);
    expect_clean_failure(
        run_cli({"run", (dir / "model.onnx").string(), "-i", a, "-i", b, "-o", out}), phrase);
  };
  const std::string good = matmul_integer_model(10).SerializeAsString();
  run_model(good.substr(0, 20), "truncated or malformed");
  run_model(std::string(40, '\xff'), "truncated or malformed");
  onnx::ModelProto relu = matmul_integer_model(10);
  onnx::NodeProto* node = relu.mutable_graph()->add_node();
  node->set_op_type("Relu");
  node->add_input("Y");
  node->add_output("Z");
  run_model(relu.SerializeAsString(), "operator 'Relu' is not supported");
  run_model(matmul_integer_model(9).SerializeAsString(), "opset 9");

  auto run_input = [&](const onnx::TensorProto& bad_b, const std::string& phrase) {
    save_proto(dir / "bad.pb", bad_b);
    SCOPED_TRACE(phrase);
    expect_clean_failure(run_cli({"run", (dir / "mm.onnx").string(), "-i", a, "-i",
                                  (dir / "bad.pb").string(), "-o", out}),
                         phrase);
  };
  run_input(raw_tensor("B", 3, {3, 2}, "\1\2\3"), "raw_data holds 3 bytes");
  run_input(raw_tensor("B", 3, {3, -2}, ""), "negative");
  run_input(raw_tensor("B", 99, {3, 2}, "123456"), "data_type 99 is unknown");
  run_input(raw_tensor("B", 2, {3, 2}, "123456"), "declares int8");
  run_input(raw_tensor("B", 3, {4, 2}, "12345678"), "MatMulInteger");  // K mismatch

  const std::string model = (dir / "mm.onnx").string();
  expect_clean_failure(run_cli({"run", model, "-i", a, "-o", out}),
                       "the model has 2 inputs (A, B) but 1 -i files were given");
  expect_clean_failure(run_cli({"run", model, "-i", a, "-i", b, "-i", b, "-o", out}),
                       "but 3 -i files were given");
  expect_clean_failure(run_cli({"run", (dir / "none.onnx").string(), "-o", out}),
                       "no such file");
  expect_clean_failure(run_cli({"run", model, "-i", a, "-i", (dir / "none.pb").string(),
                                "-o", out}),
                       "none.pb");
  expect_clean_failure(run_cli({"run", model, "-i", a, "-i", b}), "outdir");
  expect_clean_failure(run_cli({"run", model, "-i", a, "-i", b, "-o", out, "--threads", "-1"}),
                       "threads");
  save_bytes(dir / "file", "x");
  expect_clean_failure(run_cli({"run", model, "-i", a, "-i", b, "-o", (dir / "file").string()}),
                       "cannot create output directory");
  EXPECT_FALSE(fs::exists(out));  // nothing written by failed runs
  fs::remove_all(dir);
}

TEST(Cli, TruncatedNodeTestModelFailsCleanly) {
  REQUIRE_CLI();
  REQUIRE_NODE_TESTS(root);
  const fs::path dir = temp_dir("cli_truncated");
  const fs::path test = fs::path(root) / "test_matmulinteger";
  save_bytes(dir / "cut.onnx", load_bytes(test / "model.onnx").substr(0, 20));
  std::vector<std::string> args = {"run", (dir / "cut.onnx").string(), "-o",
                                   (dir / "out").string()};
  for (int i = 0; i < 4; ++i) {
    args.push_back("-i");
    args.push_back((test / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string());
  }
  expect_clean_failure(run_cli(args), "truncated or malformed");
  fs::remove_all(dir);
}

}  // namespace
