// One parallel region per call, or none: every GEMM path runs its tasks
// through run_tasks_region, whose body holds the per-thread state and an
// orphaned `#pragma omp for` over the tasks. With more than one thread and
// more than one task the body runs on an OpenMP team; otherwise the caller
// runs it alone, outside any region, and the orphaned loop then runs all
// tasks in order with no team and no barrier.
//
// Why not `#pragma omp parallel if (...)`: a region whose `if` is false
// still builds a team of one, and libgomp ends its worksharing loop and the
// region with team barriers whose last arrival wakes waiters by a futex
// system call, even when nobody waits. On this kind of virtual machine each
// such call costs about a microsecond: measured, a 1-thread 8 x 64 x 32
// MatMulInteger call (qmatmul bench) took 3.2 us inside the region and
// 0.53 us without (oneDNN: 0.55 us). With two threads the loops are
// `nowait`: the region's own closing barrier is the only one.
//
// Include only from sources compiled with OpenMP (the library's are).
#pragma once

#include <cstdint>

namespace qmatmul::gemm {

// Runs body() on `threads` OpenMP threads when threads > 1 and tasks > 1,
// else once on the calling thread. body's `#pragma omp for` loops bind to
// the team, or to no team (serial) when called outside a region.
template <typename Body>
void run_tasks_region(int threads, int64_t tasks, const Body& body) {
  if (threads > 1 && tasks > 1) {
#pragma omp parallel num_threads(threads)
    body();
  } else {
    body();
  }
}

}  // namespace qmatmul::gemm
