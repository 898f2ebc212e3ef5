// `qmatmul bench`: speed of MatMulInteger (u8 x s8 -> s32) and QLinearMatMul
// (u8 x s8 -> u8, s8 x s8 -> s8) on 2-D shapes, with B as plain weights or
// prepacked (PackedB), next to oneDNN on the same problem, data, types,
// run-time quantization and thread count in the same process
// (onednn_baseline.h). Each row: median time of interleaved qmatmul / oneDNN
// samples after a warm-up, GOPS = 2*M*K*N / time, % of the AVX-512 VNNI peak
// (--peak-gops-per-core x threads) and the ratio qmatmul / oneDNN. Before
// timing a shape, checks once that qmatmul's MatMulInteger (plain and packed
// B) equals oneDNN's exact s32 result, warning on stderr if not; requantized
// outputs are only compared loosely (max |difference| reported) since oneDNN
// rounds differently. Output: an aligned table, or one JSON object per line.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "commands.h"
#include "cpu/cpu_features.h"
#include "kernels/dispatch.h"
#include "onednn_baseline.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul::cli {
namespace {

// Built-in copy of bench/shapes.txt (used when --shapes is not given).
constexpr const char* kDefaultShapes = R"(
1 4096 4096
16 4096 4096
128 768 768
128 4096 4096
512 1024 4096
2048 2048 2048
2 4096 4096
3 4096 4096
4 4096 4096
5 4096 4096
6 4096 4096
7 4096 4096
8 4096 4096
)";

struct BenchShape {
  int64_t m, k, n;
};

struct OpInfo {
  const char* name;
  ElementType a, y;  // b is int8 for every op
  bench::OnednnOp onednn;
  int32_t a_zero_point, y_zero_point;
};

const OpInfo kOps[] = {
    {"matmulinteger_u8s8", ElementType::Uint8, ElementType::Int32, bench::OnednnOp::MatMulIntegerU8S8, 128, 0},
    {"qlinear_u8s8_u8", ElementType::Uint8, ElementType::Uint8, bench::OnednnOp::QLinearU8S8U8, 128, 128},
    {"qlinear_s8s8_s8", ElementType::Int8, ElementType::Int8, bench::OnednnOp::QLinearS8S8S8, 3, 0},
};

struct BenchArgs {
  std::string shapes;
  std::vector<std::string> ops{"matmulinteger_u8s8", "qlinear_u8s8_u8", "qlinear_s8s8_s8"};
  std::vector<int> threads{1, 2};
  std::string packed = "both";
  bool json = false;
  double min_time = 0.3;
  int min_reps = 5;
  double peak_per_core = 1050.0;
  bool no_onednn = false;
  bool onednn_fixed_scale = false;
};

// ---- shapes -------------------------------------------------------------

BenchShape checked_shape(int64_t m, int64_t k, int64_t n, const std::string& where) {
  constexpr int64_t kMaxDim = int64_t{1} << 24, kMaxElements = int64_t{1} << 31;
  for (int64_t d : {m, k, n}) {
    if (d < 1 || d > kMaxDim) throw Error(where + ": dimensions must be in 1.." + std::to_string(kMaxDim));
  }
  if (m * k > kMaxElements || k * n > kMaxElements || m * n > kMaxElements) {
    throw Error(where + ": shape too large for the benchmark (an operand over 2^31 elements)");
  }
  return {m, k, n};
}

bool parse_int(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 12) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  out = std::stoll(text);
  return true;
}

// "M K N" lines (or MxKxN), '#' comments, blank lines ignored.
std::vector<BenchShape> parse_shape_lines(const std::string& text, const std::string& origin) {
  std::vector<BenchShape> shapes;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::replace(line.begin(), line.end(), 'x', ' ');
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number);
    int64_t d[3];
    if (words.size() != 3 || !parse_int(words[0], d[0]) || !parse_int(words[1], d[1]) ||
        !parse_int(words[2], d[2])) {
      throw Error(where + ": expected \"M K N\" (three positive integers), got \"" + line + "\"");
    }
    shapes.push_back(checked_shape(d[0], d[1], d[2], where));
  }
  if (shapes.empty()) throw Error(origin + ": no shapes");
  return shapes;
}

// "1x4096x4096,16x4096x4096".
std::vector<BenchShape> parse_shape_list(const std::string& list) {
  std::vector<BenchShape> shapes;
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    std::vector<std::string> parts;
    std::istringstream dims(item);
    for (std::string p; std::getline(dims, p, 'x');) parts.push_back(p);
    int64_t d[3];
    if (parts.size() != 3 || item.back() == 'x' || !parse_int(parts[0], d[0]) || !parse_int(parts[1], d[1]) ||
        !parse_int(parts[2], d[2])) {
      throw Error("--shapes: '" + list +
                  "' is neither an existing file nor a list of MxKxN shapes (e.g. 1x4096x4096,16x4096x4096)");
    }
    shapes.push_back(checked_shape(d[0], d[1], d[2], "--shapes " + item));
  }
  if (shapes.empty()) throw Error("--shapes: empty list");
  return shapes;
}

std::vector<BenchShape> load_shapes(const std::string& arg) {
  if (arg.empty()) return parse_shape_lines(kDefaultShapes, "built-in shapes");
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) {
    std::ifstream in(arg, std::ios::binary);
    if (!in) throw Error("--shapes: cannot read '" + arg + "'");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_shape_lines(text.str(), arg);
  }
  return parse_shape_list(arg);
}

// ---- timing -------------------------------------------------------------

using Clock = std::chrono::steady_clock;

struct Side {
  explicit Side(std::function<void()> f) : fn(std::move(f)) {}
  std::function<void()> fn;
  int64_t batch = 1;          // calls per sample
  std::vector<double> samples;  // seconds per call
  double total = 0;
  double median() const {
    std::vector<double> s = samples;
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
    return std::max(s[s.size() / 2], 1e-12);
  }
};

double time_calls(const std::function<void()>& fn, int64_t calls) {
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Warms every side up, then takes samples round-robin (so drift hits all
// sides alike) until each has run >= min_time seconds and >= min_reps samples.
void measure(std::vector<Side*> sides, double min_time, int min_reps) {
  const double warm = std::min(0.1, min_time / 3);
  std::vector<double> fastest(sides.size(), 1e30), spent(sides.size(), 0);
  for (int calls = 0;; ++calls) {
    bool done = calls >= 2;
    for (std::size_t i = 0; i < sides.size(); ++i) {
      const double t = time_calls(sides[i]->fn, 1);
      fastest[i] = std::min(fastest[i], t);
      spent[i] += t;
      done = done && spent[i] >= warm;
    }
    if (done) break;
  }
  for (std::size_t i = 0; i < sides.size(); ++i) {
    // Samples of ~min_time/40 each, at least one call.
    sides[i]->batch = std::clamp<int64_t>(static_cast<int64_t>(min_time / 40 / fastest[i]), 1, 1000000);
  }
  for (;;) {
    bool done = true;
    for (Side* s : sides) {
      const double t = time_calls(s->fn, s->batch);
      s->samples.push_back(t / static_cast<double>(s->batch));
      s->total += t;
      done = done && s->total >= min_time && static_cast<int>(s->samples.size()) >= min_reps;
    }
    if (done) break;
  }
}

// ---- output -------------------------------------------------------------

struct Row {
  std::string op, kernel;
  BenchShape shape{};
  int threads = 1;
  bool packed = false;
  double ms = 0, gops = 0, peak_pct = 0;
  int reps = 0;
  std::optional<double> onednn_ms, onednn_gops, ratio;
  std::optional<int> max_diff;  // requantized outputs vs oneDNN
  std::string onednn_impl;
  std::optional<bool> verified;
};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string json_row(const Row& r) {
  auto num = [](const std::optional<double>& v) { return v ? fmt("%.6g", *v) : std::string("null"); };
  std::ostringstream o;
  o << "{\"op\":" << json_string(r.op) << ",\"M\":" << r.shape.m << ",\"K\":" << r.shape.k
    << ",\"N\":" << r.shape.n << ",\"threads\":" << r.threads << ",\"packed\":" << (r.packed ? "true" : "false")
    << ",\"kernel\":" << json_string(r.kernel) << ",\"ms\":" << fmt("%.6g", r.ms)
    << ",\"gops\":" << fmt("%.6g", r.gops) << ",\"peak_pct\":" << fmt("%.4g", r.peak_pct)
    << ",\"reps\":" << r.reps << ",\"onednn_gops\":" << num(r.onednn_gops)
    << ",\"onednn_ms\":" << num(r.onednn_ms) << ",\"ratio\":" << num(r.ratio)
    << ",\"onednn_impl\":" << (r.onednn_gops ? json_string(r.onednn_impl) : "null")
    << ",\"onednn_max_diff\":" << (r.max_diff ? std::to_string(*r.max_diff) : "null")
    << ",\"verified\":" << (r.verified ? (*r.verified ? "true" : "false") : "null") << "}";
  return o.str();
}

struct Column {
  const char* title;
  int width;
  bool left;
};

std::string table_line(const std::vector<Column>& cols, const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const std::string& c = cells[i];
    const std::string pad(c.size() < static_cast<std::size_t>(cols[i].width) ? cols[i].width - c.size() : 0, ' ');
    line += (i ? "  " : "") + (cols[i].left ? c + pad : pad + c);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

std::vector<std::string> table_cells(const Row& r) {
  return {r.op, std::to_string(r.shape.m), std::to_string(r.shape.k), std::to_string(r.shape.n),
          std::to_string(r.threads), r.packed ? "yes" : "no", r.kernel, fmt("%.4g", r.ms), fmt("%.1f", r.gops),
          fmt("%.1f", r.peak_pct), r.onednn_gops ? fmt("%.1f", *r.onednn_gops) : "-",
          r.ratio ? fmt("%.2f", *r.ratio) : "-", r.max_diff ? std::to_string(*r.max_diff) : "-",
          std::to_string(r.reps), r.onednn_gops ? r.onednn_impl : "-"};
}

// ---- the benchmark ------------------------------------------------------

// The kernel qmatmul runs for M rows: the small-M kernel when it applies and
// (for packed B) reads the layout PackedB::pack wrote with the main kernel.
std::string kernel_name(int64_t m, bool packed) {
  const auto& want = kernels::int8_kernel_for(m);
  const auto& main = *kernels::dispatch().chosen->kernel;
  if (packed && !(want.nr == main.nr && want.kr == main.kr && want.widened == main.widened)) return main.name;
  return want.name;
}

Tensor scalar(ElementType type, double value) {
  Tensor t(type, {});
  switch (type) {
    case ElementType::Uint8: *t.data<uint8_t>() = static_cast<uint8_t>(value); break;
    case ElementType::Int8: *t.data<int8_t>() = static_cast<int8_t>(value); break;
    case ElementType::Float32: *t.data<float>() = static_cast<float>(value); break;
    default: throw Error("bench: unexpected scalar type");
  }
  return t;
}

template <typename T>
int max_abs_diff(const void* x, const void* y, int64_t count) {
  int worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int d = std::abs(int(static_cast<const T*>(x)[i]) - int(static_cast<const T*>(y)[i]));
    worst = std::max(worst, d);
  }
  return worst;
}

// Checks qmatmul's MatMulInteger (plain and, when benchmarked, packed B)
// against oneDNN's s32 result. Returns nullopt when nothing was compared.
std::optional<bool> verify_shape(const BenchShape& s, const std::vector<uint8_t>& a, const std::vector<int8_t>& b,
                                 bool check_packed, bool use_onednn, int threads) {
  omp_set_num_threads(threads);
  Options opt;
  opt.threads = threads;
  const TensorView av{ElementType::Uint8, {s.m, s.k}, a.data()}, bv{ElementType::Int8, {s.k, s.n}, b.data()};
  const Tensor azp = scalar(ElementType::Uint8, 128), bzp = scalar(ElementType::Int8, 0);
  const Tensor plain = matmul_integer(av, bv, azp.view(), bzp.view(), opt);
  const auto count = static_cast<std::size_t>(s.m * s.n);
  bool ok = true, compared = false;
  auto check = [&](const int32_t* other, const char* what) {
    compared = true;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (other[i] != plain.data<int32_t>()[i] && bad++ == 0) first = i;
    }
    if (bad == 0) return;
    ok = false;
    std::cerr << "warning: " << s.m << "x" << s.k << "x" << s.n << ": qmatmul MatMulInteger and " << what
              << " differ in " << bad << " of " << count << " elements (first at [" << first / s.n << ","
              << first % s.n << "]: " << plain.data<int32_t>()[first] << " vs " << other[first] << ")\n";
  };
  if (check_packed) {
    Tensor y(ElementType::Int32, {s.m, s.n});
    matmul_integer(av, PackedB::pack(bv, opt), azp.view(), bzp.view(), y.mutable_view(), opt);
    check(y.data<int32_t>(), "qmatmul with packed B");
  }
  if (use_onednn) {
    std::vector<int32_t> y(count);
    bench::OnednnMatmul dnn(bench::OnednnOp::MatMulIntegerU8S8, s.m, s.k, s.n, b.data(), false);
    dnn.run(a.data(), y.data(), {128, 0, 1.0f, 0});
    check(y.data(), "oneDNN (s32)");
  }
  return compared ? std::optional<bool>(ok) : std::nullopt;
}

Row bench_row(const OpInfo& op, const BenchShape& s, int threads, bool packed, const std::vector<uint8_t>& a,
              const std::vector<int8_t>& b, bool use_onednn, const BenchArgs& args) {
  omp_set_num_threads(threads);
  Options opt;
  opt.threads = threads;
  const TensorView av{op.a, {s.m, s.k}, a.data()}, bv{ElementType::Int8, {s.k, s.n}, b.data()};
  // Realistic per-tensor quantization: y spreads over ~+-32 quanta of its range.
  const double a_scale = 0.02, b_scale = 0.005;
  const double y_scale = a_scale * b_scale * 74.0 * 74.0 * std::sqrt(double(s.k)) / 32.0;
  const Tensor as = scalar(ElementType::Float32, a_scale), bs = scalar(ElementType::Float32, b_scale),
               ys = scalar(ElementType::Float32, y_scale);
  const Tensor azp = scalar(op.a, op.a_zero_point), bzp = scalar(ElementType::Int8, 0);
  const bool integer = op.y == ElementType::Int32;
  const Tensor yzp = integer ? Tensor() : scalar(op.y, op.y_zero_point);
  Tensor yq(op.y, {s.m, s.n});
  const PackedB pb = packed ? PackedB::pack(bv, opt) : PackedB();

  auto call = [&](const auto& bop) {
    if (integer) {
      matmul_integer(av, bop, azp.view(), bzp.view(), yq.mutable_view(), opt);
    } else {
      qlinear_matmul(av, as, azp, bop, bs, bzp, ys, yzp, yq.mutable_view(), opt);
    }
  };
  Side q{packed ? std::function<void()>([&] { call(pb); }) : std::function<void()>([&] { call(bv); })};

  std::optional<bench::OnednnMatmul> dnn;
  std::vector<unsigned char> yd(yq.byte_size());
  const bench::OnednnQuant quant{op.a_zero_point, 0,
                                 static_cast<float>(float(a_scale) * float(b_scale) / float(y_scale)),
                                 op.y_zero_point};
  if (use_onednn) {
    dnn.emplace(op.onednn, s.m, s.k, s.n, b.data(), packed, false,
                args.onednn_fixed_scale && !integer ? std::optional<float>(quant.output_scale) : std::nullopt);
  }
  Side d{[&] { dnn->run(a.data(), yd.data(), quant); }};

  std::vector<Side*> sides{&q};
  if (dnn) sides.push_back(&d);
  measure(sides, args.min_time, args.min_reps);

  Row r;
  r.op = op.name;
  r.kernel = kernel_name(s.m, packed);
  r.shape = s;
  r.threads = threads;
  r.packed = packed;
  const double ops = 2.0 * double(s.m) * double(s.k) * double(s.n);
  r.ms = q.median() * 1e3;
  r.gops = ops / q.median() / 1e9;
  r.peak_pct = 100.0 * r.gops / (args.peak_per_core * threads);
  r.reps = static_cast<int>(q.samples.size());
  if (dnn) {
    r.onednn_ms = d.median() * 1e3;
    r.onednn_gops = ops / d.median() / 1e9;
    r.ratio = r.gops / *r.onednn_gops;
    r.onednn_impl = dnn->impl_name();
    if (!integer) {
      r.max_diff = op.y == ElementType::Uint8 ? max_abs_diff<uint8_t>(yq.raw(), yd.data(), yq.size())
                                              : max_abs_diff<int8_t>(yq.raw(), yd.data(), yq.size());
    }
  }
  return r;
}

void run_bench(const BenchArgs& args) {
  const std::vector<BenchShape> shapes = load_shapes(args.shapes);
  std::vector<const OpInfo*> ops;
  for (const OpInfo& op : kOps) {
    if (std::find(args.ops.begin(), args.ops.end(), op.name) != args.ops.end()) ops.push_back(&op);
  }
  if (ops.empty()) throw Error("--ops: no operator selected");
  if (args.threads.empty()) throw Error("--threads: no thread count given");
  std::vector<bool> packed_modes;
  if (args.packed != "yes") packed_modes.push_back(false);
  if (args.packed != "no") packed_modes.push_back(true);
  const bool use_onednn = !args.no_onednn && bench::onednn_available();

  const auto& d = kernels::dispatch();
  std::vector<Column> cols{{"op", 2, true},     {"M", 5, false},     {"K", 5, false},      {"N", 5, false},
                           {"thr", 3, false},   {"packed", 6, true}, {"kernel", 6, true},  {"ms", 8, false},
                           {"GOPS", 7, false},  {"%peak", 5, false}, {"oneDNN", 7, false}, {"ratio", 5, false},
                           {"qdiff", 5, false}, {"reps", 4, false},  {"oneDNN impl", 0, true}};
  for (const OpInfo* op : ops) cols[0].width = std::max<int>(cols[0].width, int(std::strlen(op->name)));
  for (const BenchShape& s : shapes) {
    for (bool p : packed_modes) cols[6].width = std::max<int>(cols[6].width, int(kernel_name(s.m, p).size()));
  }
  if (!args.json) {
    const auto& cpu = cpu::features();
    std::cout << "qmatmul " << version() << " bench on " << (cpu.brand.empty() ? "unknown CPU" : cpu.brand) << ", "
              << std::thread::hardware_concurrency() << " logical cores\n"
              << "int8 kernel: " << d.chosen->kernel->name << " ("
              << kernels::isa_name(d.chosen->isa) << ", " << d.reason << ")";
    if (d.chosen->small_m) {
      std::cout << "; small-M kernels for M <= " << d.chosen->small_m->mr << " (per row below)";
    }
    std::cout << "\noneDNN: "
              << (use_onednn ? bench::onednn_version() + (args.onednn_fixed_scale
                                                               ? ", QLinear output scale fixed at creation"
                                                               : ", run-time scales and zero points")
                  : args.no_onednn ? "off (--no-onednn)"
                                   : bench::onednn_version())
              << "\nGOPS = 2*M*K*N / median time (>= " << args.min_time << " s and >= " << args.min_reps
              << " samples per side, interleaved with oneDNN); %peak of " << args.peak_per_core
              << " GOPS/core x threads; ratio = qmatmul/oneDNN; qdiff = max |qmatmul - oneDNN| of the "
                 "requantized output\n\n";
    std::vector<std::string> titles;
    for (const Column& c : cols) titles.push_back(c.title);
    std::cout << table_line(cols, titles) << "\n" << std::flush;
  }

  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const BenchShape& s : shapes) {
    std::vector<uint8_t> a(static_cast<std::size_t>(s.m * s.k));
    std::vector<int8_t> b(static_cast<std::size_t>(s.k * s.n));
    for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : b) v = static_cast<int8_t>(byte(rng) - 128);
    const bool check_packed = std::find(packed_modes.begin(), packed_modes.end(), true) != packed_modes.end();
    const std::optional<bool> verified = verify_shape(s, a, b, check_packed, use_onednn, args.threads.front());
    for (const OpInfo* op : ops) {
      for (int threads : args.threads) {
        for (bool packed : packed_modes) {
          Row r = bench_row(*op, s, threads, packed, a, b, use_onednn, args);
          r.verified = verified;
          std::cout << (args.json ? json_row(r) : table_line(cols, table_cells(r))) << "\n" << std::flush;
        }
      }
    }
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "Time MatMulInteger / QLinearMatMul against oneDNN and the VNNI peak");
  cmd->add_option("--shapes", args->shapes,
                  "Shapes: a file of \"M K N\" lines (e.g. bench/shapes.txt) or a list like "
                  "1x4096x4096,16x4096x4096 (default: the built-in copy of bench/shapes.txt)");
  cmd->add_option("--ops", args->ops, "Operators, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember({"matmulinteger_u8s8", "qlinear_u8s8_u8", "qlinear_s8s8_s8"}))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Thread counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--packed", args->packed, "B as prepacked weights (PackedB): yes, no or both")
      ->check(CLI::IsMember({"yes", "no", "both"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "One JSON object per line instead of a table");
  cmd->add_option("--min-time", args->min_time, "Seconds of timed calls per measurement and side")
      ->check(CLI::Range(1e-6, 3600.0))
      ->capture_default_str();
  cmd->add_option("--min-reps", args->min_reps, "Minimum timed samples per measurement and side")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--peak-gops-per-core", args->peak_per_core, "int8 peak per core for %peak (GOPS)")
      ->check(CLI::Range(1e-3, 1e9))
      ->capture_default_str();
  cmd->add_flag("--no-onednn", args->no_onednn, "Skip the oneDNN baseline and check");
  cmd->add_flag("--onednn-fixed-scale", args->onednn_fixed_scale,
                "Build oneDNN's QLinear primitives with the output scale fixed at creation (oneDNN 2.6 then "
                "runs brgemm instead of gemm:jit); qmatmul still takes every scale at run time");
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace qmatmul::cli
