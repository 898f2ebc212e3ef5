// Parsing of `qmatmul bench`'s shapes (see bench_shapes.h): the shapes file
// with its [section] headers, the MxKxN (or BxMxKxN) list of --shapes, and
// the checks that keep every dimension and operand within what the benchmark
// allocates.
#include "bench_shapes.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "default_shapes.h"  // generated from bench/shapes.txt (tools/CMakeLists.txt)
#include "qmatmul/types.h"

namespace qmatmul::bench {
namespace {

// The op groups a section header may name besides op names (each op of
// cmd_bench.cpp's table is in int8 or float8).
const char* const kGroups[] = {"int8", "float8", "all"};

BenchShape checked_shape(const std::vector<int64_t>& d, const std::string& where) {
  constexpr int64_t kMaxDim = int64_t{1} << 24, kMaxElements = int64_t{1} << 31;
  for (int64_t v : d) {
    if (v < 1 || v > kMaxDim) throw Error(where + ": dimensions must be in 1.." + std::to_string(kMaxDim));
  }
  BenchShape s{d[d.size() - 3], d[d.size() - 2], d[d.size() - 1]};
  if (d.size() == 4) s.batches = d[0];
  // Each factor is at most 2^24, so a product of two fits; the third is
  // checked by division.
  for (int64_t matrix : {s.m * s.k, s.k * s.n, s.m * s.n}) {
    if (matrix > kMaxElements / s.batches) {
      throw Error(where + ": shape too large for the benchmark (an operand over 2^31 elements)");
    }
  }
  return s;
}

bool parse_int(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 12) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  out = std::stoll(text);
  return true;
}

// "M K N" or "B M K N" as numbers, or nullopt unless there are three or four
// of them, each a plain positive decimal.
std::optional<std::vector<int64_t>> parse_dims(const std::vector<std::string>& words) {
  if (words.size() != 3 && words.size() != 4) return std::nullopt;
  std::vector<int64_t> d(words.size());
  for (std::size_t i = 0; i < words.size(); ++i)
    if (!parse_int(words[i], d[i])) return std::nullopt;
  return d;
}

// Adds a shape in order of first appearance; a shape seen again (in another
// section) runs once, for the union of the ops of its sections.
void add_shape(std::vector<ShapeEntry>& entries, const BenchShape& s, const std::vector<std::string>& selectors) {
  for (ShapeEntry& e : entries) {
    if (e.shape.label() != s.label()) continue;
    if (e.selectors.empty() || selectors.empty()) {
      e.selectors.clear();
    } else {
      for (const std::string& sel : selectors) {
        if (std::find(e.selectors.begin(), e.selectors.end(), sel) == e.selectors.end()) e.selectors.push_back(sel);
      }
    }
    return;
  }
  entries.push_back({s, selectors});
}

// "[int8]", "[float8,qlinear_u8s8_u8]": the ops of a section (empty for "all").
std::vector<std::string> parse_section(const std::string& header, const std::string& where,
                                       const std::vector<std::string>& ops) {
  const std::size_t close = header.find(']');
  if (close == std::string::npos || header.find_first_not_of(" \t\r", close + 1) != std::string::npos) {
    throw Error(where + ": expected a section header \"[name,...]\", got \"" + header + "\"");
  }
  std::vector<std::string> selectors;
  bool all = false;
  std::istringstream items(header.substr(1, close - 1));
  for (std::string item; std::getline(items, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    const bool known = std::find(ops.begin(), ops.end(), item) != ops.end() ||
                       std::find(std::begin(kGroups), std::end(kGroups), item) != std::end(kGroups);
    if (!known) {
      std::string names;
      for (const std::string& n : ops) names += n + ", ";
      throw Error(where + ": unknown section name \"" + item + "\" (use op names " + names +
                  "or the groups int8, float8, all)");
    }
    if (item == "all") all = true;
    selectors.push_back(item);
  }
  if (selectors.empty()) throw Error(where + ": empty section header \"" + header + "\"");
  return all ? std::vector<std::string>{} : selectors;
}

}  // namespace

std::string BenchShape::label() const {
  std::string text = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  return batches == 1 ? text : std::to_string(batches) + "x" + text;
}

bool runs_op(const ShapeEntry& e, std::string_view op_name, std::string_view op_group) {
  return e.selectors.empty() || std::find(e.selectors.begin(), e.selectors.end(), op_name) != e.selectors.end() ||
         std::find(e.selectors.begin(), e.selectors.end(), op_group) != e.selectors.end();
}

std::vector<ShapeEntry> parse_shape_lines(const std::string& text, const std::string& origin,
                                          const std::vector<std::string>& op_names) {
  std::vector<ShapeEntry> shapes;
  std::vector<std::string> section;  // every op until the first header
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] == '[') {
      section = parse_section(line.substr(first), origin + ":" + std::to_string(number), op_names);
      continue;
    }
    std::replace(line.begin(), line.end(), 'x', ' ');
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;) words.push_back(w);
    if (words.empty()) continue;
    const std::string where = origin + ":" + std::to_string(number);
    const std::optional<std::vector<int64_t>> d = parse_dims(words);
    if (!d) {
      throw Error(where + ": expected \"M K N\" or \"B M K N\" (three or four positive integers), got \"" + line +
                  "\"");
    }
    add_shape(shapes, checked_shape(*d, where), section);
  }
  if (shapes.empty()) throw Error(origin + ": no shapes");
  return shapes;
}

std::vector<ShapeEntry> parse_shape_list(const std::string& list) {
  std::vector<ShapeEntry> shapes;
  std::istringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    std::vector<std::string> parts;
    std::istringstream dims(item);
    for (std::string p; std::getline(dims, p, 'x');) parts.push_back(p);
    const std::optional<std::vector<int64_t>> d =
        item.empty() || item.back() == 'x' ? std::nullopt : parse_dims(parts);
    if (!d) {
      throw Error("--shapes: '" + list +
                  "' is neither an existing file nor a list of MxKxN or BxMxKxN shapes (e.g. "
                  "1x4096x4096,12x197x64x197)");
    }
    add_shape(shapes, checked_shape(*d, "--shapes " + item), {});
  }
  if (shapes.empty()) throw Error("--shapes: empty list");
  return shapes;
}

std::vector<ShapeEntry> load_shapes(const std::string& arg, const std::vector<std::string>& op_names) {
  if (arg.empty()) return parse_shape_lines(cli::kDefaultBenchShapes, "built-in bench/shapes.txt", op_names);
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) {
    std::ifstream in(arg, std::ios::binary);
    if (!in) throw Error("--shapes: cannot read '" + arg + "'");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_shape_lines(text.str(), arg, op_names);
  }
  return parse_shape_list(arg);
}

}  // namespace qmatmul::bench
