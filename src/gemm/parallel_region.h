// One parallel region per call, or none: every GEMM path runs its tasks
// through run_tasks_region, whose body holds the per-thread state and an
// orphaned `#pragma omp for` over the tasks. With more than one thread and
// more than one task the body runs on an OpenMP team; otherwise the caller
// runs it alone, outside any region, and the orphaned loop then runs all
// tasks in order with no team and no barrier (or, when the caller is itself
// inside an OpenMP region, in a team of one, as before).
//
// Why not `#pragma omp parallel if (...)`: a region whose `if` is false
// still builds a team of one, and libgomp ends its worksharing loop and the
// region with team barriers whose last arrival wakes waiters by a futex
// system call, even when nobody waits. On this kind of virtual machine each
// such call costs about a microsecond: measured, a 1-thread 8 x 64 x 32
// MatMulInteger call (qmatmul bench) took 3.2 us inside the region and
// 0.53 us without (oneDNN: 0.55 us). With two threads the task loops keep
// their closing barrier: made `nowait`, the raw-B path at 7 x 4096 x 4096
// ran 8-11% slower at 2 threads (6 interleaved rounds, none faster),
// though the region's own barrier follows at once; the cause is unknown.
//
// The int8 task loops are `schedule(static)`: a thread then takes the same
// tasks on every call of the same shape, and finds its B columns, A rows
// and output lines still in its own caches; with `dynamic, 1` a task moved
// between the cores from call to call, and its lines with it (this VM
// does not expose its cache topology; vCPUs that share no cache level
// would explain the size of the effect). Measured at 2 threads,
// static against dynamic (qmatmul bench without oneDNN, interleaved
// rounds): the default shapes with M >= 16 +1-13% (4 rounds, 20 of 24
// rows ahead), the raw-B path at M = 1..16 +2-29% (6 rounds, 14 of 14
// rows ahead, 5-6 wins each), 128x256x256 packed 29-32 us -> 18-22 us.
// Every task is still computed by one thread, so results do not change.
//
// Include only from sources compiled with OpenMP (the library's are).
#pragma once

#include <omp.h>

#include <cstdint>

namespace qmatmul::gemm {

// The threads a call with `work` units uses: one per work_per_thread units,
// at least 1, at most `threads`; all `threads` when work_per_thread is 0
// (Options::min_macs_per_thread).
inline int threads_for_work(int threads, double work, int64_t work_per_thread) {
  if (work_per_thread <= 0 || threads <= 1) return threads < 1 ? 1 : threads;
  const double useful = work / static_cast<double>(work_per_thread);
  return useful >= threads ? threads : useful < 1 ? 1 : static_cast<int>(useful);
}

// Runs body() on `threads` OpenMP threads when threads > 1 and tasks > 1,
// else once on the calling thread: directly when it is outside any OpenMP
// region (body's `#pragma omp for` loops then run every task in order),
// or in a region of one thread when the caller is inside a region of its
// own (tests/test_differential_driver.cpp: DifferentialThreads).
template <typename Body>
void run_tasks_region(int threads, int64_t tasks, const Body& body) {
  if (threads > 1 && tasks > 1) {
#pragma omp parallel num_threads(threads)
    body();
  } else if (omp_get_level() == 0) {
    body();
  } else {
    // Called from inside the caller's own region: orphaned loops would bind
    // to the caller's team, whose other threads are not in this call (they
    // would wait for each other forever). A team of one of our own instead.
#pragma omp parallel num_threads(1)
    body();
  }
}

}  // namespace qmatmul::gemm
