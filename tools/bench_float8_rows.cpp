// The float8 rows of `qmatmul bench` (QLinearMatMul-21, e4m3fn x e4m3fn ->
// e4m3fn): finite random codes with their float32 values, per-tensor scales
// that put a typical |y| near 32, a check that packed B gives plain B's
// bytes, and the timed row next to oneDNN's float32 matmul on the decoded
// values (oneDNN 2.x has no float8 matmul), whose sums are requantized the
// same way and compared in output steps.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>

#include "bench_rows.h"
#include "reference/reference.h"

namespace qmatmul::cli {
namespace {

using bench::BenchShape;
using bench::Row;
using bench::Side;

// Per-tensor float32 scales putting a typical |y| near 32 (well inside
// e4m3fn's +-448), and zero points 0 (float8 zeros).
struct Float8Quant {
  Tensor as, bs, ys, azp, bzp, yzp;
  float multiplier = 0;  // f32(f32(a_scale * b_scale) / y_scale), as SEMANTICS.md §4
};

Float8Quant float8_quant(const OpInfo& op, const BenchShape& s, const Float8Data& d) {
  const float a_scale = 0.02f, b_scale = 0.005f;
  const float y_scale = static_cast<float>(double(a_scale) * b_scale * std::sqrt(double(s.k)) * d.rms_a * d.rms_b / 32);
  Float8Quant q;
  q.as = scalar(ElementType::Float32, a_scale);
  q.bs = scalar(ElementType::Float32, b_scale);
  q.ys = scalar(ElementType::Float32, y_scale);
  q.azp = scalar(op.a, op.a_zero_point);
  q.bzp = scalar(op.b, 0);
  q.yzp = scalar(op.y, op.y_zero_point);
  const volatile float ab = a_scale * b_scale;  // two float32 roundings, never fused
  q.multiplier = ab / y_scale;
  return q;
}

// Steps between two codes of a float8 type without NaN codes in play
// (sign-magnitude codes mapped onto a line; +0 and -0 coincide).
int float8_steps(uint8_t x, uint8_t y) {
  const auto line = [](uint8_t c) { return (c & 0x80) ? -(c & 0x7F) : (c & 0x7F); };
  return std::abs(line(x) - line(y));
}

}  // namespace

Float8Data float8_data(std::mt19937& rng, const OpInfo& op, const BenchShape& s) {
  Float8Data d;
  auto fill = [&](ElementType type, int64_t count, std::vector<uint8_t>& codes, std::vector<float>& values) {
    float table[256];
    std::vector<uint8_t> finite;
    for (int c = 0; c < 256; ++c) {
      table[c] = reference::float8_to_float(static_cast<uint8_t>(c), type);
      if (std::isfinite(table[c])) finite.push_back(static_cast<uint8_t>(c));
    }
    std::uniform_int_distribution<std::size_t> pick(0, finite.size() - 1);
    codes.resize(static_cast<std::size_t>(count));
    values.resize(codes.size());
    double sum2 = 0;
    for (std::size_t i = 0; i < codes.size(); ++i) {
      codes[i] = finite[pick(rng)];
      values[i] = table[codes[i]];
      sum2 += double(values[i]) * double(values[i]);
    }
    return std::max(1e-30, std::sqrt(sum2 / double(count)));
  };
  d.rms_a = fill(op.a, s.a_size(), d.a, d.a_f32);
  d.rms_b = fill(op.b, s.b_size(), d.b, d.b_f32);
  return d;
}

bool probe_float8_packed(const OpInfo& op, const BenchShape& s, const Float8Data& d, int threads,
                         std::optional<bool>& verified, std::string& rejection) {
  omp_set_num_threads(threads);
  Options opt;
  opt.threads = threads;
  const TensorView av{op.a, s.a_dims(), d.a.data()}, bv{op.b, s.b_dims(), d.b.data()};
  const Float8Quant q = float8_quant(op, s, d);
  Tensor plain(op.y, s.y_dims()), packed(op.y, s.y_dims());
  try {
    const PackedB pb = PackedB::pack(bv, opt);
    qlinear_matmul(av, q.as, q.azp, pb, q.bs, q.bzp, q.ys, q.yzp, packed.mutable_view(), opt);
  } catch (const Error& e) {
    rejection = e.what();
    return false;
  }
  qlinear_matmul(av, q.as, q.azp, bv, q.bs, q.bzp, q.ys, q.yzp, plain.mutable_view(), opt);
  verified = std::memcmp(plain.raw(), packed.raw(), plain.byte_size()) == 0;
  if (!*verified) {
    std::cerr << "warning: " << s.label() << ": " << op.name << " with packed B differs from plain B\n";
  }
  return true;
}

Row bench_float8_row(const OpInfo& op, const BenchShape& s, int threads, bool packed, const Float8Data& data,
                     bool use_onednn, const BenchArgs& args) {
  omp_set_num_threads(threads);
  Options opt;
  opt.threads = threads;
  const TensorView av{op.a, s.a_dims(), data.a.data()}, bv{op.b, s.b_dims(), data.b.data()};
  const Float8Quant fq = float8_quant(op, s, data);
  Tensor yq(op.y, s.y_dims());
  const PackedB pb = packed ? PackedB::pack(bv, opt) : PackedB();
  auto call = [&](const auto& bop) {
    qlinear_matmul(av, fq.as, fq.azp, bop, fq.bs, fq.bzp, fq.ys, fq.yzp, yq.mutable_view(), opt);
  };
  Side q = side_with_b(packed, call, pb, bv);

  // oneDNN's float32 matmul on the decoded values, weights packed the same way.
  std::optional<bench::OnednnMatmul> dnn;
  std::vector<float> yd(static_cast<std::size_t>(s.y_size()));
  if (use_onednn) dnn.emplace(op.onednn, s, data.b_f32.data(), packed);
  Side d{[&] { dnn->run(data.a_f32.data(), yd.data()); }};

  std::vector<Side*> sides{&q};
  if (dnn) sides.push_back(&d);
  bench::measure(sides, args.min_time, args.min_reps);

  Row r = timed_row(op, s, threads, packed, q, dnn ? &d : nullptr, dnn ? dnn->impl_name() : "", args);
  if (dnn) {  // oneDNN's float32 sums requantized as qmatmul does (zero points 0), compared in steps
    int worst = 0;
    for (std::size_t i = 0; i < yd.size(); ++i) {
      const uint8_t theirs = reference::float8_from_double(double(yd[i]) * double(fq.multiplier), op.y);
      worst = std::max(worst, float8_steps(yq.data<uint8_t>()[i], theirs));
    }
    r.max_diff = worst;
  }
  return r;
}

}  // namespace qmatmul::cli
