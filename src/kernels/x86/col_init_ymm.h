// The kernel contract's col_init for the 256-bit (ymm) int8 tiles, shared by
// the AVX2 and AVX-VNNI kernel files: each compiles its own copy with its
// own flags (internal linkage). The accumulators start from col_init (every
// row the same 16 values) instead of zero, so the sum costs nothing in the
// k loop. Two other places were measured slower: adding it at the final
// store made GCC 12 keep the 12 accumulators in memory through the whole k
// loop (the 16 ymm registers are all taken), at half the speed; a second
// pass over the stored tile made AVX2 MatMulInteger calls whose tiles go
// straight into the output 20-28% slower (the reload waits on the stores).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace qmatmul::kernels {
namespace {

// acc[i][0..1] = col_init[0..15] for every row i, or zero without col_init.
template <int MR>
inline void init_acc_ymm(const int32_t* col_init, __m256i (&acc)[MR][2]) {
  __m256i init0 = _mm256_setzero_si256(), init1 = _mm256_setzero_si256();
  if (col_init != nullptr) {
    init0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init));
    init1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init + 8));
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = init0;
    acc[i][1] = init1;
  }
}

}  // namespace
}  // namespace qmatmul::kernels
