// Float8 QLinearMatMul-21 operator (SEMANTICS.md §5): the library against the
// float64-accumulating reference, bit for bit on cases built so that every
// float32 partial sum is exact, within one float8 step (or +-1 for integer
// outputs) on random cases; determinism over threads and instruction sets;
// packed float8 weights against the plain tensor; and the float8 bad-input
// messages. The conversions are tested in test_float8_conversion.cpp; helpers
// both files use are in float8_test_support.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "float8_test_support.h"
#include "gemm/float8_gemm.h"
#include "reference/reference.h"
#include "test_support.h"

namespace qmatmul::testing {
namespace {

namespace ref = qmatmul::reference;
using gemm::Float8Path;

const ET kOutputTypes[] = {ET::Uint8, ET::Int8, ET::Float8E4M3FN, ET::Float8E4M3FNUZ, ET::Float8E5M2,
                           ET::Float8E5M2FNUZ};

// Random float8 codes: `finite` excludes NaN and Inf codes; `exact` picks only
// values v with |v| <= 2 and 8v an integer (so every sum in the exact tests is
// exactly representable in float32).
Tensor random_float8(std::mt19937& rng, ET t, const Shape& dims, bool exact, bool finite = true) {
  std::vector<uint8_t> pool;
  for (int c = 0; c < 256; ++c) {
    const float v = ref::float8_to_float(static_cast<uint8_t>(c), t);
    if (exact && !(std::isfinite(v) && std::fabs(v) <= 2 && v * 8 == std::floor(v * 8))) continue;
    if (finite && !std::isfinite(v)) continue;
    pool.push_back(static_cast<uint8_t>(c));
  }
  Tensor out(t, dims);
  for (int64_t i = 0; i < out.size(); ++i) out.data<uint8_t>()[i] = pool[rng() % pool.size()];
  return out;
}

Tensor random_operand(std::mt19937& rng, ET t, const Shape& dims, bool exact) {
  return is_float8(t) ? random_float8(rng, t, dims, exact) : random_int8(rng, t, dims, 0);
}

// Mean and RMS of (operand - zero point) over all elements, zero point taken
// per tensor as its element 0 (only to pick a sensible output scale).
std::pair<double, double> moments(const Tensor& t, const Tensor& zp) {
  const auto value = [](const Tensor& x, int64_t i) -> double {
    if (is_float8(x.type())) return ref::float8_to_float(x.data<uint8_t>()[i], x.type());
    return x.type() == ET::Int8 ? x.data<int8_t>()[i] : x.data<uint8_t>()[i];
  };
  if (t.size() == 0) return {0.0, 1.0};
  const double z = zp.size() ? value(zp, 0) : 0.0;
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double d = value(t, i) - z;
    s += d;
    s2 += d * d;
  }
  const double n = static_cast<double>(t.size());
  return {s / n, std::max(1e-3, std::sqrt(s2 / n))};
}

struct Case {
  Shape a, b;
  ET a_type, b_type, y_type, scale_type = ET::Float32;
  Layout a_layout = Layout::Scalar, b_layout = Layout::Scalar;
  int y_layout = 0;  // index into the y shapes below
  bool exact = false;
  double target = 0;  // typical |output| (0: a third of the output range)
};

std::vector<Shape> y_shapes(const Shape& out) {
  std::vector<Shape> s = {{}, {1}};
  if (!out.empty()) {
    s.push_back({out.back()});
    s.push_back(out);
  }
  if (out.size() >= 2) s.push_back({out[out.size() - 2], 1});
  return s;
}

double output_range(ET t) {
  if (t == ET::Uint8 || t == ET::Int8) return 127;
  return ref::float8_to_float(max_code(t), t);
}

// Steps between two codes of one float8 type (NaN == NaN counts as 0).
int code_distance(uint8_t x, uint8_t y, ET t) {
  if (is_nan_code(x, t) || is_nan_code(y, t)) return is_nan_code(x, t) && is_nan_code(y, t) ? 0 : 1000;
  const auto ord = [](uint8_t c) { return (c & 0x80) ? -(c & 0x7F) : (c & 0x7F); };
  return std::abs(ord(x) - ord(y));
}

// Runs one case through the library (threads) and the reference; returns a
// description on mismatch, "" when equal (exact) or within tolerance.
std::string run_case(const Case& c, std::mt19937& rng, int threads) {
  const Shape out = ref::output_shape(c.a, c.b);
  Shape pa, pb;
  if (!param_shape(c.a_layout, true, c.a, &pa)) pa = {};
  if (!param_shape(c.b_layout, false, c.b, &pb)) pb = {};
  const auto ys = y_shapes(out);
  const Shape py = ys[static_cast<std::size_t>(c.y_layout) % ys.size()];
  Tensor a = random_operand(rng, c.a_type, c.a, c.exact), b = random_operand(rng, c.b_type, c.b, c.exact);
  Tensor a_zp = random_operand(rng, c.a_type, pa, c.exact), b_zp = random_operand(rng, c.b_type, pb, c.exact);
  Tensor y_zp = is_float8(c.y_type) ? random_float8(rng, c.y_type, py, true) : random_zero_point(rng, c.y_type, py);
  const double k = static_cast<double>(std::max<int64_t>(1, c.a.size() == 1 ? c.a[0] : c.a.back()));
  const auto [mean_a, rms_a] = moments(a, a_zp);
  const auto [mean_b, rms_b] = moments(b, b_zp);
  const double typical_c = std::sqrt(k) * rms_a * rms_b + k * std::fabs(mean_a * mean_b);
  const double target = c.target > 0 ? c.target : output_range(c.y_type) / 3;
  // m = a_scale * b_scale / y_scale ~ target / typical |C|, split so every
  // scale stays well inside float16's normal range.
  const double m = target / typical_c;
  const double r = std::clamp(std::sqrt(m), 1e-3, 1e3);
  Tensor as = random_scale(rng, c.scale_type, pa, static_cast<float>(r));
  Tensor bs = random_scale(rng, c.scale_type, pb, static_cast<float>(r));
  Tensor ysc = random_scale(rng, c.scale_type, py, static_cast<float>(r * r / m));
  Options opt;
  opt.threads = threads;
  opt.min_macs_per_thread = 0;  // every thread, however small the problem
  const Tensor got = qlinear_matmul(a, as, a_zp, b, bs, b_zp, ysc, y_zp, opt);
  const Tensor want = ref::qlinear_matmul(a, as, a_zp, b, bs, b_zp, ysc, y_zp);
  std::ostringstream os;
  os << "a=" << describe(a) << " a_zp=" << describe(a_zp) << " b=" << describe(b) << " b_zp=" << describe(b_zp)
     << " y_zp=" << describe(y_zp) << " scales=" << type_name(c.scale_type) << " exact=" << c.exact
     << " threads=" << threads;
  if (got.dims() != want.dims() || got.type() != want.type()) return os.str() + ": shape/type differ";
  const bool integer_inputs = !is_float8(c.a_type) && !is_float8(c.b_type);
  for (int64_t i = 0; i < got.size(); ++i) {
    const uint8_t g = got.data<uint8_t>()[i], w = want.data<uint8_t>()[i];
    int dist;
    if (is_float8(c.y_type)) {
      dist = code_distance(g, w, c.y_type);
    } else {
      const int gi = c.y_type == ET::Int8 ? int(int8_t(g)) : int(g), wi = c.y_type == ET::Int8 ? int(int8_t(w)) : int(w);
      dist = std::abs(gi - wi);
    }
    const int allowed = (c.exact || integer_inputs) ? 0 : 1;
    if (dist > allowed) {
      os << ": element " << i << " got 0x" << std::hex << int(g) << " want 0x" << int(w);
      return os.str();
    }
  }
  return "";
}

std::vector<std::pair<Shape, Shape>> shapes() {
  std::vector<std::pair<Shape, Shape>> s = {
      {{1, 1}, {1, 1}},     {{3, 5}, {5, 7}},        {{15, 16}, {16, 17}},  {{16, 31}, {31, 32}},
      {{17, 33}, {33, 15}}, {{31, 7}, {7, 33}},      {{33, 64}, {64, 129}}, {{9, 1000}, {1000, 35}},
      {{2, 700}, {700, 3}}, {{130, 300}, {300, 150}}, {{17}, {17, 33}},     {{5, 17}, {17}},
      {{65}, {65}},         {{2, 3, 9}, {9}},        {{5, 1, 4, 2}, {1, 3, 2, 3}}, {{4, 2}, {3, 2, 3}},
      {{2, 6, 19}, {2, 19, 35}}, {{2, 1, 5, 8}, {8, 17}}, {{0, 5}, {5, 3}}, {{4, 5}, {5, 0}},
      {{4, 0}, {0, 3}},     {{0}, {0}},              {{1, 257}, {257, 300}}};
  return s;
}

const Layout kLayouts[] = {Layout::Scalar, Layout::One, Layout::Vector, Layout::BatchedMatrix, Layout::Matrix11};
const ET kScaleTypes[] = {ET::Float32, ET::Float16, ET::BFloat16};

void sweep(bool exact, const std::vector<std::pair<ET, ET>>& inputs, int seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  int checked = 0;
  for (const auto& [ta, tb] : inputs)
    for (ET ty : kOutputTypes) {
      if (!is_float8(ta) && !is_float8(tb) && !is_float8(ty)) continue;  // the integer path's business
      const auto all = shapes();
      for (int rep = 0; rep < 3; ++rep) {
        const auto& [sa, sb] = all[rng() % all.size()];
        Case c{sa, sb, ta, tb, ty};
        c.scale_type = kScaleTypes[rng() % 3];
        c.a_layout = kLayouts[rng() % 5];
        c.b_layout = kLayouts[rng() % 5];
        c.y_layout = static_cast<int>(rng() % 5);
        c.exact = exact;
        if (rng() % 8 == 0) c.target = output_range(ty) / 200;  // small outputs: subnormal float8
        const std::string err = run_case(c, rng, 1 + static_cast<int>(rng() % 3));
        EXPECT_EQ(err, "");
        ++checked;
      }
    }
  EXPECT_GT(checked, 0);
}

std::vector<std::pair<ET, ET>> float8_pairs() {
  std::vector<std::pair<ET, ET>> p;
  for (ET a : kFloat8Types)
    for (ET b : kFloat8Types) p.push_back({a, b});
  return p;
}
std::vector<std::pair<ET, ET>> mixed_pairs() {
  std::vector<std::pair<ET, ET>> p;
  for (ET f : kFloat8Types)
    for (ET i : {ET::Int8, ET::Uint8}) {
      p.push_back({f, i});
      p.push_back({i, f});
    }
  return p;
}

TEST(Float8Operator, ExactFloat8PairsBitEqual) { sweep(true, float8_pairs(), 1); }
TEST(Float8Operator, ExactMixedIntegerFloat8BitEqual) { sweep(true, mixed_pairs(), 2); }
TEST(Float8Operator, IntegerInputsFloat8OutputBitEqual) {
  sweep(false, {{ET::Uint8, ET::Int8}, {ET::Int8, ET::Int8}, {ET::Uint8, ET::Uint8}, {ET::Int8, ET::Uint8}}, 3);
}
TEST(Float8Operator, RandomFloat8PairsWithinOneStep) { sweep(false, float8_pairs(), 4); }
TEST(Float8Operator, RandomMixedWithinOneStep) { sweep(false, mixed_pairs(), 5); }

TEST(Float8Operator, EveryShapeAndLayoutExact) {
  std::mt19937 rng(6);
  for (const auto& [sa, sb] : shapes())
    for (Layout la : kLayouts)
      for (int yl = 0; yl < 5; ++yl) {
        Case c{sa, sb, ET::Float8E4M3FN, ET::Float8E5M2, yl % 2 ? ET::Float8E4M3FN : ET::Int8};
        c.a_layout = la;
        c.b_layout = kLayouts[(static_cast<int>(la) + yl) % 5];
        c.y_layout = yl;
        c.exact = true;
        EXPECT_EQ(run_case(c, rng, 2), "");
      }
}

// Infinite and NaN inputs: outputs are NaN codes (float8) or 0 (integer) where
// the reference has them; finite elsewhere, within one step.
TEST(Float8Operator, SpecialValuesFollowReference) {
  std::mt19937 rng(8);
  for (ET t : kFloat8Types)
    for (ET ty : {ET::Float8E4M3FN, ET::Float8E5M2FNUZ, ET::Uint8}) {
      Tensor a = random_float8(rng, t, {7, 20}, false, false), b = random_float8(rng, t, {20, 19}, false, false);
      Tensor za = random_float8(rng, t, {}, true), zb = random_float8(rng, t, {}, true);
      Tensor zy = is_float8(ty) ? random_float8(rng, ty, {}, true) : Tensor(ty, {});
      const Tensor s = make_tensor<float>(ET::Float32, {}, {0.01f});
      const Tensor got = qlinear_matmul(a, s, za, b, s, zb, s, zy);
      const Tensor want = ref::qlinear_matmul(a, s, za, b, s, zb, s, zy);
      for (int64_t i = 0; i < got.size(); ++i) {
        const uint8_t g = got.data<uint8_t>()[i], w = want.data<uint8_t>()[i];
        const int dist = is_float8(ty) ? code_distance(g, w, ty) : std::abs(int(g) - int(w));
        EXPECT_LE(dist, 1) << type_name(t) << "->" << type_name(ty) << " element " << i;
      }
    }
}

// ---- determinism: threads and instruction sets ----

// A batched problem built directly for the internal entry points: 2 batches
// sharing one B, per-row a parameters, per-column b parameters, per-element y.
struct Built {
  int64_t M = 0, K = 0, N = 0;
  Tensor a, b;
  std::vector<float> za, zb, zy, as, bs, ys;
  std::vector<int64_t> a_index{0, 1}, b_index{0, 0}, zeros{0, 0}, a_off, y_off;
  gemm::Float8Problem problem(ET y_type, void* y, int threads) {
    gemm::Float8Problem p;
    p.M = M, p.K = K, p.N = N, p.batches = 2;
    p.a_index = a_index.data(), p.b_index = b_index.data();
    p.a = a.raw(), p.a_type = a.type(), p.b = b.raw(), p.b_type = b.type();
    a_off = {0, M};
    y_off = {0, M * N};
    p.a_zero_point = {za.data(), a_off.data(), 1, 0};
    p.a_scale = {as.data(), a_off.data(), 1, 0};
    p.b_zero_point = {zb.data(), zeros.data(), 0, 1};
    p.b_scale = {bs.data(), zeros.data(), 0, 1};
    p.y_zero_point = {zy.data(), y_off.data(), N, 1};
    p.y_scale = {ys.data(), y_off.data(), N, 1};
    p.y_type = y_type, p.y = y, p.threads = threads;
    p.bf16_exact = gemm::bf16_exact_operand(a.type(), za.data(), za.size()) &&
                   gemm::bf16_exact_operand(b.type(), zb.data(), zb.size());
    return p;
  }
};

// bf16: zero points of float8 operands 0 and of integer operands integers
// (every a_f, b_f exact in bfloat16, so the BF16 tiles run); otherwise
// arbitrary float32 zero points.
Built build(std::mt19937& rng, ET ta, ET tb, int64_t M, int64_t K, int64_t N, bool specials, bool bf16 = false) {
  Built bp;
  bp.M = M, bp.K = K, bp.N = N;
  bp.a = is_float8(ta) ? random_float8(rng, ta, {2, M, K}, false, !specials) : random_int8(rng, ta, {2, M, K}, 0);
  bp.b = is_float8(tb) ? random_float8(rng, tb, {K, N}, false, !specials) : random_int8(rng, tb, {K, N}, 0);
  std::uniform_real_distribution<float> u(-3, 3), pos(0.01f, 0.1f);
  // Zero points with many significant bits make a_f * b_f inexact in float32,
  // so a path that did not fuse (or reordered) the chain would show.
  for (int64_t i = 0; i < 2 * M; ++i) bp.za.push_back(u(rng)), bp.as.push_back(pos(rng));
  for (int64_t j = 0; j < N; ++j) bp.zb.push_back(u(rng)), bp.bs.push_back(pos(rng));
  for (int64_t e = 0; e < 2 * M * N; ++e) bp.zy.push_back(std::round(u(rng))), bp.ys.push_back(pos(rng) * 1e-3f);
  if (bf16) {
    const auto exact = [&](std::vector<float>& zp, ET t) {
      // Integer zero points within their type's range, as validation ensures.
      for (auto& z : zp) z = is_float8(t) ? 0.0f : std::round(z * 40.0f) + (t == ET::Uint8 ? 128.0f : 0.0f);
    };
    exact(bp.za, ta);
    exact(bp.zb, tb);
  }
  return bp;
}

std::vector<Float8Path> usable_paths() {
  std::vector<Float8Path> paths = {Float8Path::Portable};
  if (gemm::float8_avx512_usable()) paths.push_back(Float8Path::Avx512);
  if (gemm::float8_bf16_usable()) paths.push_back(Float8Path::Avx512Bf16);
  return paths;
}

TEST(Float8Determinism, PortableAndAvx512AcrossThreadsIdentical) {
  const std::vector<Float8Path> paths = usable_paths();
  std::mt19937 rng(9);
  const int64_t dims[][3] = {{1, 300, 200}, {5, 200, 100}, {8, 64, 32}, {9, 257, 129},
                             {33, 1000, 70}, {150, 40, 260}, {20, 300, 600}, {3, 0, 5}, {2, 10, 5000}};
  for (const auto& d : dims)
    for (auto [ta, tb] : {std::pair{ET::Float8E4M3FN, ET::Float8E4M3FN}, {ET::Float8E5M2, ET::Int8},
                          {ET::Uint8, ET::Float8E4M3FNUZ}, {ET::Float8E5M2FNUZ, ET::Float8E5M2}})
      for (bool specials : {false, true})
        for (ET ty : specials ? std::vector<ET>{ET::Float8E4M3FN, ET::Float8E5M2FNUZ, ET::Int8}
                              : std::vector<ET>{ET::Float8E4M3FNUZ, ET::Float8E5M2, ET::Uint8}) {
          Built bp = build(rng, ta, tb, d[0], d[1], d[2], specials);
          std::vector<uint8_t> first;
          for (Float8Path path : paths)
            for (int threads : {1, 2, 3}) {
              std::vector<uint8_t> y(static_cast<std::size_t>(2 * d[0] * d[2]), 0xCD);
              gemm::run_float8_gemm(bp.problem(ty, y.data(), threads), path);
              if (first.empty()) first = y;
              EXPECT_EQ(y, first) << type_name(ta) << "x" << type_name(tb) << "->" << type_name(ty) << " M=" << d[0]
                                  << " K=" << d[1] << " N=" << d[2] << " path=" << int(path) << " threads=" << threads;
            }
        }
}

// Problems whose operand values are all exact in bfloat16 (float8 zero
// points 0, integer zero points integers), which the BF16 tiles take: sizes
// around the 8-row tile, the 32-column panel, the 256-column block and the
// 256-deep chunk, odd K (a half-empty last pair), NaN and Inf codes.
TEST(Float8Determinism, Bf16ExactProblemsIdenticalOnEveryPath) {
  const std::vector<Float8Path> paths = usable_paths();
  std::mt19937 rng(11);
  const int64_t dims[][3] = {{9, 1, 33}, {9, 2, 31}, {16, 255, 64}, {17, 256, 257}, {23, 257, 100},
                             {40, 513, 70}, {130, 300, 290}, {12, 1001, 33}};
  for (const auto& d : dims)
    for (auto [ta, tb] : {std::pair{ET::Float8E4M3FN, ET::Float8E4M3FN}, {ET::Float8E5M2, ET::Float8E4M3FNUZ},
                          {ET::Uint8, ET::Float8E5M2FNUZ}, {ET::Float8E4M3FN, ET::Int8}})
      for (bool specials : {false, true}) {
        const ET ty = specials ? ET::Float8E5M2 : ET::Float8E4M3FN;
        Built bp = build(rng, ta, tb, d[0], d[1], d[2], specials, /*bf16=*/true);
        std::vector<uint8_t> first;
        for (Float8Path path : paths)
          for (int threads : {1, 2}) {
            std::vector<uint8_t> y(static_cast<std::size_t>(2 * d[0] * d[2]), 0xCD);
            auto problem = bp.problem(ty, y.data(), threads);
            ASSERT_TRUE(problem.bf16_exact);
            gemm::run_float8_gemm(problem, path);
            if (first.empty()) first = y;
            EXPECT_EQ(y, first) << type_name(ta) << "x" << type_name(tb) << " M=" << d[0] << " K=" << d[1]
                                << " N=" << d[2] << " specials=" << specials << " path=" << gemm::float8_path_name(path)
                                << " threads=" << threads;
          }
      }
}

TEST(Float8Determinism, Int32RequantizationPathsIdentical) {
  std::vector<Float8Path> paths = {Float8Path::Portable};
  if (gemm::float8_avx512_usable()) paths.push_back(Float8Path::Avx512);
  std::mt19937 rng(10);
  for (ET ty : kOutputTypes) {
    Built bp = build(rng, ET::Uint8, ET::Int8, 5, 3, 37, false);
    std::vector<int32_t> c(2 * 5 * 37);
    for (auto& v : c) v = static_cast<int32_t>(rng()) >> (rng() % 32);
    c[0] = std::numeric_limits<int32_t>::min(), c[1] = std::numeric_limits<int32_t>::max();
    std::vector<uint8_t> first;
    for (Float8Path path : paths)
      for (int threads : {1, 3}) {
        std::vector<uint8_t> y(c.size(), 0xCD);
        gemm::requantize_int32_to_float8(bp.problem(ty, y.data(), threads), c.data(), path);
        if (first.empty()) first = y;
        EXPECT_EQ(y, first) << type_name(ty) << " path " << int(path) << " threads " << threads;
      }
  }
}

TEST(Float8Determinism, PublicApiIdenticalAcrossThreads) {
  std::mt19937 rng(12);
  Tensor a = random_float8(rng, ET::Float8E4M3FN, {3, 67, 300}, false);
  Tensor b = random_float8(rng, ET::Float8E5M2, {300, 150}, false);
  Tensor za = random_float8(rng, ET::Float8E4M3FN, {67}, true), zb = random_float8(rng, ET::Float8E5M2, {150}, true);
  Tensor zy = random_float8(rng, ET::Float8E4M3FNUZ, {}, true);
  const Tensor s = make_tensor<float>(ET::Float32, {}, {0.05f});
  std::vector<uint8_t> first;
  for (int threads : {1, 2, 3}) {
    Options opt;
    opt.threads = threads;
    opt.min_macs_per_thread = 0;
    const Tensor y = qlinear_matmul(a, s, za, b, s, zb, s, zy, opt);
    std::vector<uint8_t> bytes(y.data<uint8_t>(), y.data<uint8_t>() + y.size());
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "threads " << threads;
  }
}

// ---- packed float8 weights ----

// PackedB of a float8 B gives the same bits as the plain tensor, with b zero
// points 0 (the prepacked bfloat16 panels serve the call where the CPU has
// them) and non-zero (the packed codes are decoded per call), for small and
// large M, a batched B, integer and float8 a, at 1 and 2 threads.
TEST(Float8Packed, SameBitsAsPlainTensor) {
  std::mt19937 rng(21);
  const Tensor s = make_tensor<float>(ET::Float32, {}, {0.05f});
  const int64_t dims[][3] = {{3, 300, 70}, {40, 515, 300}, {130, 64, 33}};
  for (const auto& d : dims)
    for (ET ta : {ET::Float8E4M3FN, ET::Uint8})
      for (ET tb : {ET::Float8E4M3FN, ET::Float8E5M2FNUZ})
        for (bool zero_zp : {true, false}) {
          const int64_t M = d[0], K = d[1], N = d[2];
          Tensor a = is_float8(ta) ? random_float8(rng, ta, {2, M, K}, false) : random_int8(rng, ta, {2, M, K}, 0);
          Tensor b = random_float8(rng, tb, {2, K, N}, false);
          Tensor za = is_float8(ta) ? Tensor(ta, {}) : make_tensor<uint8_t>(ta, {}, {131});
          Tensor zb = zero_zp ? Tensor(tb, {N}) : random_float8(rng, tb, {N}, true);
          Tensor zy = Tensor(ET::Float8E4M3FN, {});
          const PackedB packed = PackedB::pack(b);
          EXPECT_EQ(packed.type(), tb);
          for (int threads : {1, 2}) {
            Options opt;
            opt.threads = threads;
            opt.min_macs_per_thread = 0;
            const Tensor want = qlinear_matmul(a, s, za, b, s, zb, s, zy, opt);
            const Tensor got = qlinear_matmul(a, s, za, packed, s, zb, s, zy, opt);
            ASSERT_EQ(got.dims(), want.dims());
            EXPECT_EQ(0, std::memcmp(got.raw(), want.raw(), want.size()))
                << type_name(ta) << "x" << type_name(tb) << " M=" << M << " K=" << K << " N=" << N
                << " zero_zp=" << zero_zp << " threads=" << threads;
          }
        }
}

// ---- bad inputs ----

void expect_error(const std::function<void()>& call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one mentioning " << parts[0];
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(Float8Errors, MessagesNameOperatorAndInput) {
  const Tensor a(ET::Float8E4M3FN, {2, 3}), b(ET::Float8E5M2, {3, 4}), bi(ET::Int8, {3, 4});
  const Tensor s = make_tensor<float>(ET::Float32, {}, {0.5f});
  const Tensor za(ET::Float8E4M3FN, {}), zb(ET::Float8E5M2, {}), zy(ET::Float8E4M3FN, {});
  const Tensor u8(ET::Uint8, {}), i8(ET::Int8, {});
  expect_error([&] { qlinear_matmul(a, s, u8, b, s, zb, s, zy); },
               {"QLinearMatMul", "a_zero_point", "uint8", "float8e4m3fn"});
  expect_error([&] { qlinear_matmul(a, s, zb, b, s, zb, s, zy); },
               {"QLinearMatMul", "a_zero_point", "float8e5m2", "float8e4m3fn"});
  expect_error([&] { qlinear_matmul(a, s, za, b, s, za, s, zy); }, {"QLinearMatMul", "b_zero_point", "float8e5m2"});
  expect_error([&] { qlinear_matmul(a, s, za, bi, s, zb, s, zy); }, {"QLinearMatMul", "b_zero_point", "int8"});
  expect_error([&] { qlinear_matmul(a, s, za, b, s, Tensor(ET::Float8E5M2, {3}), s, zy); },
               {"QLinearMatMul", "b_zero_point", "[3]", "4 columns"});
  expect_error([&] { qlinear_matmul(a, make_tensor<float>(ET::Float32, {}, {0.0f}), za, b, s, zb, s, zy); },
               {"QLinearMatMul", "a_scale", "non-zero"});
  expect_error([&] { matmul_integer(a, bi, std::nullopt, std::nullopt); }, {"MatMulInteger", "A", "float8e4m3fn"});
  expect_error([&] { matmul_integer(Tensor(ET::Uint8, {2, 3}), b, std::nullopt, std::nullopt); },
               {"MatMulInteger", "B", "float8e5m2"});
  Options v10;
  v10.qlinear_opset = 10;
  expect_error([&] { qlinear_matmul(Tensor(ET::Uint8, {2, 3}), s, u8, b, s, zb, s, u8, v10); },
               {"QLinearMatMul", "b", "float8e5m2", "opset 21"});
  expect_error([&] { qlinear_matmul(Tensor(ET::Uint8, {2, 3}), s, u8, bi, s, i8, s, zy, v10); },
               {"QLinearMatMul", "y_zero_point", "float8e4m3fn"});
  Tensor y(ET::Uint8, {2, 4});
  expect_error([&] { qlinear_matmul(a, s, za, b, s, zb, s, zy, y.mutable_view()); },
               {"QLinearMatMul", "output y", "uint8", "float8e4m3fn"});
  const PackedB packed = PackedB::pack(bi);
  Tensor y8(ET::Float8E4M3FN, {2, 4});
  expect_error([&] { qlinear_matmul(a, s, za, packed, s, i8, s, zy, y8.mutable_view()); },
               {"QLinearMatMul", "PackedB", "float8e4m3fn"});
}

}  // namespace
}  // namespace qmatmul::testing
