// Timing and reporting of `qmatmul bench` rows. A Side is one contender's
// call (qmatmul or oneDNN) and its samples; measure() warms the sides up and
// samples them round-robin. A Row is one measured (op, shape, threads,
// packed) combination, printed as an aligned table line (Column widths set
// by the caller) or as one JSON object.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench_shapes.h"

namespace qmatmul::bench {

// ---- timing -------------------------------------------------------------

struct Side {
  explicit Side(std::function<void()> f) : fn(std::move(f)) {}
  std::function<void()> fn;
  int64_t batch = 1;            // calls per sample
  std::vector<double> samples;  // seconds per call
  double total = 0;
  double median() const;  // seconds per call; needs a sample
};

// Warms every side up, then takes samples round-robin (so drift hits all
// sides alike) until each has run >= min_time seconds and >= min_reps samples.
void measure(std::vector<Side*> sides, double min_time, int min_reps);

// ---- output -------------------------------------------------------------

struct Row {
  std::string op, kernel;
  BenchShape shape{};
  int threads = 1;
  bool packed = false;
  double ms = 0, gops = 0;
  std::optional<double> peak_pct;            // int8 ops only: no float peak is configured
  std::optional<double> peak_gops_per_core;  // the int8 peak per core that peak_pct is of
  int reps = 0;
  std::optional<double> onednn_ms, onednn_gops, ratio;
  std::optional<int> max_diff;  // requantized outputs vs oneDNN
  // QLinear int8 rows: MatMulInteger on the same operands (same A, B, zero
  // points and threads, int32 output), timed in the same interleaved loop,
  // and fusion_cost = QLinear's median time / MatMulInteger's: what the
  // requantization adds to the product (Deliver 7 of the engine: <= 1.05).
  std::optional<double> matmulinteger_gops, fusion_cost;
  std::string onednn_impl;
  // verified: qmatmul's result equals the reference (int8: its MatMulInteger
  // on the shape's data, plain and packed B, on the checked rows; float8:
  // packed B gives plain B's bytes). onednn_exact: oneDNN's s32 matmul on
  // the same data equals the reference (int8 rows; false on CPUs where its
  // int16 intermediate saturates).
  std::optional<bool> verified, onednn_exact;
};

// The row as one JSON object (no trailing newline); absent values are null.
std::string json_row(const Row& r);

struct Column {
  const char* title;
  int width;
  bool left;
};

// `cells` (one per column) padded to the column widths, two spaces apart,
// trailing blanks removed.
std::string table_line(const std::vector<Column>& cols, const std::vector<std::string>& cells);

// The row's table cells, in the column order of `qmatmul bench`'s table;
// absent values are "-".
std::vector<std::string> table_cells(const Row& r);

}  // namespace qmatmul::bench
