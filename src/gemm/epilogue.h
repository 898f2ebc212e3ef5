// The epilogue: turns one tile of raw kernel sums into final output values.
// It applies the zero-point terms (zero_point.h) and then either stores int32
// (MatMulInteger) or requantizes (QLinearMatMul, SEMANTICS.md §4): the
// multiplier m = f32(f32(a_scale * b_scale) / y_scale), v = double(C) *
// double(m) + double(y_zero_point), rounded half to even, saturated; or the
// ONNX Runtime compatible float32 form. Runs right after the kernel, on a
// tile still in L1.
#pragma once

#include <cstdint>

#include "gemm/problem.h"

namespace qmatmul::gemm {

struct Tile {
  int64_t batch;      // output batch
  int64_t i0, j0;     // first row / column of the tile in the output matrix
  int rows, cols;     // valid extent (<= MR, NR)
  // The sums are already final C: the kernel added the panel's column term
  // (its col_init), which is the whole correction. The driver sets it only
  // when the panel's parameters are row-invariant with every zb' = 0
  // (PanelParams::row_invariant, zb_zero); the epilogue then requantizes or
  // stores acc as it is.
  bool final_sums = false;
};

// Requantization may fuse v = C * m + y_zero_point into one float64 FMA when
// the product C * m is exact, because then one rounding of the exact sum is
// what SEMANTICS.md §4's two roundings give (the first one changes nothing).
// m is a float32 (24-bit significand), so C * m is exact in float64 (53 bits)
// when |C| < 2^29. |C| = |sum_k (a - za)(b - zb)| <= K * 255 * 255 for any
// int8 / uint8 values and zero points of their type, which stays below 2^29
// up to K = 8256 (8256 * 65025 = 536,846,400 < 536,870,912).
inline constexpr int64_t kMaxKExactRequantProduct = 8256;
inline bool requant_product_exact(int64_t K) { return K <= kMaxKExactRequantProduct; }

// What the epilogue needs for one panel's columns and does not change along
// its rows, prepared once per (output batch, panel) by prepare_panel and
// shared by the panel's row tiles; the vectorized epilogues' whole-tile paths
// read it instead of rebuilding it for every tile (about a third of a
// requantizing tile's epilogue).
inline constexpr int kPanelMaxCols = 32;
struct PanelParams {
  // Every parameter is the same for all rows of the batch (a_zero_point,
  // and for QLinearMatMul a_scale, y_scale, y_zero_point: per tensor, per
  // column or per batch) and the panel has at most kPanelMaxCols columns.
  // Only then are the fields below set; lanes past the panel's columns are 0.
  bool row_invariant = false;
  // QLinearMatMul in the default rounding, every multiplier finite: m and
  // y_zero_point are set (see requant in the epilogues).
  bool finite_multipliers = false;
  // Also every |m| <= 0.5: then |C * m + y_zero_point| < 2^31, so the value
  // can be rounded to int32 first and saturated in integers (the bounds are
  // integers, so clamping after rounding equals clamping before).
  bool bounded_multipliers = false;
  int32_t za = 0;                                // za'
  bool zb_zero = false;                          // zb'[j] = 0 for every column
  alignas(64) int32_t zb[kPanelMaxCols];         // zb'[j]
  // zero_point_column_term: -za' * colsum(b')[j]. With zb_zero it is the
  // whole MatMulInteger correction, which the kernel adds itself (its
  // col_init) to store final values directly.
  alignas(64) int32_t column_term[kPanelMaxCols];
  alignas(64) double m[kPanelMaxCols];           // f32(f32(a_scale * b_scale[j]) / y_scale[j])
  alignas(64) double y_zero_point[kPanelMaxCols];
  // prepare_panel's memo: when no parameter varies along the columns
  // (params_shared_by_columns), everything above but column_term is the
  // same for every panel of a batch with the same column count, so a panel
  // of batch `memo_batch` with `memo_cols` columns only recomputes
  // column_term. -1: nothing memoised. And when no parameter varies by
  // batch either (params_shared_by_batches: none given per batch), the memo
  // serves a panel of any batch: a batched call over small matrices (64
  // batches of 8 x 64 x 64: 11% of the time in preparing panels) then
  // prepares once per thread.
  int64_t memo_batch = -1;
  int memo_cols = 0;
  bool memo_every_batch = false;
};

// True when no parameter of the call varies along the columns (zb', and
// for QLinearMatMul the b and y scales and the y zero point, per tensor or
// per batch): then prepare_panel costs one column term per panel after the
// first, and the driver prepares every panel, however few its row tiles.
bool params_shared_by_columns(const GemmProblem& p);

// True when no parameter of the call varies by output batch: every one is
// the same for all batches (per tensor, per row or per column).
bool params_shared_by_batches(const GemmProblem& p);

// Fills `out` for columns [j0, j0 + cols) of output batch `batch`. Pass the
// same `out` panel after panel: it keeps what the next panel can reuse.
// same_every_batch is params_shared_by_batches(p), which the caller works
// out once per call (it reads every batch's offsets).
void prepare_panel(const GemmProblem& p, int64_t batch, int64_t j0, int cols, const int32_t* col_sums,
                   bool same_every_batch, PanelParams& out);

// `acc` holds rows x cols raw sums with row stride `ld`; `row_sums` the A'
// row sums of the tile's rows, `col_sums` the B' column sums of its columns;
// `panel` the prepared parameters of the tile's panel (prepare_panel).
void finish_tile(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                 const int32_t* row_sums, const int32_t* col_sums, const PanelParams& panel);

using TileEpilogueFn = void (*)(const GemmProblem& p, const Tile& t, const int32_t* acc, int64_t ld,
                                const int32_t* row_sums, const int32_t* col_sums, const PanelParams& panel);

// The same epilogue vectorized for AVX-512 (src/gemm/x86/epilogue_avx512.cpp);
// nullptr when that file was built without AVX-512.
TileEpilogueFn tile_epilogue_avx512();
// The same in AVX2 (src/gemm/x86/epilogue_avx2.cpp), for the AVX2 and
// AVX-VNNI kernels; nullptr when built without AVX2.
TileEpilogueFn tile_epilogue_avx2();

// The epilogue to pair with a kernel: the vectorized one when the kernel's
// instruction set implies its instructions, else the portable finish_tile.
TileEpilogueFn tile_epilogue_for(const kernels::Int8GemmKernel& kernel);

// One requantized value, exactly as SEMANTICS.md §4 (exposed for the tests
// of the fast paths' epilogues).
int32_t requantize(int32_t c, float a_scale, float b_scale, float y_scale, int32_t y_zero_point,
                   int32_t lo, int32_t hi, Requantization mode);

}  // namespace qmatmul::gemm
