// Entry point of the `qmatmul` program: builds the CLI11 app from the
// subcommands in tools/cmd_*.cpp and maps every failure to one line on stderr
// and exit code 1 (never a crash or an uncaught exception).
#include <exception>
#include <iostream>

#include "commands.h"
#include "qmatmul/qmatmul.h"

int main(int argc, char** argv) {
  CLI::App app{"qmatmul: exact, fast ONNX MatMulInteger and QLinearMatMul"};
  app.set_version_flag("--version", qmatmul::version());
  app.require_subcommand(1);
  qmatmul::cli::add_run_command(app);
  qmatmul::cli::add_onnx_test_command(app);
  qmatmul::cli::add_info_command(app);
  qmatmul::cli::add_demo_command(app);
  qmatmul::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    std::cerr << "qmatmul: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "qmatmul: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
