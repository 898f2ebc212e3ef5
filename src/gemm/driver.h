// The int8 GEMM driver: blocking, A packing, threading and the per-tile
// kernel + epilogue loop. Shape logic lives here and nowhere below it.
#pragma once

#include "gemm/problem.h"

namespace qmatmul::gemm {

// Computes every output batch of `p`: B already packed for p.kernel's layout
// (p.b), or raw (p.b_raw), packed inside the tasks (or, for M <= 16 on
// AVX-512 VNNI, read in place: raw_b_small_m.h). Results do not depend on
// p.threads, nor on how B arrives.
void run_int8_gemm(const GemmProblem& p);

// Whether a call with an unpacked B should let the tasks pack it (p.b_raw)
// rather than packing it whole first: true when every B matrix is used by
// one output batch and the rows fit one row block, so each panel is packed
// once, right before the kernel reads it from cache, and the packed copy
// never travels to memory and back.
bool pack_b_in_tasks(const kernels::Int8GemmKernel& kernel, int64_t M, int64_t K, int64_t batches,
                     int64_t b_batches);

}  // namespace qmatmul::gemm
