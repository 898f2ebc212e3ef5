// The shapes `qmatmul bench` measures: parsed from a shapes file (bench/
// shapes.txt, compiled in, by default), whose "[name,...]" section headers
// give the shapes after them to the ops or op groups (int8, float8, all) they
// name, or from an MxKxN list that every op runs. A shape listed twice runs
// once, for the union of its sections' ops; shapes keep the order in which
// they first appear. A shape of four numbers, "B M K N" (BxMxKxN), is a
// batched product: B independent problems, each with its own A [M,K] and its
// own B [K,N], as the two operands of an attention score or context product.
// Every error names the file and line (or the --shapes item) and throws
// qmatmul::Error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qmatmul::bench {

// One matmul problem: A [m,k] x B [k,n], or `batches` of them at once
// (A [batches,m,k] x B [batches,k,n], a weight matrix per batch).
struct BenchShape {
  int64_t m, k, n;
  int64_t batches = 1;

  // 2 * batches * M * K * N, the operations GOPS counts.
  double ops() const { return 2.0 * double(batches) * double(m) * double(k) * double(n); }
  std::vector<int64_t> a_dims() const { return batched({m, k}); }
  std::vector<int64_t> b_dims() const { return batched({k, n}); }
  std::vector<int64_t> y_dims() const { return batched({m, n}); }
  int64_t a_size() const { return batches * m * k; }
  int64_t b_size() const { return batches * k * n; }
  int64_t y_size() const { return batches * m * n; }
  // "16x4096x4096", or "12x197x64x197" when batched.
  std::string label() const;

 private:
  std::vector<int64_t> batched(std::vector<int64_t> matrix) const {
    if (batches != 1) matrix.insert(matrix.begin(), batches);
    return matrix;
  }
};

// A shape and the ops it runs for: op names and groups; empty = every op.
struct ShapeEntry {
  BenchShape shape;
  std::vector<std::string> selectors;
};

// Whether `e` runs for the op named `op_name` in group `op_group`.
bool runs_op(const ShapeEntry& e, std::string_view op_name, std::string_view op_group);

// "M K N" or "B M K N" lines (or MxKxN, BxMxKxN), '#' comments, blank
// lines ignored, "[...]" section headers naming entries of `op_names` or the
// groups int8, float8, all. `origin` (a path) prefixes error messages.
std::vector<ShapeEntry> parse_shape_lines(const std::string& text, const std::string& origin,
                                          const std::vector<std::string>& op_names);

// "1x4096x4096,16x4096x4096" (an item may be BxMxKxN): every op runs every
// shape.
std::vector<ShapeEntry> parse_shape_list(const std::string& list);

// The --shapes argument: empty for the compiled-in bench/shapes.txt, an
// existing file's path, or an MxKxN list.
std::vector<ShapeEntry> load_shapes(const std::string& arg, const std::vector<std::string>& op_names);

}  // namespace qmatmul::bench
