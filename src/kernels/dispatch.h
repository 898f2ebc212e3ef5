// Kernel dispatch: which int8 microkernel runs, chosen once per process from
// what was compiled and what the CPU can run, best first, unless the
// QMATMUL_ISA environment variable (portable|avx2|avxvnni|avx512bw|avx512vnni|amx) forces
// a path. `qmatmul info` prints the table this builds.
#pragma once

#include <string>
#include <vector>

#include "kernels/int8_kernel.h"

namespace qmatmul::kernels {

// One row per ISA, best first: was it compiled, can the CPU run it, and the
// kernel if both hold.
struct IsaStatus {
  Isa isa;
  bool compiled = false;
  bool cpu_supports = false;
  const Int8GemmKernel* kernel = nullptr;      // main tile kernel (null unless usable)
  const Int8GemmKernel* small_m = nullptr;     // optional kernel for M <= small_m->mr
  // Optional: the smallest kernel with mr >= m (same B layout), or nullptr.
  const Int8GemmKernel* (*small_m_for)(int m) = nullptr;
};

struct Dispatch {
  std::vector<IsaStatus> table;   // every ISA, best first
  const IsaStatus* chosen = nullptr;
  std::string reason;             // why `chosen` was picked ("best available", "QMATMUL_ISA=avx2")
};

// Whether this CPU can run `isa` (src/cpu's detection; the table's
// cpu_supports column), whatever QMATMUL_ISA says.
bool cpu_supports(Isa isa);

// Built on first use (thread-safe). Throws qmatmul::Error when QMATMUL_ISA
// names an unknown path or one that was not compiled or cannot run here.
const Dispatch& dispatch();

// The kernel the driver uses for a problem with `m` rows per batch and a
// reduction of k. Under AMX, the AVX-512 VNNI kernels up to 8 rows while
// k < kAmxFewRowsMinK (int8_kernel_for in dispatch.cpp).
const Int8GemmKernel& int8_kernel_for(int64_t m, int64_t k);
inline constexpr int64_t kAmxFewRowsMinK = 256;

// The kernel for the last row tile of a block when it has only `rows`
// (1 <= rows < k.mr) rows: the small-M kernel of k's instruction set with
// the fewest rows >= `rows`, if that is fewer than k.mr and it reads the same
// B packing (NR, KR, widening); nullptr otherwise, and then k runs the tile
// with zero-padded rows. Without it, M = 17 on an 8-row kernel computes 24
// rows.
const Int8GemmKernel* int8_tail_kernel_for(const Int8GemmKernel& k, int64_t rows);

}  // namespace qmatmul::kernels
