// Portable epilogue: zero-point terms, then int32 store or requantization;
// and prepare_panel, the per-panel parameters the vectorized epilogues share
// across a panel's row tiles.
// Rounding uses the 1.5 * 2^52 trick on a value already clamped to the output
// range, which is round-half-to-even under the default rounding mode and
// exact because every clamped value is far below 2^51.
#include "gemm/epilogue.h"

#include <algorithm>
#include <cstring>

#include "gemm/zero_point.h"

namespace qmatmul::gemm {
namespace {

constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 * 2^52

inline double round_half_even(double v) { return (v + kRoundMagic) - kRoundMagic; }

inline float multiplier(float a_scale, float b_scale, float y_scale) {
  const float ab = a_scale * b_scale;  // first float32 rounding
  return ab / y_scale;                 // second float32 rounding
}

}  // namespace

int32_t requantize(int32_t c, float a_scale, float b_scale, float y_scale, int32_t y_zero_point,
                   int32_t lo, int32_t hi, Requantization mode) {
  const float m = multiplier(a_scale, b_scale, y_scale);
  if (mode == Requantization::OnnxReference) {
    double v = static_cast<double>(c) * static_cast<double>(m) + static_cast<double>(y_zero_point);
    if (v != v) v = 0.0;  // NaN (only from an infinite multiplier): SEMANTICS.md §5 rule
    v = std::clamp(v, static_cast<double>(lo), static_cast<double>(hi));
    return static_cast<int32_t>(round_half_even(v));
  }
  // ONNX Runtime: y = sat(rne(f32(f32(C) * m)) + y_zero_point).
  float f = static_cast<float>(c) * m;
  if (f != f) f = 0.0f;
  double r = std::clamp(static_cast<double>(f), -1024.0, 1024.0);  // beyond any result range
  r = round_half_even(r) + static_cast<double>(y_zero_point);
  return static_cast<int32_t>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
}

namespace {

// Columns [j0, j0 + cols) of a parameter row (row 0: prepare_panel only
// serves parameters that do not vary by row) into `out`, zero-filled to
// kPanelMaxCols, so that the loops below have a fixed trip count and vectorize.
template <typename T>
void panel_row(const ParamSpan<T>& p, int64_t batch, int64_t j0, int cols, T (&out)[kPanelMaxCols]) {
  const T* first = p.at(batch, 0, j0);
  if (p.col_stride == 0) {  // one value for every column: the common per-tensor case
    const T value = *first;
    for (int j = 0; j < kPanelMaxCols; ++j) out[j] = j < cols ? value : T(0);
  } else {
    for (int j = 0; j < kPanelMaxCols; ++j) out[j] = j < cols ? first[j * p.col_stride] : T(0);
  }
}

}  // namespace

bool params_shared_by_columns(const GemmProblem& p) {
  return p.b_zero_point.col_stride == 0 &&
         (p.output == OutputKind::Int32 ||
          (p.b_scale.col_stride == 0 && p.y_scale.col_stride == 0 && p.y_zero_point.col_stride == 0));
}

namespace {

// Whether a parameter has the same values in every output batch.
template <typename T>
bool same_in_every_batch(const ParamSpan<T>& s, int64_t batches) {
  if (s.data == nullptr || s.batch_offset == nullptr) return true;
  for (int64_t b = 1; b < batches; ++b)
    if (s.batch_offset[b] != s.batch_offset[0]) return false;
  return true;
}

}  // namespace

bool params_shared_by_batches(const GemmProblem& p) {
  return same_in_every_batch(p.a_zero_point, p.batches) && same_in_every_batch(p.b_zero_point, p.batches) &&
         (p.output == OutputKind::Int32 ||
          (same_in_every_batch(p.a_scale, p.batches) && same_in_every_batch(p.b_scale, p.batches) &&
           same_in_every_batch(p.y_scale, p.batches) && same_in_every_batch(p.y_zero_point, p.batches)));
}

namespace {

// out.column_term from the panel's column sums and out.za; 0 past `cols`.
// A whole panel takes the branch-free loop, which the compiler vectorizes:
// the scalar form cost 11% of 64 batches of 8 x 64 x 64.
void set_column_terms(const int32_t* __restrict col_sums, int cols, PanelParams& out) {
  const int32_t za = out.za;
  int32_t* __restrict term = out.column_term;
  if (cols == kPanelMaxCols) {
    for (int j = 0; j < kPanelMaxCols; ++j) term[j] = zero_point_column_term(col_sums[j], za);
    return;
  }
  for (int j = 0; j < kPanelMaxCols; ++j) term[j] = j < cols ? zero_point_column_term(col_sums[j], za) : 0;
}

void prepare_panel_fully(const GemmProblem& p, int64_t batch, int64_t j0, int cols, const int32_t* col_sums,
                         PanelParams& out) {
  const bool integer = p.output == OutputKind::Int32;
  out.row_invariant = cols <= kPanelMaxCols && p.a_zero_point.row_stride == 0 &&
                      (integer || (p.a_scale.row_stride == 0 && p.y_scale.row_stride == 0 &&
                                   p.y_zero_point.row_stride == 0));
  out.finite_multipliers = out.bounded_multipliers = false;
  if (!out.row_invariant) return;
  out.za = *p.a_zero_point.at(batch, 0, 0);
  panel_row(p.b_zero_point, batch, j0, cols, out.zb);
  int32_t any_zb = 0;
  for (int j = 0; j < kPanelMaxCols; ++j) any_zb |= out.zb[j];
  out.zb_zero = any_zb == 0;
  set_column_terms(col_sums, cols, out);
  if (integer || p.requantization != Requantization::OnnxReference) return;
  float bs[kPanelMaxCols], ys[kPanelMaxCols], m[kPanelMaxCols];
  int32_t yz[kPanelMaxCols];
  panel_row(p.b_scale, batch, j0, cols, bs);
  panel_row(p.y_scale, batch, j0, cols, ys);
  panel_row(p.y_zero_point, batch, j0, cols, yz);
  const float as = *p.a_scale.at(batch, 0, 0);
  for (int j = 0; j < kPanelMaxCols; ++j) m[j] = multiplier(as, bs[j], j < cols ? ys[j] : 1.0f);
  uint32_t non_finite = 0;  // any lane with an all-ones exponent (Inf or NaN)
  uint32_t above_half = 0;  // any lane with |m| > 0.5 (NaN included)
  for (int j = 0; j < kPanelMaxCols; ++j) {
    uint32_t bits;
    std::memcpy(&bits, &m[j], sizeof bits);
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    above_half |= static_cast<uint32_t>((bits & 0x7fffffffu) > 0x3f000000u);  // 0x3f000000: 0.5f
    out.m[j] = static_cast<double>(m[j]);
    out.y_zero_point[j] = static_cast<double>(yz[j]);
  }
  out.finite_multipliers = non_finite == 0;
  out.bounded_multipliers = out.finite_multipliers && above_half == 0;
}

}  // namespace

void prepare_panel(const GemmProblem& p, int64_t batch, int64_t j0, int cols, const int32_t* col_sums,
                   bool same_every_batch, PanelParams& out) {
  if (out.memo_cols == cols && (out.memo_batch == batch || out.memo_every_batch)) {  // only the column sums differ
    set_column_terms(col_sums, cols, out);
    return;
  }
  prepare_panel_fully(p, batch, j0, cols, col_sums, out);
  const bool memo = out.row_invariant && params_shared_by_columns(p);
  out.memo_batch = memo ? batch : -1;
  out.memo_cols = memo ? cols : 0;
  out.memo_every_batch = memo && same_every_batch;
}

void finish_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                 const int32_t* row_sums, const int32_t* col_sums, const PanelParams& /*panel: not used here*/) {
  const int64_t ldy = p.N;
  int32_t za[256], zb[256];
  for (int i = 0; i < t.rows; ++i) za[i] = *p.a_zero_point.at(t.batch, t.i0 + i, 0);
  for (int j = 0; j < t.cols; ++j) zb[j] = *p.b_zero_point.at(t.batch, 0, t.j0 + j);
  const std::size_t first = static_cast<std::size_t>((t.batch * p.M + t.i0) * ldy + t.j0);
  const auto corrected = [&](int i, int j) {
    return t.final_sums ? acc[i * ld + j] : apply_zero_points(acc[i * ld + j], row_sums[i], col_sums[j], za[i], zb[j], p.K);
  };

  if (p.output == OutputKind::Int32) {
    int32_t* y = static_cast<int32_t*>(p.y) + first;
    for (int i = 0; i < t.rows; ++i)
      for (int j = 0; j < t.cols; ++j) y[i * ldy + j] = corrected(i, j);
    return;
  }

  const bool is_u8 = p.output == OutputKind::Uint8;
  const int32_t lo = is_u8 ? 0 : -128, hi = is_u8 ? 255 : 127;
  float bs[256];
  for (int j = 0; j < t.cols; ++j) bs[j] = *p.b_scale.at(t.batch, 0, t.j0 + j);
  for (int i = 0; i < t.rows; ++i) {
    const float as = *p.a_scale.at(t.batch, t.i0 + i, 0);
    const float* ys = p.y_scale.at(t.batch, t.i0 + i, t.j0);
    const int32_t* yz = p.y_zero_point.at(t.batch, t.i0 + i, t.j0);
    for (int j = 0; j < t.cols; ++j) {
      const int32_t c = corrected(i, j);
      const int32_t v = requantize(c, as, bs[j], ys[j * p.y_scale.col_stride],
                                   yz[j * p.y_zero_point.col_stride], lo, hi, p.requantization);
      if (is_u8)
        static_cast<uint8_t*>(p.y)[first + static_cast<std::size_t>(i * ldy + j)] = static_cast<uint8_t>(v);
      else
        static_cast<int8_t*>(p.y)[first + static_cast<std::size_t>(i * ldy + j)] = static_cast<int8_t>(v);
    }
  }
}

TileEpilogueFn tile_epilogue_for(const kernels::Int8GemmKernel& kernel) {
  if (kernels::is_avx512vnni_family(kernel.isa))
    if (TileEpilogueFn f = tile_epilogue_avx512()) return f;
  if (kernels::is_avx2_family(kernel.isa))
    if (TileEpilogueFn f = tile_epilogue_avx2()) return f;
  return finish_tile;
}

}  // namespace qmatmul::gemm
