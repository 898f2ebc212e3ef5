// The float8 GEMM's AVX-512 BF16 register tile: up to 8 rows x 32 columns of
// float32 accumulators, one vdpbf16ps per pair of k and 16 columns. The only
// code compiled with -mavx512bf16; the driver that packs its operands and
// requantizes its results is float8_gemm_avx512.cpp, and the path choice
// (with a probe of the instruction's rounding order) is float8_gemm.cpp.
// Layouts and the summation order: float8_bf16_tile.h, float8_gemm.h.
#include "gemm/x86/float8_bf16_tile.h"

#if defined(__AVX512F__) && defined(__AVX512BF16__)
// GCC 12 reports its own _mm512_undefined_* helpers as "maybe uninitialized".
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

namespace qmatmul::gemm::detail {
namespace {

constexpr int NR = 32;

inline __m512bh as_bh(__m512i v) {
  __m512bh r;
  std::memcpy(&r, &v, sizeof r);
  return r;
}

inline __m512i broadcast_pair(const uint16_t* p) {
  uint32_t word;
  std::memcpy(&word, p, sizeof word);
  return _mm512_set1_epi32(static_cast<int>(word));
}

template <int R>
void tile_bf16(int64_t kpairs, const uint16_t* a, int64_t lda, const uint32_t* b, float* c, int64_t ldc,
               bool first) {
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc[r][0] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc);
    acc[r][1] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + r * ldc + 16);
  }
  for (int64_t p = 0; p < kpairs; ++p) {
    const __m512bh b0 = as_bh(_mm512_load_si512(b + p * NR));
    const __m512bh b1 = as_bh(_mm512_load_si512(b + p * NR + 16));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512bh av = as_bh(broadcast_pair(a + r * lda + 2 * p));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_storeu_ps(c + r * ldc, acc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
  }
}

constexpr Bf16TileFn kTiles[kBf16TileRows + 1] = {nullptr,      tile_bf16<1>, tile_bf16<2>, tile_bf16<3>, tile_bf16<4>,
                                                  tile_bf16<5>, tile_bf16<6>, tile_bf16<7>, tile_bf16<8>};

}  // namespace

bool float8_bf16_compiled() { return true; }
const Bf16TileFn* float8_bf16_tiles() { return kTiles; }

}  // namespace qmatmul::gemm::detail

#else

namespace qmatmul::gemm::detail {
bool float8_bf16_compiled() { return false; }
const Bf16TileFn* float8_bf16_tiles() { return nullptr; }
}  // namespace qmatmul::gemm::detail

#endif
