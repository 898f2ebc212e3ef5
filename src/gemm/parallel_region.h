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
// 0.53 us without (oneDNN: 0.55 us). With two threads the int8 driver's
// task loop is `nowait`, since the region's own barrier follows at once:
// timed inside the region, a call's fork took 1-2 us and its join 3.2-3.6
// us after the last task, and dropping the loop's barrier saved 1.3-2 us a
// call (a 2 x 8 x 64 x 64 call forced onto two threads: 6.8-7.1 us against
// 8.2-10.2); qmatmul bench, two threads, no oneDNN, MatMulInteger and
// QLinear u8, unpacked and packed, 6-7 interleaved rounds: 12 x 128 x 64
// x 128 0.99-1.12 (medians), 64 x 32 x 64 x 64 1.00-1.38, 16 x 32 x 128 x
// 128 1.05-1.28, 64 x 256 x 512 0.93-1.20, 128 x 768 x 768 0.99-1.14,
// 128 x 4096 x 4096 0.99-1.05. The raw-B path's loop keeps its barrier:
// made `nowait`, 7 x 4096 x 4096 ran 8-11% slower at 2 threads (6
// interleaved rounds, none faster); the cause is unknown.
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

#include <algorithm>
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

// Column blocks for the static schedule, which hands each thread a run of
// ceil(tasks / threads) consecutive tasks and cannot move work afterwards:
// with `row_tasks` tasks per column block, the count of blocks is at least
// `wanted` and then grows (up to `units`, the indivisible pieces of the
// columns) until row_tasks * blocks is a multiple of `threads`, and
// balanced_block_begin() cuts the units into blocks that differ by at most
// one unit. Before, blocks were of one fixed width with a short last one,
// and their count was whatever the width gave: at 2 threads an odd count
// left one thread with a block more than the other, and a short last
// block sat alone on the second thread (16 x 4096 x 4160 on the raw-B
// path: blocks of 2048, 2048 and 64 columns, the first two on one thread).
// Measured against that, QLinear u8 without oneDNN, 2 threads, 4
// interleaved rounds, unpacked / packed B: 16 x 4096 x 4160 1.80-1.89 /
// 1.06-1.11, 1 x 4096 x 4160 1.88 / 0.99, 8 x 4096 x 5120 1.31 / 1.10,
// 4 x 4096 x 3072 1.11 / 0.99, 24 x 2048 x 1056 1.03 / 1.13, 2 x 1024 x
// 2048 1.14 / 1.11; 128 x 768 x 800 (8 rounds, QLinear and MatMulInteger)
// 1.15-1.19 / 1.16-1.20. The bench's shapes, whose blocks were already
// even, read 0.94-1.07 (128 x 768 x 768 in 8 rounds: 0.99-1.00).
inline int64_t balanced_block_count(int64_t wanted, int64_t row_tasks, int threads, int64_t units) {
  int64_t blocks = std::max<int64_t>(1, std::min(wanted, units));
  while ((row_tasks * blocks) % threads != 0 && blocks < units) ++blocks;
  return blocks;
}

// The first unit of block b (0 <= b <= blocks; b = blocks gives `units`).
inline int64_t balanced_block_begin(int64_t b, int64_t blocks, int64_t units) { return b * units / blocks; }

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
