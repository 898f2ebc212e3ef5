// The int8 GEMM driver: blocking, A packing, threading and the per-tile
// kernel + epilogue loop. Shape logic lives here and nowhere below it.
#pragma once

#include "gemm/problem.h"

namespace qmatmul::gemm {

// Computes every output batch of `p`. B must already be packed for the
// kernel stored in p.b->kernel. Results do not depend on p.threads.
void run_int8_gemm(const GemmProblem& p);

}  // namespace qmatmul::gemm
