// Parameter rows for the vectorized tile epilogues (epilogue_avx2.cpp,
// epilogue_avx512.cpp): a zero point or scale row of a tile's columns as a
// contiguous array the epilogue can load vectors from. Plain C++ with
// internal linkage: each epilogue file compiles its own copy with its own
// instruction-set flags, and the fixed-width fill loop below vectorizes to
// that file's vector width.
#pragma once

#include <cstdint>

#include "gemm/epilogue.h"
#include "gemm/problem.h"

namespace qmatmul::gemm {
namespace {

constexpr int kMaxCols = 256;  // the widest tile an epilogue serves

// Row i's values for columns [j0, j0 + cols): the parameter itself when its
// columns are contiguous, else copied into `buffer` (kMaxCols values). A
// value shared by all columns (stride 0) is written in whole blocks of 16,
// up to the next multiple of 16, so full-vector loads may read them.
template <typename T>
const T* row_values(const ParamSpan<T>& p, int64_t batch, int64_t i, int64_t j0, int cols, T* buffer) {
  const T* first = p.at(batch, i, j0);
  if (p.col_stride == 1) return first;
  if (p.col_stride == 0) {
    const T value = *first;
    for (int j = 0; j < cols; j += 16)
      for (int l = 0; l < 16; ++l) buffer[j + l] = value;
    return buffer;
  }
  for (int j = 0; j < cols; ++j) buffer[j] = first[j * p.col_stride];
  return buffer;
}

// The column sums a general (unprepared) path applies: for a tile of final
// sums (Tile::final_sums, where every zb' = 0) the only term, -za' * colsum,
// is already in acc, so it applies zero sums and C = acc.
inline const int32_t* column_sums_to_apply(const Tile& t, const int32_t* col_sums) {
  static const int32_t kZeroSums[kMaxCols] = {};
  return t.final_sums ? kZeroSums : col_sums;
}

}  // namespace
}  // namespace qmatmul::gemm
