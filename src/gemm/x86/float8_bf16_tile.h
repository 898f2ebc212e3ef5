// The AVX-512 BF16 register tile of the float8 GEMM (float8_gemm_avx512bf16.cpp),
// as seen by the AVX-512 driver (float8_gemm_avx512.cpp) and the path choice
// (float8_gemm.cpp). Layouts, both built by the driver's decoders:
//   A: bfloat16 bit patterns, row-major, row stride lda elements (even); the
//      32-bit word at column 2p holds the pair (a_f[2p], a_f[2p+1]).
//   B: a panel of 32 columns: for each pair p, 32 words, word j holding
//      (b_f[2p][j], b_f[2p+1][j]) (low half, high half).
// A pair past K holds zeros on both sides. One vdpbf16ps per word adds the
// high (odd) product, then the low (even) one, each rounded once: the order
// defined in float8_gemm.h.
#pragma once

#include <cstdint>

namespace qmatmul::gemm::detail {

// rows (1..8) x 32 columns over kpairs pairs; c: float32 accumulators, row
// stride ldc; first: start from +0 instead of loading c.
using Bf16TileFn = void (*)(int64_t kpairs, const uint16_t* a, int64_t lda, const uint32_t* b, float* c,
                            int64_t ldc, bool first);

constexpr int kBf16TileRows = 8;

bool float8_bf16_compiled();
// Index = rows (1..8); entry 0 is null. Null when not compiled.
const Bf16TileFn* float8_bf16_tiles();

}  // namespace qmatmul::gemm::detail
