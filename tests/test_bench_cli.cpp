// Tests of `qmatmul bench`, driving the built program (QMATMUL_CLI_PATH) on
// tiny problems with stdout and stderr captured: --json prints one flat JSON
// object per measurement with the documented keys and a positive GOPS (read
// with the small parser below; speed itself is not checked), shapes come from
// an inline MxKxN list or a file whose [section] headers pick the ops, a
// batched BxMxKxN shape counts every batch and passes the exactness check
// against oneDNN's 3-D matmul and packed 3-D B, the
// float8 op (qlinear_f8e4m3) gives rows with its oneDNN float32 baseline, a
// null %peak and packed rows only when PackedB::pack accepts float8, the
// default shapes (checked with --list, without timing) give it the three
// float8 acceptance shapes, --ops / --packed / --no-onednn select rows, the
// default output is a table naming the kernel, and bad options end with exit
// code 1 and a message naming the option. Each run takes well under a second
// (--min-time 0.01).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cpu/cpu_features.h"
#include "kernels/x86/x86_kernels_extra.h"

namespace {

namespace fs = std::filesystem;

struct BenchRun {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A per-process scratch directory, removed when the test program exits.
const fs::path& scratch_dir() {
  struct Scratch {
    fs::path path = fs::temp_directory_path() / ("qmatmul_bench_cli_" + std::to_string(::getpid()));
    Scratch() { fs::create_directories(path); }
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Scratch scratch;
  return scratch.path;
}

BenchRun run_bench(const std::vector<std::string>& args) {
  static int counter = 0;
  const fs::path out = scratch_dir() / ("out" + std::to_string(counter) + ".txt");
  const fs::path err = scratch_dir() / ("err" + std::to_string(counter++) + ".txt");
  std::string command = shell_quote(QMATMUL_CLI_PATH);
  command.append(" bench");
  for (const std::string& a : args) command.append(" ").append(shell_quote(a));
  command.append(" >").append(shell_quote(out.string()));
  command.append(" 2>").append(shell_quote(err.string())).append(" </dev/null");
  const int status = std::system(command.c_str());
  BenchRun r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// A flat JSON object's values: strings, numbers, true/false/null.
struct JsonValue {
  enum Kind { String, Number, Bool, Null } kind = Null;
  std::string text;
  double number = 0;
  bool boolean = false;
};
using JsonObject = std::map<std::string, JsonValue>;

class FlatJsonParser {
 public:
  explicit FlatJsonParser(const std::string& s) : s_(s) {}

  std::optional<JsonObject> parse() {
    JsonObject obj;
    if (!eat('{')) return std::nullopt;
    if (!eat('}')) {
      do {
        std::string key;
        JsonValue value;
        if (!string(key) || !eat(':') || !parse_value(value)) return std::nullopt;
        if (!obj.emplace(key, value).second) return std::nullopt;  // duplicate key
      } while (eat(','));
      if (!eat('}')) return std::nullopt;
    }
    skip_ws();
    if (i_ != s_.size()) return std::nullopt;
    return obj;
  }

 private:
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    skip_ws();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool word(const char* w) {
    skip_ws();
    const std::string t(w);
    if (s_.compare(i_, t.size(), t) != 0) return false;
    i_ += t.size();
    return true;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    for (; i_ < s_.size(); ++i_) {
      if (s_[i_] == '"') return ++i_, true;
      if (s_[i_] == '\\' && ++i_ >= s_.size()) return false;
      out += s_[i_];
    }
    return false;
  }
  bool parse_value(JsonValue& v) {
    skip_ws();
    if (i_ >= s_.size()) return false;
    if (s_[i_] == '"') return v.kind = JsonValue::String, string(v.text);
    if (word("true")) return v.kind = JsonValue::Bool, v.boolean = true, true;
    if (word("false")) return v.kind = JsonValue::Bool, v.boolean = false, true;
    if (word("null")) return v.kind = JsonValue::Null, true;
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    v.number = std::strtod(begin, &end);
    if (end == begin) return false;
    i_ += static_cast<std::size_t>(end - begin);
    v.kind = JsonValue::Number;
    return true;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

std::vector<JsonObject> parse_rows(const std::string& out) {
  std::vector<JsonObject> rows;
  for (const std::string& line : lines_of(out)) {
    auto obj = FlatJsonParser(line).parse();
    EXPECT_TRUE(obj.has_value()) << "not a flat JSON object: " << line;
    if (obj) rows.push_back(*obj);
  }
  return rows;
}

bool has(const JsonObject& o, const std::string& key, JsonValue::Kind kind) {
  const auto it = o.find(key);
  return it != o.end() && it->second.kind == kind;
}

// True when qmatmul bench can measure the int8 peak (its default for %peak):
// the AVX-512 VNNI loop, or else the AVX2 ones, compiled in and run by the CPU.
bool peak_measurable() {
  const auto& cpu = qmatmul::cpu::features();
  return (cpu.avx512vnni && qmatmul::kernels::vnni_peak_loop_avx512vnni() != nullptr) ||
         (cpu.avx2 && qmatmul::kernels::int8_peak_loops_avx2().saturating != nullptr);
}

}  // namespace

// A peak given on the command line is the one %peak is of: at 200 GOPS per
// core and 2 threads, %peak = 100 * GOPS / 400, for the float8 op none.
TEST(BenchCli, PeakGivenOnTheCommandLine) {
  const BenchRun r = run_bench({"--shapes", "5x64x48", "--threads", "2", "--packed", "no", "--min-time", "0.01",
                                "--no-onednn", "--peak-gops-per-core", "200", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<JsonObject> rows = parse_rows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  for (const JsonObject& o : rows) {
    if (o.at("op").text == "qlinear_f8e4m3") {
      EXPECT_TRUE(has(o, "peak_pct", JsonValue::Null) && has(o, "peak_gops_per_core", JsonValue::Null));
      continue;
    }
    ASSERT_TRUE(has(o, "peak_pct", JsonValue::Number) && has(o, "peak_gops_per_core", JsonValue::Number));
    EXPECT_EQ(o.at("peak_gops_per_core").number, 200);
    EXPECT_NEAR(o.at("peak_pct").number, o.at("gops").number / 4, 1e-3 * o.at("peak_pct").number);
  }
}

TEST(BenchCli, JsonRowsHaveRequiredKeys) {
  const BenchRun r = run_bench({"--shapes", "3x50x7", "--threads", "1", "--min-time", "0.01", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<JsonObject> rows = parse_rows(r.out);
  // 3 int8 ops x packed no/yes, and the float8 op unpacked (packed too when
  // PackedB::pack accepts float8 B).
  ASSERT_GE(rows.size(), 7u) << r.out;
  ASSERT_LE(rows.size(), 8u) << r.out;
  std::map<std::string, int> per_op;
  for (const JsonObject& o : rows) {
    for (const char* key : {"M", "K", "N", "threads", "gops"}) {
      EXPECT_TRUE(has(o, key, JsonValue::Number)) << key;
    }
    const bool float8 = has(o, "op", JsonValue::String) && o.at("op").text == "qlinear_f8e4m3";
    // %peak of the measured int8 peak, where AVX-512 VNNI can measure one.
    const bool int8_peak = !float8 && peak_measurable();
    EXPECT_TRUE(has(o, "peak_pct", int8_peak ? JsonValue::Number : JsonValue::Null));
    EXPECT_TRUE(has(o, "peak_gops_per_core", int8_peak ? JsonValue::Number : JsonValue::Null));
    if (int8_peak) {
      EXPECT_GT(o.at("peak_gops_per_core").number, 0);
      EXPECT_NEAR(o.at("peak_pct").number, 100 * o.at("gops").number / o.at("peak_gops_per_core").number,
                  1e-3 * o.at("peak_pct").number);
    }
    for (const char* key : {"op", "kernel"}) EXPECT_TRUE(has(o, key, JsonValue::String)) << key;
    EXPECT_TRUE(has(o, "packed", JsonValue::Bool));
    EXPECT_TRUE(o.count("onednn_gops") && o.count("ratio"));
    if (!has(o, "gops", JsonValue::Number)) continue;
    EXPECT_GT(o.at("gops").number, 0);
    EXPECT_EQ(o.at("M").number, 3);
    EXPECT_EQ(o.at("K").number, 50);
    EXPECT_EQ(o.at("N").number, 7);
    EXPECT_EQ(o.at("threads").number, 1);
    EXPECT_FALSE(o.at("kernel").text.empty());
    if (has(o, "onednn_gops", JsonValue::Number)) {
      EXPECT_GT(o.at("onednn_gops").number, 0);
      EXPECT_TRUE(has(o, "ratio", JsonValue::Number));
    }
    // The exactness check must not have failed: int8 rows always compare
    // qmatmul (plain and packed B) with the reference; float8 rows compare
    // packed with plain B when PackedB takes float8.
    if (!float8) {
      EXPECT_TRUE(has(o, "verified", JsonValue::Bool)) << o.at("op").text;
    }
    EXPECT_FALSE(has(o, "verified", JsonValue::Bool) && !o.at("verified").boolean);
    // Whether oneDNN's s32 result equals the reference: known for the int8
    // rows it ran on (either answer: its AVX2 path saturates), never for
    // float8 (its float32 matmul is the baseline there); when it does not,
    // stderr says so (a note, not a warning).
    ASSERT_TRUE(o.count("onednn_exact"));
    if (float8 || !has(o, "onednn_gops", JsonValue::Number)) {
      EXPECT_TRUE(has(o, "onednn_exact", JsonValue::Null));
    } else {
      ASSERT_TRUE(has(o, "onednn_exact", JsonValue::Bool));
      if (!o.at("onednn_exact").boolean) {
        EXPECT_NE(r.err.find("note: 3x50x7: oneDNN's s32 matmul differs from the reference"), std::string::npos)
            << r.err;
      }
    }
    // QLinear int8 rows time MatMulInteger beside them; the others do not.
    const bool qlinear_int8 = o.at("op").text.rfind("qlinear_", 0) == 0 && !float8;
    if (qlinear_int8) {
      ASSERT_TRUE(has(o, "fusion_cost", JsonValue::Number) && has(o, "matmulinteger_gops", JsonValue::Number))
          << o.at("op").text;
      EXPECT_GT(o.at("fusion_cost").number, 0);
      // The two figures come from the same MatMulInteger median.
      EXPECT_NEAR(o.at("gops").number * o.at("fusion_cost").number, o.at("matmulinteger_gops").number,
                  1e-3 * o.at("matmulinteger_gops").number);
    } else {
      EXPECT_TRUE(has(o, "fusion_cost", JsonValue::Null) && has(o, "matmulinteger_gops", JsonValue::Null))
          << o.at("op").text;
    }
    ++per_op[o.at("op").text];
  }
  EXPECT_EQ(per_op["matmulinteger_u8s8"], 2);
  EXPECT_EQ(per_op["qlinear_u8s8_u8"], 2);
  EXPECT_EQ(per_op["qlinear_s8s8_s8"], 2);
  EXPECT_EQ(per_op["qlinear_f8e4m3"], static_cast<int>(rows.size()) - 6);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

// The float8 op on a tiny shape: every documented key, its own kernel name,
// no %peak, oneDNN's float32 matmul as the baseline, and packed=true rows
// exactly when PackedB::pack accepts float8 B (the run says so on stderr
// when it does not, and must not fail).
TEST(BenchCli, Float8OpJsonRows) {
  const fs::path file = scratch_dir() / "float8_shapes.txt";
  std::ofstream(file) << "[int8]\n9 9 9\n[float8]\n3 40 9\n";
  const BenchRun r = run_bench({"--shapes", file.string(), "--ops", "qlinear_f8e4m3", "--threads", "1,2",
                                "--min-time", "0.01", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const bool pack_refused = r.err.find("PackedB::pack refuses float8 B") != std::string::npos;
  const std::vector<JsonObject> rows = parse_rows(r.out);
  ASSERT_EQ(rows.size(), pack_refused ? 2u : 4u) << r.out << r.err;
  std::map<std::pair<int, bool>, int> seen;  // (threads, packed)
  for (const JsonObject& o : rows) {
    for (const char* key : {"M", "K", "N", "threads", "gops", "ms", "reps"}) {
      EXPECT_TRUE(has(o, key, JsonValue::Number)) << key;
    }
    for (const char* key : {"op", "kernel"}) EXPECT_TRUE(has(o, key, JsonValue::String)) << key;
    ASSERT_TRUE(has(o, "packed", JsonValue::Bool));
    EXPECT_TRUE(o.count("onednn_gops") && o.count("ratio"));
    EXPECT_EQ(o.at("op").text, "qlinear_f8e4m3");
    EXPECT_EQ(o.at("M").number, 3);  // the [float8] section only
    EXPECT_EQ(o.at("K").number, 40);
    EXPECT_EQ(o.at("N").number, 9);
    EXPECT_GT(o.at("gops").number, 0);
    EXPECT_EQ(o.at("kernel").text.rfind("float8_", 0), 0u) << o.at("kernel").text;
    EXPECT_TRUE(has(o, "peak_pct", JsonValue::Null));  // no float peak
    if (has(o, "onednn_gops", JsonValue::Number)) {  // built with oneDNN: its float32 matmul
      EXPECT_GT(o.at("onednn_gops").number, 0);
      EXPECT_TRUE(has(o, "ratio", JsonValue::Number));
      ASSERT_TRUE(has(o, "onednn_impl", JsonValue::String));
      EXPECT_EQ(o.at("onednn_impl").text.find("vnni"), std::string::npos) << o.at("onednn_impl").text;
      ASSERT_TRUE(has(o, "onednn_max_diff", JsonValue::Number));  // in float8 steps
      EXPECT_GE(o.at("onednn_max_diff").number, 0);
    }
    if (pack_refused) {
      EXPECT_FALSE(o.at("packed").boolean);
      EXPECT_TRUE(has(o, "verified", JsonValue::Null));
    } else {  // packed B must give plain B's bytes
      EXPECT_TRUE(has(o, "verified", JsonValue::Bool) && o.at("verified").boolean);
    }
    ++seen[{static_cast<int>(o.at("threads").number), o.at("packed").boolean}];
  }
  EXPECT_EQ(seen[std::make_pair(1, false)], 1);
  EXPECT_EQ(seen[std::make_pair(2, false)], 1);
  EXPECT_EQ(seen[std::make_pair(1, true)], pack_refused ? 0 : 1);
  EXPECT_EQ(seen[std::make_pair(2, true)], pack_refused ? 0 : 1);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;

  // --packed yes with float8 packing refused: no rows, still success.
  const BenchRun yes = run_bench({"--shapes", "2x16x3", "--ops", "qlinear_f8e4m3", "--packed", "yes", "--threads",
                                  "1", "--min-time", "0.01", "--no-onednn", "--json"});
  ASSERT_EQ(yes.exit_code, 0) << yes.err;
  EXPECT_EQ(parse_rows(yes.out).size(), pack_refused ? 0u : 1u) << yes.out;
}

// The default shapes (bench/shapes.txt compiled in): the float8 op runs the
// three float8 acceptance shapes, the int8 ops their own list; an MxKxN list
// runs for every op; sections merge a shape listed twice. --list prints the
// plan without timing anything.
TEST(BenchCli, DefaultShapesPerOpGroup) {
  const BenchRun f8 = run_bench({"--list", "--ops", "qlinear_f8e4m3"});
  ASSERT_EQ(f8.exit_code, 0) << f8.err;
  EXPECT_EQ(f8.out, "qlinear_f8e4m3 1x4096x4096\nqlinear_f8e4m3 128x4096x4096\nqlinear_f8e4m3 512x1024x4096\n");

  const BenchRun all = run_bench({"--list"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  std::map<std::string, std::vector<std::string>> per_op;
  for (const std::string& line : lines_of(all.out)) {
    const auto space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    per_op[line.substr(0, space)].push_back(line.substr(space + 1));
  }
  EXPECT_EQ(per_op.size(), 4u) << all.out;
  EXPECT_EQ(per_op["qlinear_f8e4m3"].size(), 3u);
  for (const char* op : {"matmulinteger_u8s8", "qlinear_u8s8_u8", "qlinear_s8s8_s8"}) {
    EXPECT_EQ(per_op[op].size(), 13u) << op;
    EXPECT_EQ(per_op[op].front(), "1x4096x4096") << op;
  }
  // The file in the source tree is the one compiled in.
  const BenchRun file = run_bench({"--list", "--shapes", QMATMUL_BENCH_SHAPES_FILE});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(file.out, all.out);

  const BenchRun list = run_bench({"--list", "--shapes", "2x3x4", "--ops", "qlinear_f8e4m3,qlinear_s8s8_s8"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "qlinear_s8s8_s8 2x3x4\nqlinear_f8e4m3 2x3x4\n");

  const fs::path sections = scratch_dir() / "sections.txt";
  std::ofstream(sections) << "5 6 7  # every op\n[float8, qlinear_u8s8_u8]\n2 3 4\n[int8]\n2 3 4\n8 8 8\n"
                             "[all]\n1 1 1\n";
  const BenchRun s = run_bench({"--list", "--shapes", sections.string(), "--ops", "qlinear_u8s8_u8,qlinear_f8e4m3"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out,
            "qlinear_u8s8_u8 5x6x7\nqlinear_f8e4m3 5x6x7\nqlinear_u8s8_u8 2x3x4\nqlinear_f8e4m3 2x3x4\n"
            "qlinear_u8s8_u8 8x8x8\nqlinear_u8s8_u8 1x1x1\nqlinear_f8e4m3 1x1x1\n");
}

// A batched shape, "B M K N": B products, each with its own B matrix. Its
// rows say so (batches), count 2*B*M*K*N operations, and pass the check that
// qmatmul's MatMulInteger with plain and packed 3-D B equals oneDNN's 3-D
// matmul (verified true); the 2-D shape of the same M, K, N stays a row of
// its own.
TEST(BenchCli, BatchedShapeRows) {
  const fs::path file = scratch_dir() / "batched.txt";
  std::ofstream(file) << "[int8]\n3 5 70 33  # three batches\n5 70 33\n";
  const BenchRun list = run_bench({"--list", "--shapes", file.string(), "--ops", "qlinear_u8s8_u8"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out, "qlinear_u8s8_u8 3x5x70x33\nqlinear_u8s8_u8 5x70x33\n");

  const BenchRun r =
      run_bench({"--shapes", file.string(), "--threads", "1,2", "--min-time", "0.01", "--min-reps", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<JsonObject> rows = parse_rows(r.out);
  ASSERT_EQ(rows.size(), 24u) << r.out;  // 2 shapes x 3 int8 ops x 2 thread counts x packed no/yes
  int batched = 0;
  for (const JsonObject& o : rows) {
    ASSERT_TRUE(has(o, "batches", JsonValue::Number) && has(o, "gops", JsonValue::Number) &&
                has(o, "ms", JsonValue::Number))
        << o.at("op").text;
    const double batches = o.at("batches").number;
    EXPECT_TRUE(batches == 1 || batches == 3) << batches;
    batched += batches == 3;
    EXPECT_EQ(o.at("M").number, 5);
    EXPECT_EQ(o.at("K").number, 70);
    EXPECT_EQ(o.at("N").number, 33);
    const double ops = 2 * batches * 5 * 70 * 33;
    EXPECT_NEAR(o.at("gops").number, ops / (o.at("ms").number * 1e-3) / 1e9, 1e-4 * o.at("gops").number);
    ASSERT_TRUE(has(o, "verified", JsonValue::Bool));
    EXPECT_TRUE(o.at("verified").boolean);
    if (has(o, "onednn_gops", JsonValue::Number)) {
      EXPECT_GT(o.at("onednn_gops").number, 0);
    }
  }
  EXPECT_EQ(batched, 12);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

// The attention shapes file in the source tree parses: batched shapes, for
// the int8 ops only.
TEST(BenchCli, AttentionShapesFileLists) {
  const BenchRun r = run_bench({"--list", "--shapes", QMATMUL_BENCH_ATTENTION_SHAPES_FILE});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  EXPECT_EQ(lines.size(), 21u) << r.out;  // 7 shapes x 3 int8 ops
  EXPECT_NE(r.out.find("qlinear_u8s8_u8 12x197x64x197\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("qlinear_f8e4m3"), std::string::npos) << r.out;
}

TEST(BenchCli, ShapesFileOpsAndPackedSelectRows) {
  const fs::path file = scratch_dir() / "shapes.txt";
  std::ofstream(file) << "# a comment\n\n2 16 5   # trailing comment\n4 8 3\n";
  const BenchRun r = run_bench({"--shapes", file.string(), "--ops", "qlinear_u8s8_u8", "--packed", "no",
                                "--threads", "1", "--min-time", "0.01", "--no-onednn", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<JsonObject> rows = parse_rows(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0].at("M").number, 2);
  EXPECT_EQ(rows[1].at("N").number, 3);
  for (const JsonObject& o : rows) {
    EXPECT_EQ(o.at("op").text, "qlinear_u8s8_u8");
    EXPECT_FALSE(o.at("packed").boolean);
    EXPECT_TRUE(has(o, "onednn_gops", JsonValue::Null));  // --no-onednn
    EXPECT_TRUE(has(o, "fusion_cost", JsonValue::Number));
  }
  // --no-fusion-cost: no MatMulInteger beside the QLinear rows.
  const BenchRun plain = run_bench({"--shapes", "2x16x5", "--ops", "qlinear_s8s8_s8", "--threads", "1",
                                    "--min-time", "0.01", "--no-onednn", "--no-fusion-cost", "--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const std::vector<JsonObject> plain_rows = parse_rows(plain.out);
  ASSERT_EQ(plain_rows.size(), 2u) << plain.out;
  for (const JsonObject& o : plain_rows) {
    EXPECT_TRUE(has(o, "fusion_cost", JsonValue::Null));
    EXPECT_TRUE(has(o, "matmulinteger_gops", JsonValue::Null));
  }
}

TEST(BenchCli, TableNamesKernelAndOps) {
  const BenchRun r = run_bench({"--shapes", "1x32x32", "--threads", "1", "--packed", "yes", "--min-time", "0.01"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("int8 kernel:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float8 kernel: float8_"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GOPS"), std::string::npos);
  EXPECT_NE(r.out.find("QL/MI"), std::string::npos);
  for (const char* op : {"matmulinteger_u8s8", "qlinear_u8s8_u8", "qlinear_s8s8_s8"}) {
    EXPECT_NE(r.out.find(op), std::string::npos) << op;
  }
}

TEST(BenchCli, HelpAndBadOptions) {
  const BenchRun help = run_bench({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--min-time"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("qlinear_f8e4m3"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("[float8]"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("BxMxKxN"), std::string::npos) << help.out;

  const fs::path bogus_section = scratch_dir() / "bogus_section.txt";
  std::ofstream(bogus_section) << "[int8]\n1 2 3\n[bogus]\n4 5 6\n";
  const fs::path int8_only = scratch_dir() / "int8_only.txt";
  std::ofstream(int8_only) << "[int8]\n1 2 3\n";
  const fs::path five_numbers = scratch_dir() / "five_numbers.txt";
  std::ofstream(five_numbers) << "1 2 3 4 5\n";
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--ops", "matmul_fp32"}, "--ops"},
      {{"--packed", "maybe"}, "--packed"},
      {{"--threads", "0"}, "--threads"},
      {{"--min-time", "-1"}, "--min-time"},
      {{"--shapes", "3x0x7"}, "--shapes"},
      {{"--shapes", "no_such_file_or_shape"}, "MxKxN"},
      {{"--shapes", "1x2x3x4x5"}, "BxMxKxN"},
      {{"--shapes", five_numbers.string()}, "three or four positive integers"},
      {{"--shapes", "3x32768x32768x1"}, "shape too large"},
      {{"--frobnicate"}, "frobnicate"},
      {{"--shapes", bogus_section.string()}, "unknown section name \"bogus\""},
      {{"--shapes", int8_only.string(), "--ops", "qlinear_f8e4m3"}, "no shape runs for the selected --ops"},
  };
  for (const auto& [args, phrase] : bad) {
    const BenchRun r = run_bench(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << " " << r.err;
    EXPECT_NE(r.err.find(phrase), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}
