// What the two kinds of `qmatmul bench` rows share: the int8 rows and the
// command are in cmd_bench.cpp, the float8 rows in bench_float8_rows.cpp.
// An OpInfo is one benchmarked op and BenchArgs the command's options.
// scalar, side_with_b and timed_row build a row's operands, its timed
// qmatmul side and its figures. The float8 functions make one float8
// shape's data, check packed B against plain B, and measure one float8 row.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_report.h"
#include "bench_shapes.h"
#include "onednn_baseline.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul::cli {

// An op runs the shapes of the shapes-file sections that name it or its
// group (bench_shapes.h); bench/shapes.txt gives each group its defaults.
struct OpInfo {
  const char* name;
  const char* group;  // "int8" or "float8"
  ElementType a, b, y;
  bench::OnednnOp onednn;  // the baseline (Float32: on the decoded float8 values)
  int32_t a_zero_point, y_zero_point;
  bool is_float8() const { return qmatmul::is_float8(a); }
};

// The op names the command accepts, in the op table's order.
std::vector<std::string> op_names();

struct BenchArgs {
  std::string shapes;
  std::vector<std::string> ops = op_names();
  std::vector<int> threads{1, 2};
  std::string packed = "both";
  bool json = false;
  double min_time = 0.3;
  int min_reps = 5;
  double peak_per_core = 0;  // int8 GOPS per core for %peak; 0: measure it (measured_vnni_peak_gops)
  bool no_onednn = false;
  bool no_fusion_cost = false;  // skip MatMulInteger beside the QLinear int8 rows
  bool onednn_fixed_scale = false;
  bool list = false;  // print the (op, shape) plan instead of measuring
};

// A 0-d tensor of `type` holding `value` (float8: rounded to the type).
Tensor scalar(ElementType type, double value);

// A Side that calls `call` with the packed weights or the plain ones; `call`,
// `pb` and `bv` must outlive it.
template <typename Call>
bench::Side side_with_b(bool packed, const Call& call, const PackedB& pb, const TensorView& bv) {
  return bench::Side{packed ? std::function<void()>([&call, &pb] { call(pb); })
                            : std::function<void()>([&call, &bv] { call(bv); })};
}

// Timing results of one row (shared by the int8 and float8 rows): GOPS and
// times of qmatmul (q), oneDNN (d) and MatMulInteger beside QLinear (mi).
bench::Row timed_row(const OpInfo& op, const bench::BenchShape& s, int threads, bool packed, const bench::Side& q,
                     const bench::Side* d, const std::string& onednn_impl, const BenchArgs& args,
                     const bench::Side* mi = nullptr);

// ---- float8 rows (bench_float8_rows.cpp) ---------------------------------

// Float8 operands of one shape: finite codes (no NaN, no Inf), uniform over
// the code space, with their exact float32 values for oneDNN's float32 matmul.
struct Float8Data {
  std::vector<uint8_t> a, b;
  std::vector<float> a_f32, b_f32;
  double rms_a = 1, rms_b = 1;  // root mean square of the values
};

Float8Data float8_data(std::mt19937& rng, const OpInfo& op, const bench::BenchShape& s);

// Whether float8 packed-B rows can run for this shape: PackedB::pack must
// accept the float8 B and the PackedB overload of qlinear_matmul must run it.
// When it does, its output is compared with plain B's (they must be
// byte-identical; a difference warns and sets `verified` false). `rejection`
// receives the library's message when packing is refused.
bool probe_float8_packed(const OpInfo& op, const bench::BenchShape& s, const Float8Data& d, int threads,
                         std::optional<bool>& verified, std::string& rejection);

// One float8 row: qmatmul's QLinearMatMul-21 against oneDNN's float32
// matmul on the decoded values, the latter requantized and compared in steps.
bench::Row bench_float8_row(const OpInfo& op, const bench::BenchShape& s, int threads, bool packed,
                            const Float8Data& data, bool use_onednn, const BenchArgs& args);

}  // namespace qmatmul::cli
