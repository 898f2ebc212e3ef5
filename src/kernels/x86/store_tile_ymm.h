// The store at the end of the 256-bit (ymm) int8 tiles, shared by the AVX2
// and AVX-VNNI kernel files: each compiles its own copy with its own flags
// (internal linkage). MR rows of two ymm of int32 each (NR = 16), plus the
// kernel contract's col_init in every row when given (int8_kernel.h).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace qmatmul::kernels {
namespace {

template <int MR>
inline void store_tile_ymm(__m256i (&acc)[MR][2], const int32_t* col_init, int32_t* c, int64_t ldc) {
  if (col_init != nullptr) {
    const __m256i init0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init));
    const __m256i init1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col_init + 8));
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc[i][0] = _mm256_add_epi32(acc[i][0], init0);
      acc[i][1] = _mm256_add_epi32(acc[i][1], init1);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc), acc[i][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc + 8), acc[i][1]);
  }
}

}  // namespace
}  // namespace qmatmul::kernels
