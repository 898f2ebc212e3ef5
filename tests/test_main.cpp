// GoogleTest entry point. When QMATMUL_ISA forces an instruction-set path
// this build lacks or this CPU cannot run, the run exits with code 77, which
// CTest reports as skipped (visibly, never as passed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "kernels/dispatch.h"
#include "qmatmul/types.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    const auto& d = qmatmul::kernels::dispatch();
    std::cout << "int8 kernel: " << d.chosen->kernel->name << " (" << d.reason << ")\n";
  } catch (const qmatmul::Error& e) {
    std::cout << "SKIPPED: " << e.what() << "\n";
    return 77;
  }
  return RUN_ALL_TESTS();
}
