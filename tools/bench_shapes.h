// The shapes `qmatmul bench` measures: parsed from a shapes file (bench/
// shapes.txt, compiled in, by default), whose "[name,...]" section headers
// give the shapes after them to the ops or op groups (int8, float8, all) they
// name, or from an MxKxN list that every op runs. A shape listed twice runs
// once, for the union of its sections' ops; shapes keep the order in which
// they first appear. Every error names the file and line (or the --shapes
// item) and throws qmatmul::Error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qmatmul::bench {

// One matmul problem: A [m,k] x B [k,n].
struct BenchShape {
  int64_t m, k, n;
};

// A shape and the ops it runs for: op names and groups; empty = every op.
struct ShapeEntry {
  BenchShape shape;
  std::vector<std::string> selectors;
};

// Whether `e` runs for the op named `op_name` in group `op_group`.
bool runs_op(const ShapeEntry& e, std::string_view op_name, std::string_view op_group);

// "M K N" lines (or MxKxN), '#' comments, blank lines ignored, "[...]"
// section headers naming entries of `op_names` or the groups int8, float8,
// all. `origin` (a path) prefixes error messages.
std::vector<ShapeEntry> parse_shape_lines(const std::string& text, const std::string& origin,
                                          const std::vector<std::string>& op_names);

// "1x4096x4096,16x4096x4096": every op runs every shape.
std::vector<ShapeEntry> parse_shape_list(const std::string& list);

// The --shapes argument: empty for the compiled-in bench/shapes.txt, an
// existing file's path, or an MxKxN list.
std::vector<ShapeEntry> load_shapes(const std::string& arg, const std::vector<std::string>& op_names);

}  // namespace qmatmul::bench
