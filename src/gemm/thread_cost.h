// What a second thread costs on this machine, measured once: the time of an
// empty two-thread OpenMP parallel region, and from it the work a call needs
// before it takes a second thread (Options::measure_thread_cost).
//
// Why measured: the crossover between one and two threads follows the cost
// of starting and joining a team, and that cost differs between virtual
// machines of the same kind by a factor of about three. On a 2-core VM whose
// empty region took 2.6-3.4 us (medians 3.0-3.4 over six processes), two
// threads against one, calls back to back, 3 interleaved rounds, unpacked:
// 40 x 256 x 512 (5.8M units) 0.88-1.04, 48 x 256 x 512 (6.8M) 0.89-1.07,
// 96 x 256 x 256 (6.6M) 0.96-1.04, 64 x 256 x 512 (8.9M) 1.11-1.28; by
// whole batches, 64 of 8 x 64 x 64 (3.1M) 0.62-0.65, 8 of 16 x 128 x 128
// (2.6M) 0.54-0.63, 32 of 32 x 64 x 64 (4.7M) 0.95-1.12, 64 of 16 x 64 x 64
// (5.2M) 1.07-1.16, 64 of 32 x 64 x 64 (9.4M) 1.28-1.40. So there a thread
// pays from about 4M units (two threads from 8M, or 4M by whole batches),
// where the VM that set the 2M default gained from 2.6M units by whole
// batches. kUnitsPerRegionMicrosecond maps the one onto the other: 3.2 us
// gives 4M units, and a region of 1.6 us or less keeps the default.
#pragma once

#include <cstdint>

namespace qmatmul::gemm {

inline constexpr double kUnitsPerRegionMicrosecond = 1.25e6;

// The median time, in microseconds, of an empty parallel region of two
// threads (after a few to start the team), measured at the first call that
// asks and kept for the process; 0 when it cannot be measured: a single
// processor, or a first call made from inside an OpenMP parallel region
// (not kept then; a later call from outside measures it). Thread-safe.
double parallel_region_cost_us();

// The work per thread a call uses (threads_for_work): `configured`
// (Options::min_macs_per_thread), raised to kUnitsPerRegionMicrosecond x
// region_cost_us when that is larger. 0 (always every thread) stays 0, and
// a cost of 0 (not measured) leaves `configured`.
int64_t work_per_thread_for_region_cost(int64_t configured, double region_cost_us);

}  // namespace qmatmul::gemm
