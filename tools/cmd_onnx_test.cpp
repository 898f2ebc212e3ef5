// `qmatmul onnx-test DIR... [--threads N]`: runs ONNX backend node tests.
// Each DIR is a test directory (model.onnx plus test_data_set_*/ holding
// input_<i>.pb and output_<i>.pb) or a folder of such directories (searched
// one level deep, in name order). Every data set runs through qmatmul::Model
// and each output must match exactly: same type, same shape, byte-equal
// elements except that NaN equals NaN in float types. Prints one
// `PASS name` or `FAIL name: reason` line per test and a last line
// `N passed, M failed`; exits 1 when a test failed or none was found.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "onnx/tensor_compare.h"
#include "qmatmul/onnx.h"

namespace qmatmul::cli {
namespace {

namespace fs = std::filesystem;

struct OnnxTestArgs {
  std::vector<std::string> dirs;
  ThreadArgs thread_args;
};

// One test to run, or a path that could not be turned into one.
struct TestCase {
  std::string name;
  fs::path dir;
  std::string setup_error;  // non-empty: report as FAIL without running
};

std::string display_name(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().empty() ? dir.string() : p.filename().string();
}

bool is_test_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "model.onnx", ec);
}

// The test directories named on the command line, each folder expanded one
// level in name order.
std::vector<TestCase> collect_tests(const std::vector<std::string>& args) {
  std::vector<TestCase> tests;
  for (const std::string& arg : args) {
    const fs::path dir(arg);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      tests.push_back({display_name(dir), dir, "'" + arg + "' is not a directory"});
      continue;
    }
    if (is_test_dir(dir)) {
      tests.push_back({display_name(dir), dir, ""});
      continue;
    }
    std::vector<fs::path> children;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_directory() && is_test_dir(entry.path())) children.push_back(entry.path());
    }
    if (children.empty()) {
      tests.push_back({display_name(dir), dir,
                       "'" + arg + "' holds no model.onnx and no test directories"});
      continue;
    }
    std::sort(children.begin(), children.end());
    for (const fs::path& child : children) tests.push_back({display_name(child), child, ""});
  }
  return tests;
}

// Files or directories of `dir` named <prefix><number><suffix>, sorted by
// number; the numbers must run 0, 1, 2, ... without gaps.
std::vector<fs::path> numbered_entries(const fs::path& dir, const std::string& prefix,
                                       const std::string& suffix) {
  std::vector<std::pair<long, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size() - suffix.size();
    long number = 0;
    const auto [end, err] = std::from_chars(first, last, number);
    if (err != std::errc() || end != last) continue;
    found.emplace_back(number, entry.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i].first != static_cast<long>(i)) {
      throw Error(dir.string() + ": " + prefix + std::to_string(i) + suffix +
                  " is missing (files must be numbered from 0 without gaps)");
    }
    paths.push_back(found[i].second);
  }
  return paths;
}

// Runs one data set; empty when every output matches, else the reason.
std::string run_data_set(const Model& model, const fs::path& data_dir) {
  const std::string set = data_dir.filename().string();
  std::vector<Tensor> inputs;
  for (const fs::path& p : numbered_entries(data_dir, "input_", ".pb")) {
    inputs.push_back(read_tensor_pb(p.string()));
  }
  std::vector<Tensor> expected;
  for (const fs::path& p : numbered_entries(data_dir, "output_", ".pb")) {
    expected.push_back(read_tensor_pb(p.string()));
  }
  if (inputs.size() != model.input_names().size()) {
    return set + ": holds " + std::to_string(inputs.size()) + " input files but the model has " +
           std::to_string(model.input_names().size()) + " inputs";
  }
  const std::vector<Tensor> got = model.run(inputs);
  if (got.size() != expected.size()) {
    return set + ": the model produced " + std::to_string(got.size()) + " outputs but " +
           std::to_string(expected.size()) + " output files are expected";
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::string diff = onnx_io::compare_tensors(got[i], expected[i]);
    if (!diff.empty()) {
      return set + ": output " + std::to_string(i) + " '" + model.output_names()[i] + "': " + diff;
    }
  }
  return "";
}

// Runs every data set of one test; empty on success, else the first failure.
std::string run_test(const fs::path& dir, const ThreadArgs& thread_args) {
  try {
    Options options;
    thread_args.apply(options);
    const Model model = Model::load((dir / "model.onnx").string(), options);
    const std::vector<fs::path> sets = numbered_entries(dir, "test_data_set_", "");
    if (sets.empty()) return "no test_data_set_* directories in '" + dir.string() + "'";
    for (const fs::path& set : sets) {
      const std::string failure = run_data_set(model, set);
      if (!failure.empty()) return failure;
    }
    return "";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return what.empty() ? "unknown error" : what;
  }
}

void run_all(const OnnxTestArgs& args) {
  const std::vector<TestCase> tests = collect_tests(args.dirs);
  int passed = 0, failed = 0;
  for (const TestCase& test : tests) {
    const std::string failure =
        test.setup_error.empty() ? run_test(test.dir, args.thread_args) : test.setup_error;
    if (failure.empty()) {
      ++passed;
      std::cout << "PASS " << test.name << "\n";
    } else {
      ++failed;
      std::cout << "FAIL " << test.name << ": " << failure << "\n";
    }
    std::cout.flush();
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  std::cout.flush();
  if (failed > 0 || passed == 0) throw CLI::RuntimeError(1);
}

}  // namespace

void add_onnx_test_command(CLI::App& app) {
  auto args = std::make_shared<OnnxTestArgs>();
  CLI::App* cmd = app.add_subcommand(
      "onnx-test",
      "Run ONNX backend node tests (directories with model.onnx and test_data_set_*/, or "
      "folders of them) and compare every output exactly");
  cmd->add_option("dirs", args->dirs, "Test directories, or folders holding test directories")
      ->required();
  add_thread_options(cmd, args->thread_args);
  cmd->callback([args] { run_all(*args); });
}

}  // namespace qmatmul::cli
