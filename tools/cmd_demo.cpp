// `qmatmul demo`: the main job on built-in data. It runs the worked examples
// of the MatMulInteger operator text, checks them exactly against the values
// printed in the spec, then times a few typical layer shapes and prints GOPS.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "kernels/dispatch.h"
#include "qmatmul/qmatmul.h"

namespace qmatmul::cli {
namespace {

struct Example {
  const char* name;
  ElementType type;
  Shape a_dims;
  std::vector<int> a;
  Shape b_dims;
  std::vector<int> b;
  std::vector<int> a_zp;  // empty = absent
  Shape a_zp_dims;
  std::vector<int> b_zp;
  Shape b_zp_dims;
  std::vector<int32_t> expected;
};

// The four examples of spec/MatMulInteger-10.txt.
const std::vector<Example>& spec_examples() {
  static const std::vector<Example> ex = {
      {"matmulinteger", ElementType::Uint8, {4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0}, {3, 2},
       {1, 4, 2, 5, 3, 6}, {12}, {1}, {0}, {1}, {-38, -83, -44, -98, -50, -113, -56, -128}},
      {"matmulinteger_int8", ElementType::Int8, {2, 3}, {1, -2, 3, -4, 5, -6}, {3, 2}, {1, 2, -3, 4, 5, -6},
       {1}, {}, {-1}, {}, {18, -25, -60, 40}},
      {"matmulinteger_per_col_b_zp", ElementType::Uint8, {2, 3}, {11, 7, 3, 10, 6, 2}, {3, 2},
       {1, 4, 2, 5, 3, 6}, {}, {}, {1, 2}, {2}, {13, 55, 10, 46}},
      {"matmulinteger_per_row_a_zp", ElementType::Uint8, {2, 3}, {11, 7, 3, 10, 6, 2}, {3, 2},
       {1, 4, 2, 5, 3, 6}, {1, 2}, {2}, {}, {}, {28, 82, 16, 52}},
  };
  return ex;
}

std::vector<unsigned char> bytes_of(const std::vector<int>& v) {
  std::vector<unsigned char> out;
  for (int x : v) out.push_back(static_cast<unsigned char>(x));
  return out;
}

bool run_example(const Example& e) {
  const auto a = bytes_of(e.a), b = bytes_of(e.b), azp = bytes_of(e.a_zp), bzp = bytes_of(e.b_zp);
  std::optional<TensorView> a_zp, b_zp;
  if (!e.a_zp.empty()) a_zp = TensorView{e.type, e.a_zp_dims, azp.data()};
  if (!e.b_zp.empty()) b_zp = TensorView{e.type, e.b_zp_dims, bzp.data()};
  const Tensor y = matmul_integer({e.type, e.a_dims, a.data()}, {e.type, e.b_dims, b.data()}, a_zp, b_zp);
  const bool ok = std::equal(e.expected.begin(), e.expected.end(), y.data<int32_t>()) &&
                  y.size() == static_cast<int64_t>(e.expected.size());
  std::cout << (ok ? "  PASS " : "  FAIL ") << e.name << " " << shape_to_string(y.dims()) << "\n";
  return ok;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void time_shape(int64_t M, int64_t K, int64_t N, int threads) {
  std::mt19937 rng(42);
  std::vector<uint8_t> a(static_cast<std::size_t>(M * K));
  std::vector<int8_t> b(static_cast<std::size_t>(K * N));
  for (auto& x : a) x = static_cast<uint8_t>(rng());
  for (auto& x : b) x = static_cast<int8_t>(rng());
  const uint8_t azp = 128, yzp = 128;
  const int8_t bzp = 0;
  const float as = 0.02f, bs = 0.01f, ys = 4.0f;
  Tensor y(ElementType::Uint8, {M, N});
  Options opt;
  opt.threads = threads;
  const PackedB weights = PackedB::pack({ElementType::Int8, {K, N}, b.data()}, opt);  // once, like a model load
  std::vector<double> secs;
  const auto start = std::chrono::steady_clock::now();
  while (secs.size() < 3 || (secs.size() < 50 && std::chrono::steady_clock::now() - start < std::chrono::milliseconds(400))) {
    const auto t0 = std::chrono::steady_clock::now();
    qlinear_matmul({ElementType::Uint8, {M, K}, a.data()}, {ElementType::Float32, {}, &as},
                   {ElementType::Uint8, {}, &azp}, weights,
                   {ElementType::Float32, {}, &bs}, {ElementType::Int8, {}, &bzp}, {ElementType::Float32, {}, &ys},
                   {ElementType::Uint8, {}, &yzp}, y.mutable_view(), opt);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double gops = 2.0 * M * K * N / median(secs) / 1e9;
  std::printf("  %5lld x %5lld x %5lld  threads=%s  %8.1f GOPS\n", static_cast<long long>(M),
              static_cast<long long>(K), static_cast<long long>(N),
              threads == 0 ? "all" : std::to_string(threads).c_str(), gops);
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "Check the spec's worked examples, then time typical layer shapes");
  static int threads = 0;
  cmd->add_option("--threads", threads, "Threads for the timing table (0 = all cores)")->check(CLI::NonNegativeNumber);
  cmd->callback([] {
    std::cout << "qmatmul " << version() << " demo\n";
    std::cout << "Worked examples of the MatMulInteger-10 operator text, checked exactly:\n";
    bool ok = true;
    for (const auto& e : spec_examples()) ok = run_example(e) && ok;
    if (!ok) throw Error("demo: a worked example did not match the spec");
    std::cout << "QLinearMatMul u8 x s8 -> u8, weights packed once, per-tensor parameters, kernel "
              << kernels::int8_kernel_for(128, 768).name << ", median GOPS = 2*M*K*N / time:\n";
    for (const auto& [m, k, n] : {std::tuple{1, 4096, 4096}, {16, 4096, 4096}, {128, 768, 768}, {512, 1024, 4096}})
      time_shape(m, k, n, threads);
  });
}

}  // namespace qmatmul::cli
