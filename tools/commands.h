// The qmatmul command-line program's subcommands. Each lives in its own file
// (tools/cmd_<name>.cpp) and registers itself on the CLI11 app; main.cpp only
// wires them together and turns errors into one stderr line and exit 1.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "qmatmul/qmatmul.h"

namespace qmatmul::cli {

// --threads and --min-macs-per-thread, as `run` and `onnx-test` take them:
// Options::threads, and Options::min_macs_per_thread exactly when given
// (Options::measure_thread_cost is then off), else the library's default.
struct ThreadArgs {
  int threads = 0;
  std::optional<int64_t> min_macs_per_thread;
  void apply(Options& options) const {
    options.threads = threads;
    if (min_macs_per_thread) {
      options.min_macs_per_thread = *min_macs_per_thread;
      options.measure_thread_cost = false;
    }
  }
};
inline void add_thread_options(CLI::App* cmd, ThreadArgs& args) {
  cmd->add_option("--threads", args.threads, "Worker threads per operator call, at most (0 = all cores)")
      ->check(CLI::Range(0, 65536));
  cmd->add_option("--min-macs-per-thread", args.min_macs_per_thread,
                  "A call takes one thread per this many units of work: a multiply-add each (3 for float8), "
                  "plus 4 per byte of B (0 = always --threads). Default: " +
                      std::to_string(Options{}.min_macs_per_thread) +
                      ", raised to what this machine's measured cost of a parallel region needs "
                      "(Options::min_macs_per_thread, Options::measure_thread_cost)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 62));
}

// Each function adds one subcommand to `app` with its options and callback.
// A callback reports failure by throwing (qmatmul::Error or std::exception),
// or by throwing CLI::RuntimeError(code) for a plain non-zero exit.
void add_run_command(CLI::App& app);        // cmd_run.cpp
void add_onnx_test_command(CLI::App& app);  // cmd_onnx_test.cpp
void add_info_command(CLI::App& app);       // cmd_info.cpp
void add_demo_command(CLI::App& app);       // cmd_demo.cpp
void add_bench_command(CLI::App& app);      // cmd_bench.cpp

}  // namespace qmatmul::cli
