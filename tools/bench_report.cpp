// `qmatmul bench`'s timing loop and row output (see bench_report.h). Timing
// uses the steady clock around batches of calls, sized from the fastest
// warm-up call so each sample lasts about min_time/40; the reported time is
// a side's median seconds per call. Numbers are printed with printf formats
// (%.6g in JSON, fixed digits per table column).
#include "bench_report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <utility>

namespace qmatmul::bench {
namespace {

using Clock = std::chrono::steady_clock;

double time_calls(const std::function<void()>& fn, int64_t calls) {
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < calls; ++i) fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

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

}  // namespace

// ---- timing -------------------------------------------------------------

double Side::median() const {
  std::vector<double> s = samples;
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
  return std::max(s[s.size() / 2], 1e-12);
}

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

std::string json_row(const Row& r) {
  auto num = [](const std::optional<double>& v) { return v ? fmt("%.6g", *v) : std::string("null"); };
  std::ostringstream o;
  o << "{\"op\":" << json_string(r.op) << ",\"batches\":" << r.shape.batches << ",\"M\":" << r.shape.m
    << ",\"K\":" << r.shape.k << ",\"N\":" << r.shape.n << ",\"threads\":" << r.threads
    << ",\"packed\":" << (r.packed ? "true" : "false")
    << ",\"kernel\":" << json_string(r.kernel) << ",\"ms\":" << fmt("%.6g", r.ms)
    << ",\"gops\":" << fmt("%.6g", r.gops)
    << ",\"peak_pct\":" << (r.peak_pct ? fmt("%.4g", *r.peak_pct) : std::string("null"))
    << ",\"peak_gops_per_core\":" << num(r.peak_gops_per_core)
    << ",\"reps\":" << r.reps << ",\"onednn_gops\":" << num(r.onednn_gops)
    << ",\"onednn_ms\":" << num(r.onednn_ms) << ",\"ratio\":" << num(r.ratio)
    << ",\"onednn_impl\":" << (r.onednn_gops ? json_string(r.onednn_impl) : "null")
    << ",\"onednn_max_diff\":" << (r.max_diff ? std::to_string(*r.max_diff) : "null")
    << ",\"matmulinteger_gops\":" << num(r.matmulinteger_gops) << ",\"fusion_cost\":" << num(r.fusion_cost)
    << ",\"verified\":" << (r.verified ? (*r.verified ? "true" : "false") : "null")
    << ",\"onednn_exact\":" << (r.onednn_exact ? (*r.onednn_exact ? "true" : "false") : "null") << "}";
  return o.str();
}

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
  return {r.op, std::to_string(r.shape.batches), std::to_string(r.shape.m), std::to_string(r.shape.k),
          std::to_string(r.shape.n), std::to_string(r.threads), r.packed ? "yes" : "no", r.kernel,
          fmt("%.4g", r.ms), fmt("%.1f", r.gops),
          r.peak_pct ? fmt("%.1f", *r.peak_pct) : "-", r.onednn_gops ? fmt("%.1f", *r.onednn_gops) : "-",
          r.ratio ? fmt("%.2f", *r.ratio) + (r.onednn_exact == false ? "*" : "") : "-", r.max_diff ? std::to_string(*r.max_diff) : "-",
          r.fusion_cost ? fmt("%.3f", *r.fusion_cost) : "-",
          std::to_string(r.reps), r.onednn_gops ? r.onednn_impl : "-"};
}

}  // namespace qmatmul::bench
