// The measured cost of a two-thread OpenMP region and the work per thread
// it implies (thread_cost.h). The measurement runs once per process, at the
// first operator call whose work could take a second thread, so small calls
// and one-thread programs never pay it; it times 33 empty regions after 8
// that start the team (the team's start, several milliseconds on some VMs,
// is paid by the first two-thread call anyway), about 0.1 ms in all.
#include "gemm/thread_cost.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <vector>

namespace qmatmul::gemm {
namespace {

double measure_region_cost_us() {
  constexpr int kWarmup = 8, kTimed = 33;
  std::atomic<int> sink{0};
  const auto region = [&] {
#pragma omp parallel num_threads(2)
    sink.fetch_add(1, std::memory_order_relaxed);
  };
  for (int i = 0; i < kWarmup; ++i) region();
  std::vector<double> us;
  us.reserve(kTimed);
  for (int i = 0; i < kTimed; ++i) {
    const auto start = std::chrono::steady_clock::now();
    region();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + kTimed / 2, us.end());
  return us[kTimed / 2];
}

}  // namespace

double parallel_region_cost_us() {
  static std::atomic<double> cost{-1.0};  // -1: not measured yet
  static std::mutex measuring;
  double known = cost.load(std::memory_order_acquire);
  if (known >= 0.0) return known;
  if (omp_get_num_procs() < 2) {
    cost.store(0.0, std::memory_order_release);
    return 0.0;
  }
  // Inside a parallel region a nested one would be a team of one: nothing
  // to measure, and nothing kept.
  if (omp_get_level() > 0) return 0.0;
  const std::lock_guard<std::mutex> lock(measuring);
  known = cost.load(std::memory_order_acquire);
  if (known < 0.0) {
    known = measure_region_cost_us();
    cost.store(known, std::memory_order_release);
  }
  return known;
}

int64_t work_per_thread_for_region_cost(int64_t configured, double region_cost_us) {
  if (configured <= 0 || !(region_cost_us > 0.0)) return configured;
  const double measured = std::min(kUnitsPerRegionMicrosecond * region_cost_us, 1e15);
  return std::max(configured, static_cast<int64_t>(std::llround(measured)));
}

}  // namespace qmatmul::gemm
