// The AMX int8 microkernel: the fastest path on CPUs with AMX-INT8 (Xeon
// Sapphire Rapids and later). One tdpbusd multiplies a 16 x 64 tile of u8
// A' by a 16 x 64-byte tile of s8 B' (16 k-groups of 4 bytes for 16
// columns) into a 16 x 16 tile of int32 sums, 16384 exact multiply-adds
// summed wrapping, never saturating, as vpdpbusd does; per core it runs
// about eight times the multiply-adds of AVX-512 VNNI.
//
//  * u8s8_32x32c4__amx: a 32 x 32 tile as four accumulator tiles (tmm0-3),
//    each k step of 64 loading two A tiles (rows 0-15, 16-31) and two B
//    tiles (columns 0-15, 16-31) and issuing four tdpbusd.
//  * u8s8_16x32c4__amx: its upper half (tmm0-1, one A tile), for calls of
//    8 to 16 rows and the last 8 to 16 rows of a block, where the 32-row
//    tile would spend half or more of its work on padding rows.
//  * Both read uint8 A in place too (tile_a_in_place), with the tile
//    loads' row stride set to A's: no packing pass when nothing needs the
//    row sums. Not int8 A, which needs the +128 shift that a tile load
//    cannot apply (a_in_place_int8 = false: the driver packs it), and only
//    up to K = 200 (a_in_place_max_k). Measured against packed A (3
//    interleaved rounds, 1 / 2 threads, unpacked and packed B, MatMulInteger
//    / QLinear u8): 12 batches of 128 x 128 x 64 1.11-1.19 / 1.02-1.25, of
//    197 x 197 x 64 1.09-1.22 / 1.03-1.12; 128 x 256 x 1024 1.01-1.16 /
//    0.83-0.93; from K = 1024 0.80-0.87 (2048^3), where 16 rows 2 KB apart
//    per tile load ran slower than the packed blocks' contiguous 1 KB.
//  * Their requantizing form (tile_requant), for QLinearMatMul: the tile
//    stored to a 4 KB buffer on the stack, each row requantized from there
//    (requant_row_avx512.h) straight into the output, without the driver's
//    tile buffer and epilogue call. Packed A or uint8 A in place.
//
// B is the AVX-512 VNNI kernels' panel (NR = 32, KR = 4, bytes): a k-group
// of the panel is 128 bytes, so a B tile is 16 k-groups read with a stride
// of 128, its columns 0-15 at offset 0 and 16-31 at 64. So one PackedB
// serves this kernel and the AVX-512 VNNI kernels that take the few-row
// calls and the last rows of a block. A is packed for this kernel with a
// k-group of 64 (Int8GemmKernel::a_kr): a block's k step s holds its 32 rows
// of 64 bytes back to back, zero padded past K, so each A tile is 1 KB read
// with a stride of 64. When the k-groups are not a multiple of 16, the last
// step's B tile comes from a 2 KB copy on the stack with zero rows past the
// panel's end: no read leaves the panel, and A's zero padding meets zeros.
//
// The tile configuration (palette 1, eight 16 x 64-byte tiles) is the
// kernel's `begin` (int8_kernel.h), loaded once per thread and parallel
// region by the driver, not checked per call: other code in the process,
// oneDNN for one, configures the tiles its own way between our calls, but
// not within one. The OS must have granted the process the tile state
// (cpu_features.cpp asks for it).
#include <cstdint>
#include <cstring>

#include "kernels/int8_kernel.h"
#include "kernels/x86/x86_kernels_extra.h"

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AVX512F__)
// GCC 12 reports its own _mm512_undefined_* helpers (self-initialised) as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include "kernels/x86/requant_row_avx512.h"

namespace qmatmul::kernels {
namespace {

constexpr int kNr = 32, kKr = 4, kAKr = 64;
constexpr int64_t kInPlaceMaxK = 200;  // Int8GemmKernel::a_in_place_max_k
constexpr int kGroupsPerStep = kAKr / kKr;                   // 16 k-groups of B per tdpbusd
constexpr int64_t kBStepBytes = kGroupsPerStep * kNr * kKr;  // 2048: one k step of a B panel

// The memory form of a tile configuration (ldtilecfg / sttilecfg).
struct alignas(64) TileConfig {
  uint8_t palette = 0, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64);

TileConfig our_config() {
  TileConfig c;
  c.palette = 1;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}

// Int8GemmKernel::begin: this thread's tiles as the kernel uses them.
void load_tile_config() {
  static const TileConfig ours = our_config();
  _tile_loadconfig(&ours);
}

// Where a tile call reads A: packed (a block's k step s holds its rows of
// 64 bytes back to back) or in place (uint8 A, row-major, rows lda bytes
// apart: k step s is 64 bytes at s * 64 of each row).
struct ATiles {
  const unsigned char* a;
  int64_t lda;  // 0: packed
  template <int kRows>
  const unsigned char* step(int64_t s) const { return lda == 0 ? a + s * kRows * kAKr : a + s * kAKr; }
  int64_t stride() const { return lda == 0 ? kAKr : lda; }
  int64_t second_half() const { return 16 * stride(); }  // rows 16-31 after rows 0-15
};

// One k step of the kRows x 32 tile (kRows = 16 or 32): A's kRows rows x 64
// bytes at a (rows a_stride apart, rows 16-31 a_half after rows 0-15), B's
// 16 k-groups of the 32-column panel at b.
template <int kRows>
inline void k_step(const unsigned char* a, int64_t a_stride, int64_t a_half, const unsigned char* b) {
  _tile_loadd(4, a, a_stride);
  _tile_loadd(6, b, kNr * kKr);
  _tile_loadd(7, b + 64, kNr * kKr);
  _tile_dpbusd(0, 4, 6);
  _tile_dpbusd(1, 4, 7);
  if constexpr (kRows == 32) {
    _tile_loadd(5, a + a_half, a_stride);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
}

// The kRows x 32 tile: tmm0 rows 0-15 x columns 0-15, tmm1 rows 0-15 x
// 16-31, and for 32 rows tmm2 rows 16-31 x 0-15, tmm3 rows 16-31 x 16-31;
// tmm4-5 A, tmm6-7 B. A in place: the last, partial k step copies the
// rows' remaining k-groups (all the call reads of them: kgroups * 4 bytes
// a row) into a zero-padded buffer, as it does B's.
template <int kRows>
void tile_sums(int64_t kgroups, ATiles a, const void* packed_b, const int32_t* col_init, int32_t* c, int64_t ldc) {
  static_assert(kRows == 16 || kRows == 32);
  const auto* b = static_cast<const unsigned char*>(packed_b);
  if (col_init != nullptr) {  // every row starts from col_init: a row stride of 0
    _tile_loadd(0, col_init, 0);
    _tile_loadd(1, col_init + 16, 0);
    if constexpr (kRows == 32) {
      _tile_loadd(2, col_init, 0);
      _tile_loadd(3, col_init + 16, 0);
    }
  } else {
    _tile_zero(0);
    _tile_zero(1);
    if constexpr (kRows == 32) {
      _tile_zero(2);
      _tile_zero(3);
    }
  }
  const int64_t full_steps = kgroups / kGroupsPerStep;
  for (int64_t s = 0; s < full_steps; ++s)
    k_step<kRows>(a.step<kRows>(s), a.stride(), a.second_half(), b + s * kBStepBytes);
  if (const int64_t rest = kgroups - full_steps * kGroupsPerStep; rest > 0) {
    alignas(64) unsigned char last_b[kBStepBytes];
    const auto rest_bytes = static_cast<std::size_t>(rest * kNr * kKr);
    std::memcpy(last_b, b + full_steps * kBStepBytes, rest_bytes);
    std::memset(last_b + rest_bytes, 0, sizeof last_b - rest_bytes);
    if (a.lda == 0) {
      k_step<kRows>(a.step<kRows>(full_steps), kAKr, 16 * kAKr, last_b);
    } else {
      alignas(64) unsigned char last_a[kRows * kAKr] = {};
      for (int i = 0; i < kRows; ++i)
        std::memcpy(last_a + i * kAKr, a.step<kRows>(full_steps) + i * a.lda, static_cast<std::size_t>(rest * kKr));
      k_step<kRows>(last_a, kAKr, 16 * kAKr, last_b);
    }
  }
  const int64_t stride = ldc * static_cast<int64_t>(sizeof(int32_t));
  _tile_stored(0, c, stride);
  _tile_stored(1, c + 16, stride);
  if constexpr (kRows == 32) {
    _tile_stored(2, c + 16 * ldc, stride);
    _tile_stored(3, c + 16 * ldc + 16, stride);
  }
}

template <int kRows>
void tile_mx32(int64_t kgroups, const void* packed_a, const void* packed_b, const int32_t* col_init, int32_t* c,
               int64_t ldc, const void* /*prefetch*/) {
  tile_sums<kRows>(kgroups, ATiles{static_cast<const unsigned char*>(packed_a), 0}, packed_b, col_init, c, ldc);
}

// uint8 A in place (a_flip 0 only: Int8GemmKernel::a_in_place_int8 is false).
template <int kRows>
void tile_mx32_a_in_place(int64_t kgroups, const void* a, int64_t lda, uint8_t /*a_flip: 0*/, const void* packed_b,
                          const int32_t* col_init, int32_t* c, int64_t ldc, const void* /*prefetch*/) {
  tile_sums<kRows>(kgroups, ATiles{static_cast<const unsigned char*>(a), lda}, packed_b, col_init, c, ldc);
}

template <int kRows>
void tile_requant_mx32(int64_t kgroups, const void* a, int64_t lda, uint8_t /*a_flip: 0*/, const void* packed_b,
                       const int32_t* col_init, const RequantParams& rq, void* y, int64_t ldy,
                       const void* /*prefetch*/) {
  alignas(64) int32_t c[kRows * kNr];
  tile_sums<kRows>(kgroups, ATiles{static_cast<const unsigned char*>(a), lda}, packed_b, col_init, c, kNr);
  const RequantRowVectors v = load_requant_row_vectors(rq);
  auto* out = static_cast<unsigned char*>(y);
  with_requant_flags(rq, [&]<bool kExactProduct, bool kBounded>() {
    for (int i = 0; i < kRows; ++i) {
      const int32_t* row = c + i * kNr;
      const __m256i words[4] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(row)),
                                _mm256_load_si256(reinterpret_cast<const __m256i*>(row + 8)),
                                _mm256_load_si256(reinterpret_cast<const __m256i*>(row + 16)),
                                _mm256_load_si256(reinterpret_cast<const __m256i*>(row + 24))};
      requantize_row32<kExactProduct, kBounded>(words, v, out + i * ldy);
    }
  });
}

const Int8GemmKernel k32x32 = {"u8s8_32x32c4__amx", Isa::Amx, 32, kNr, kKr, Widening::Bytes, tile_mx32<32>,
                                nullptr, tile_mx32_a_in_place<32>, tile_requant_mx32<32>, nullptr, nullptr, kAKr,
                                load_tile_config, false, kInPlaceMaxK};
const Int8GemmKernel k16x32 = {"u8s8_16x32c4__amx", Isa::Amx, 16, kNr, kKr, Widening::Bytes, tile_mx32<16>,
                                nullptr, tile_mx32_a_in_place<16>, tile_requant_mx32<16>, nullptr, nullptr, kAKr,
                                load_tile_config, false, kInPlaceMaxK};

}  // namespace

const Int8GemmKernel* int8_kernel_amx() { return &k32x32; }
const Int8GemmKernel* int8_kernel_amx_16_rows() { return &k16x32; }

}  // namespace qmatmul::kernels

#else  // compiled without AMX: the getter reports "not compiled"

namespace qmatmul::kernels {
const Int8GemmKernel* int8_kernel_amx() { return nullptr; }
const Int8GemmKernel* int8_kernel_amx_16_rows() { return nullptr; }
}  // namespace qmatmul::kernels

#endif
