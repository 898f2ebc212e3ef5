// The kernel contract's col_init for the 256-bit (ymm) int8 tiles, shared by
// the AVX2 and AVX-VNNI kernel files: each compiles its own copy with its
// own flags (internal linkage). Applied to the stored tile in a second pass
// over its MR x 16 values (in L1): folding it into the tile's final store
// made GCC 12 keep the 12 accumulators in memory through the whole k loop
// (the 16 ymm registers are all taken), at half the speed.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace qmatmul::kernels {
namespace {

// c[i][j] += col_init[j] (wrapping) for the MR x 16 tile at c.
template <int MR>
inline void add_col_init_ymm(const int32_t* col_init, int32_t* c, int64_t ldc) {
  const __m256i init0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init));
  const __m256i init1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init + 8));
  for (int i = 0; i < MR; ++i) {
    auto* row = reinterpret_cast<__m256i*>(c + i * ldc);
    _mm256_storeu_si256(row, _mm256_add_epi32(_mm256_loadu_si256(row), init0));
    _mm256_storeu_si256(row + 1, _mm256_add_epi32(_mm256_loadu_si256(row + 1), init1));
  }
}

}  // namespace
}  // namespace qmatmul::kernels
