// The qmatmul command-line program's subcommands. Each lives in its own file
// (tools/cmd_<name>.cpp) and registers itself on the CLI11 app; main.cpp only
// wires them together and turns errors into one stderr line and exit 1.
#pragma once

#include <CLI/CLI.hpp>

namespace qmatmul::cli {

// Each function adds one subcommand to `app` with its options and callback.
// A callback reports failure by throwing (qmatmul::Error or std::exception),
// or by throwing CLI::RuntimeError(code) for a plain non-zero exit.
void add_run_command(CLI::App& app);        // cmd_run.cpp
void add_onnx_test_command(CLI::App& app);  // cmd_onnx_test.cpp
void add_info_command(CLI::App& app);       // cmd_info.cpp
void add_demo_command(CLI::App& app);       // cmd_demo.cpp
void add_bench_command(CLI::App& app);      // cmd_bench.cpp

}  // namespace qmatmul::cli
