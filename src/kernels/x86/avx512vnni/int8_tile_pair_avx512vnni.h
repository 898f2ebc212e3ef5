// The AVX-512 VNNI two-panel tiles (int8_tile_pair_avx512vnni.cpp): MR x 64
// from two adjacent packed B panels, the Int8GemmKernel::tile_pair of the
// 1- to 6-row kernels in int8_tile_avx512vnni.cpp. Both files are compiled
// with the same flags; without AVX-512 VNNI neither defines nor refers to
// these functions.
#pragma once

#include <cstdint>

#include "kernels/int8_kernel.h"

namespace qmatmul::kernels::avx512vnni {

// MR = 1..6 (instantiated in the .cpp); the Int8TilePairFn contract.
template <int MR>
void tile_pair(int64_t kgroups, const void* packed_a, const void* packed_b, int64_t panel_stride,
               const int32_t* col_init, int32_t* c, int64_t ldc);

}  // namespace qmatmul::kernels::avx512vnni
